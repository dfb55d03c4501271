package io.gantry.gtid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MariaDbGtidTest {

    @Test
    void parsesAndPrintsTheGtidAServerReportsInLastGtid() {
        MariaDbGtid gtid = MariaDbGtid.parse("0-33061-47");

        assertThat(gtid).isEqualTo(new MariaDbGtid(0, 33061, 47));
        assertThat(gtid.flavour()).isEqualTo(Flavour.MARIADB);
        assertThat(gtid).hasToString("0-33061-47");
    }

    @Test
    void acceptsTheFullRangeOfIdsAndSequenceNumbers() {
        MariaDbGtid gtid = MariaDbGtid.parse("4294967295-4294967295-9223372036854775807");

        assertThat(gtid).isEqualTo(new MariaDbGtid(MariaDbGtid.MAX_ID, MariaDbGtid.MAX_ID, Long.MAX_VALUE));
        assertThat(MariaDbGtid.parse(" 1-2-3\n")).isEqualTo(new MariaDbGtid(1, 2, 3));
    }

    @Test
    void constructorRejectsOutOfRangeParts() {
        assertThatThrownBy(() -> new MariaDbGtid(-1, 1, 1)).hasMessageContaining("domain id");
        assertThatThrownBy(() -> new MariaDbGtid(1L << 32, 1, 1)).hasMessageContaining("domain id");
        assertThatThrownBy(() -> new MariaDbGtid(0, 1L << 32, 1)).hasMessageContaining("server id");
        assertThatThrownBy(() -> new MariaDbGtid(0, 1, 0)).hasMessageContaining("sequence number");
    }

    @Test
    void rejectsMalformedGtidsQuotingTheInputAndTheBadPart() {
        assertThatThrownBy(() -> MariaDbGtid.parse("0-1-x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bad MariaDB GTID '0-1-x': 'x' is not a sequence number (at offset 4)");
        assertThatThrownBy(() -> MariaDbGtid.parse("0-1-0"))
                .hasMessage("bad MariaDB GTID '0-1-0': '0' is not a sequence number: MariaDB numbers transactions"
                        + " from 1 (at offset 4)");
        assertThatThrownBy(() -> MariaDbGtid.parse("0-1"))
                .hasMessageContaining("'0-1' is not a GTID (expected domain-server-sequence");
        assertThatThrownBy(() -> MariaDbGtid.parse("0--5")).hasMessageContaining("'0--5' has no server id");
        assertThatThrownBy(() -> MariaDbGtid.parse("4294967296-1-1"))
                .hasMessageContaining("'4294967296' is beyond the largest domain id, 4294967295");
        assertThatThrownBy(() -> MariaDbGtid.parse("0-1-9223372036854775808"))
                .hasMessageContaining("'9223372036854775808' is beyond the largest sequence number");
        assertThatThrownBy(() -> MariaDbGtid.parse("0-1-5,1-1-1")).hasMessageContaining("unexpected ','");
        assertThatThrownBy(() -> MariaDbGtid.parse("")).hasMessageContaining("expected domain-server-sequence");
    }
}
