package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;

/**
 * {@link SessionTrackingIT} against MySQL: the session's GTIDs from {@code session_track_gtids=OWN_GTID}. The
 * byte-for-byte comparisons with a direct connection are MariaDB's only: their test client logs in with
 * {@code mysql_native_password}, and the MySQL 8 sandbox accounts use {@code caching_sha2_password}.
 */
class SessionTrackingMySqlIT extends SessionTrackingIT {

    @Override
    TopologyKind kind() {
        return TopologyKind.MYSQL;
    }

    @Override
    void everyResponseIsByteForByteWhatADirectConnectionGets(int extra) {
        // MariaDB only (see the class comment)
    }

    @Override
    void aClientThatTracksLastGtidItselfSeesIt() {
        // MariaDB only: MySQL has no last_gtid
    }

    @Override
    void accessModeErrorsAreTheServersOwn() {
        // MariaDB only (see the class comment)
    }

    @Override
    void assertFloorIsTheLastWrite(String floor, Connection session) {
        // The session's own two commits (CREATE TABLE, INSERT), as OWN_GTID reported them.
        assertThat(floor).as("the session's transactions on one server").matches("[0-9a-f-]{36}:[0-9]+-[0-9]+");
    }
}
