package io.gantry.proxy.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.wire.ServerVersion;
import org.junit.jupiter.api.Test;

class SessionTrackingTest {

    @Test
    void mariaDbBefore11Point1TracksTheAccessModeByItsOldName() {
        String setup = SessionTracking.setupStatement(ServerVersion.parse("5.5.5-10.11.18-MariaDB-0+deb12u1"));
        assertThat(setup).contains("'last_gtid', 'tx_read_only'").doesNotContain("transaction_read_only");
    }

    @Test
    void mariaDb11Point1AndLaterTrackTheNewName() {
        assertThat(SessionTracking.setupStatement(ServerVersion.parse("5.5.5-11.4.5-MariaDB-log")))
                .contains("'last_gtid', 'transaction_read_only'");
        assertThat(SessionTracking.setupStatement(ServerVersion.parse("11.1.0-MariaDB")))
                .contains("'transaction_read_only'");
    }

    @Test
    void mySqlTracksItsOwnGtidsAndTheNewName() {
        String setup = SessionTracking.setupStatement(ServerVersion.parse("8.0.15"));
        assertThat(setup).contains("OWN_GTID").contains("'transaction_read_only'").doesNotContain("last_gtid");
    }
}
