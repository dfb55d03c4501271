package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.DelayingRelay;
import io.gantry.DelayingRelay.Cut;
import io.gantry.TopologyKinds;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A COMMIT (or an autocommit write) whose connection is lost on its way is in doubt: Gantry reads the primary's binlog
 * to find out whether it committed, and answers as the facts say. The primary is reached through a relay that cuts
 * the session's connection at the chosen statement, either before the server gets it or after the server ran it (its
 * answer dropped); the primary stays up, so the "new" primary is the same server, and the session's transaction is
 * replayed there when it had not committed.
 */
class InDoubtCommitIT {

    private static Topology topology;
    private static DelayingRelay relay;
    private static ProxyHarness gantry;

    @BeforeAll
    static void start() throws Exception {
        topology = TopologyKinds.startPrivate(TopologyKind.MARIADB, "indoubt", 1);
        DatabaseServer primary = topology.primary();
        relay = DelayingRelay.start(primary.host(), primary.port(), Duration.ZERO);
        gantry = ProxyHarness.start(topology, config -> config,
                urls -> urls.stream().map(url -> url.port() == primary.port() ? new UpstreamUrl(relay.host(),
                        relay.port(), url.database(), url.user(), url.password(), url.weight()) : url).toList(),
                event -> { }, Duration.ofMillis(250));
        try (Connection setup = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(setup, "CREATE TABLE moves (session INT, seq INT, amount INT, PRIMARY KEY (session, seq))");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (gantry != null) {
            gantry.close();
        }
        if (relay != null) {
            relay.close();
        }
        if (topology != null) {
            topology.close();
        }
    }

    @Test
    void aCommitThatRanBeforeItsAnswerWasLostIsAnsweredOkAndNotRunAgain() throws Exception {
        Map<String, String> before = gantry.proxy.readStatus();
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(session, "BEGIN");
            execute(session, "INSERT INTO moves VALUES (1, 1, 10)");
            execute(session, "INSERT INTO moves VALUES (1, 2, 20)");
            relay.cutAt("\u0003COMMIT", Cut.AFTER_THE_SERVER_RAN_IT);
            execute(session, "COMMIT");
            assertThat(relay.cutDone()).isTrue();
            assertThat(queryString(session, "SELECT COUNT(*) FROM moves WHERE session = 1"))
                    .as("the session goes on").isEqualTo("2");
        }
        assertThat(rowsOf(1)).as("committed once").isEqualTo("1,2");
        assertThat(grew(before, "Commits_in_doubt_committed")).isEqualTo(1);
        assertThat(grew(before, "Transaction_replays_commit_found")).isEqualTo(1);
        assertThat(grew(before, "Transaction_replays_commit_unknown")).isZero();
    }

    @Test
    void aCommitThatNeverReachedTheServerIsReplayedWithItsTransaction() throws Exception {
        Map<String, String> before = gantry.proxy.readStatus();
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(session, "BEGIN");
            execute(session, "INSERT INTO moves VALUES (2, 1, 10)");
            assertThat(queryString(session, "SELECT COUNT(*) FROM moves WHERE session = 2")).isEqualTo("1");
            execute(session, "INSERT INTO moves VALUES (2, 2, 20)");
            relay.cutAt("\u0003COMMIT", Cut.BEFORE_THE_SERVER);
            execute(session, "COMMIT");
            assertThat(relay.cutDone()).isTrue();
        }
        assertThat(rowsOf(2)).as("the replayed transaction committed, once").isEqualTo("1,2");
        assertThat(grew(before, "Commits_in_doubt_not_committed")).isEqualTo(1);
        assertThat(grew(before, "Transaction_replays_replayed")).isEqualTo(1);
    }

    @Test
    void anAutocommitWriteThatNeverReachedTheServerRunsAgain() throws Exception {
        Map<String, String> before = gantry.proxy.readStatus();
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            relay.cutAt("INSERT INTO moves VALUES (3, 1", Cut.BEFORE_THE_SERVER);
            execute(session, "INSERT INTO moves VALUES (3, 1, 10)");
            assertThat(relay.cutDone()).isTrue();
            execute(session, "INSERT INTO moves VALUES (3, 2, 20)");
        }
        assertThat(rowsOf(3)).isEqualTo("1,2");
        assertThat(grew(before, "Commits_in_doubt_not_committed")).isEqualTo(1);
    }

    @Test
    void anAutocommitWriteThatCommittedBeforeItsAnswerWasLostSaysSoAndIsNotRunAgain() throws Exception {
        Map<String, String> before = gantry.proxy.readStatus();
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            relay.cutAt("INSERT INTO moves VALUES (4, 1", Cut.AFTER_THE_SERVER_RAN_IT);
            assertThatThrownBy(() -> execute(session, "INSERT INTO moves VALUES (4, 1, 10)"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("it committed (as ");
        }
        assertThat(rowsOf(4)).as("committed once, not run again").isEqualTo("1");
        assertThat(grew(before, "Commits_in_doubt_committed")).isEqualTo(1);
    }

    /** 0x5A5A5A5A: the bytes {@code ZZZZ} in an execution's parameters, where the relay cuts. */
    private static final int CUT_HERE = 0x5A5A5A5A;

    @Test
    void aPreparedWriteIsToldApartByItsValuesAndRunsAgainOnlyIfItDidNotCommit() throws Exception {
        Map<String, String> before = gantry.proxy.readStatus();
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J_SERVER_PREPARED);
             PreparedStatement insert = session.prepareStatement("INSERT INTO moves VALUES (?, ?, ?)")) {
            insert.setInt(1, 6);
            insert.setInt(2, 1);
            insert.setInt(3, CUT_HERE);
            relay.cutAt("ZZZZ", Cut.BEFORE_THE_SERVER);
            insert.executeUpdate();
            assertThat(relay.cutDone()).isTrue();

            insert.setInt(2, 2);
            relay.cutAt("ZZZZ", Cut.AFTER_THE_SERVER_RAN_IT);
            assertThatThrownBy(insert::executeUpdate).isInstanceOf(SQLException.class)
                    .hasMessageContaining("it committed (as ");
        }
        assertThat(rowsOf(6)).as("each once").isEqualTo("1,2");
        assertThat(grew(before, "Commits_in_doubt_not_committed")).isEqualTo(1);
        assertThat(grew(before, "Commits_in_doubt_committed")).isEqualTo(1);
    }

    @Test
    void aRollbackWhoseAnswerWasLostIsAnsweredOk() throws Exception {
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(session, "BEGIN");
            execute(session, "INSERT INTO moves VALUES (5, 1, 10)");
            relay.cutAt("\u0003ROLLBACK", Cut.BEFORE_THE_SERVER);
            execute(session, "ROLLBACK");
            execute(session, "INSERT INTO moves VALUES (5, 2, 20)");
        }
        assertThat(rowsOf(5)).as("the rolled-back row is not there").isEqualTo("2");
    }

    private static String rowsOf(int session) throws SQLException {
        try (Connection direct = topology.connectAsApp(topology.primary())) {
            return queryString(direct, "SELECT IFNULL(GROUP_CONCAT(seq ORDER BY seq), '') FROM moves WHERE session = "
                    + session);
        }
    }

    private static long grew(Map<String, String> before, String row) {
        return Long.parseLong(gantry.proxy.readStatus().get(row)) - Long.parseLong(before.get(row));
    }
}
