package io.gantry.gtid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.UUID;
import org.junit.jupiter.api.Test;

class MySqlGtidTest {

    private static final String UUID_TEXT = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    private static final UUID SOURCE = UUID.fromString(UUID_TEXT);

    @Test
    void parsesAndPrintsAnUntaggedGtidInLowerCase() {
        MySqlGtid gtid = MySqlGtid.parse("3E11FA47-71CA-11E1-9E33-C80AA9429562:23");

        assertThat(gtid).isEqualTo(new MySqlGtid(SOURCE, 23));
        assertThat(gtid.tagged()).isFalse();
        assertThat(gtid.flavour()).isEqualTo(Flavour.MYSQL);
        assertThat(gtid).hasToString(UUID_TEXT + ":23");
    }

    @Test
    void parsesATaggedGtidAndLowerCasesTheTag() {
        MySqlGtid gtid = MySqlGtid.parse(" " + UUID_TEXT + ":Domain_1:7\n");

        assertThat(gtid).isEqualTo(new MySqlGtid(SOURCE, "domain_1", 7));
        assertThat(gtid.tagged()).isTrue();
        assertThat(gtid).hasToString(UUID_TEXT + ":domain_1:7");
        assertThat(MySqlGtid.parse(gtid.toString())).isEqualTo(gtid);
    }

    @Test
    void constructorLowerCasesTagsSoEqualityIgnoresTheirCase() {
        assertThat(new MySqlGtid(SOURCE, "ABC", 1)).isEqualTo(new MySqlGtid(SOURCE, "abc", 1));
    }

    @Test
    void acceptsTheLargestTransactionNumberMySqlAllows() {
        assertThat(MySqlGtid.parse(UUID_TEXT + ":9223372036854775806").transaction())
                .isEqualTo(MySqlGtid.MAX_TRANSACTION)
                .isEqualTo(Long.MAX_VALUE - 1);
    }

    @Test
    void constructorRejectsNumbersOutsideOneToTwoToTheSixtyThreeMinusTwo() {
        assertThatThrownBy(() -> new MySqlGtid(SOURCE, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not 0");
        assertThatThrownBy(() -> new MySqlGtid(SOURCE, Long.MAX_VALUE)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MySqlGtid(SOURCE, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void constructorRejectsMalformedTags() {
        assertThatThrownBy(() -> new MySqlGtid(SOURCE, "1abc", 1)).hasMessageContaining("'1abc' is not a GTID tag");
        assertThatThrownBy(() -> new MySqlGtid(SOURCE, "a-b", 1)).hasMessageContaining("'a-b' is not a GTID tag");
        assertThatThrownBy(() -> new MySqlGtid(SOURCE, "x".repeat(33), 1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new MySqlGtid(SOURCE, "_" + "x".repeat(31), 1).tag()).hasSize(32);
    }

    @Test
    void rejectsAnIntervalWhereOneTransactionIsExpected() {
        assertThatThrownBy(() -> MySqlGtid.parse(UUID_TEXT + ":1-5"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bad MySQL GTID '" + UUID_TEXT + ":1-5': a GTID names one transaction, not an interval"
                        + " (at offset 38)");
    }

    @Test
    void rejectsMalformedGtidsQuotingTheInputAndTheBadPart() {
        assertThatThrownBy(() -> MySqlGtid.parse(UUID_TEXT + ":1x"))
                .hasMessage("bad MySQL GTID '" + UUID_TEXT + ":1x': '1x' is not a transaction number (at offset 37)");
        assertThatThrownBy(() -> MySqlGtid.parse(UUID_TEXT + ":t!:1"))
                .hasMessageContaining("'t!' is not a GTID tag");
        assertThatThrownBy(() -> MySqlGtid.parse(UUID_TEXT + ":0"))
                .hasMessageContaining("'0' is not a transaction number: MySQL numbers transactions from 1");
        assertThatThrownBy(() -> MySqlGtid.parse("3e11fa47:5")).hasMessageContaining("'3e11fa47' is not a server UUID");
        assertThatThrownBy(() -> MySqlGtid.parse(UUID_TEXT)).hasMessageContaining("expected ':' after the server UUID");
        assertThatThrownBy(() -> MySqlGtid.parse(UUID_TEXT + ":tag")).hasMessageContaining("after tag 'tag'");
        assertThatThrownBy(() -> MySqlGtid.parse(UUID_TEXT + ":5,")).hasMessageContaining("unexpected ','");
        assertThatThrownBy(() -> MySqlGtid.parse("")).hasMessageContaining("expected a server UUID");
    }

    @Test
    void ordersSourcesByUnsignedBytesLikeMySql() {
        UUID low = UUID.fromString("7fffffff-ffff-ffff-ffff-ffffffffffff");
        UUID high = UUID.fromString("80000000-0000-0000-0000-000000000000");

        assertThat(low.compareTo(high)).as("java.util.UUID compares signed").isPositive();
        assertThat(MySqlGtid.compareSources(low.getMostSignificantBits(), low.getLeastSignificantBits(),
                high.getMostSignificantBits(), high.getLeastSignificantBits())).isNegative();
    }
}
