package io.gantry.gtid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.UUID;
import org.junit.jupiter.api.Test;

class GtidSetTest {

    private static final String MYSQL_TEXT = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:11-18";
    private static final MySqlGtidSet MYSQL = MySqlGtidSet.parse(MYSQL_TEXT);
    private static final MariaDbGtidSet MARIADB = MariaDbGtidSet.parse("0-1-5,1-2-7");

    @Test
    void parsesEachFlavour() {
        assertThat(GtidSet.parse(MYSQL_TEXT, Flavour.MYSQL)).isEqualTo(MYSQL);
        assertThat(GtidSet.parse("0-1-5,1-2-7", Flavour.MARIADB)).isEqualTo(MARIADB);
        assertThat(Gtid.parse("0-33061-47", Flavour.MARIADB)).isEqualTo(new MariaDbGtid(0, 33061, 47));
        assertThat(Gtid.parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:3", Flavour.MYSQL))
                .isEqualTo(new MySqlGtid(UUID.fromString("3e11fa47-71ca-11e1-9e33-c80aa9429562"), 3));
    }

    @Test
    void parsesEitherFlavourByItsText() {
        assertThat(GtidSet.parseAnyFlavour(MYSQL_TEXT)).isEqualTo(MYSQL);
        assertThat(GtidSet.parseAnyFlavour("0-1-5,1-2-7")).isEqualTo(MARIADB);
        assertThat(GtidSet.parseAnyFlavour("")).isSameAs(MariaDbGtidSet.EMPTY);
        assertThatThrownBy(() -> GtidSet.parseAnyFlavour("0-1-x")).hasMessageContaining("bad MariaDB GTID set");
    }

    @Test
    void emptySetsOfEachFlavour() {
        assertThat(GtidSet.empty(Flavour.MYSQL)).isSameAs(MySqlGtidSet.EMPTY);
        assertThat(GtidSet.empty(Flavour.MARIADB)).isSameAs(MariaDbGtidSet.EMPTY);
        assertThat(GtidSet.empty(Flavour.MYSQL)).isNotEqualTo(GtidSet.empty(Flavour.MARIADB));
    }

    @Test
    void aMariaDbPositionIsNotAMySqlSet() {
        assertThatThrownBy(() -> GtidSet.parse("0-1-5", Flavour.MYSQL))
                .hasMessageContaining("bad MySQL GTID set '0-1-5'");
        assertThatThrownBy(() -> GtidSet.parse(MYSQL_TEXT, Flavour.MARIADB))
                .hasMessageContaining("bad MariaDB GTID set '" + MYSQL_TEXT + "'");
    }

    @Test
    void mixingFlavoursIsRejectedNamingBoth() {
        assertThatThrownBy(() -> MYSQL.union(MARIADB))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("union: cannot mix a MySQL GTID set with a MariaDB GTID set ('" + MYSQL_TEXT
                        + "' and '0-1-5,1-2-7')");
        assertThatThrownBy(() -> MARIADB.contains(MYSQL))
                .hasMessageContaining("contains: cannot mix a MariaDB GTID set with a MySQL GTID set");
        assertThatThrownBy(() -> MARIADB.containsTransaction(Gtid.parse(MYSQL_TEXT.replace(":1-5:11-18", ":1"),
                Flavour.MYSQL))).hasMessageContaining("containsTransaction: cannot mix a MariaDB GTID set with a MySQL GTID (");
        assertThatThrownBy(() -> MYSQL.with(new MariaDbGtid(0, 1, 1)))
                .hasMessageContaining("with: cannot mix a MySQL GTID set with a MariaDB GTID ('");
        assertThatThrownBy(() -> MYSQL.contains(MariaDbGtidSet.EMPTY)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void abbreviatesLargeSetsInTheMixingMessage() {
        MySqlGtidSet large = MySqlGtidSet.EMPTY;
        for (int i = 0; i < 50; i++) {
            large = large.with(new MySqlGtid(new UUID(i, i), 1));
        }
        MySqlGtidSet finalLarge = large;
        assertThatThrownBy(() -> MARIADB.union(finalLarge)).hasMessageContaining("...'");
    }
}
