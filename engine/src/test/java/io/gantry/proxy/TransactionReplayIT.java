package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static io.gantry.proxy.ProxyHarness.sessionRow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.gantry.TopologyKinds;
import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.events.EngineEvent;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.proxy.session.FailoverSettings;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Transaction replay ({@code --transaction-replay}, on by default): a transaction open on the primary when the primary
 * is lost runs again on the new one, and the session goes on only when every answer is the same as the client got.
 * Planned switchovers on a shared topology (the old primary stays up, read-only), and the primary shut down under
 * eight clients in a transaction loop, on the bundled MariaDB and on the distribution's.
 */
class TransactionReplayIT {

    private static final Duration HEALTH_INTERVAL = Duration.ofMillis(500);

    private static Topology topology;
    private static ProxyHarness gantry;

    @BeforeAll
    static void start() throws SQLException {
        topology = TopologyKinds.startPrivate(TopologyKind.MARIADB, "replay", 2);
        gantry = ProxyHarness.start(topology, config -> config, list -> list, event -> { }, HEALTH_INTERVAL);
        try (Connection setup = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(setup, "CREATE TABLE accounts (id INT PRIMARY KEY, balance INT)");
            execute(setup, "CREATE TABLE moves (session INT, seq INT, amount INT, PRIMARY KEY (session, seq))");
            execute(setup, "INSERT INTO accounts VALUES (1, 100), (2, 100)");
        }
    }

    @AfterAll
    static void stop() {
        if (gantry != null) {
            gantry.close();
        }
        if (topology != null) {
            topology.close();
        }
    }

    @Test
    void aTransactionOpenAcrossAPlannedSwitchoverGoesOnOnTheNewPrimaryAndCommits() throws Exception {
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(session, "BEGIN");
            execute(session, "INSERT INTO moves VALUES (1, 1, 10)");
            assertThat(queryString(session, "SELECT COUNT(*) FROM moves WHERE session = 1")).isEqualTo("1");
            assertThat(sessionRow(session, "transaction_replay")).startsWith("3 statements kept");

            DatabaseServer promoted = promoteAReplica();

            execute(session, "INSERT INTO moves VALUES (1, 2, 20)");
            assertThat(queryString(session, "SELECT COUNT(*) FROM moves WHERE session = 1")).isEqualTo("2");
            assertThat(queryString(session, "SELECT @@port")).as("the transaction runs on the new primary")
                    .isEqualTo(Integer.toString(promoted.port()));
            execute(session, "COMMIT");
        }
        try (Connection direct = topology.connectAsApp(topology.primary())) {
            assertThat(queryString(direct, "SELECT GROUP_CONCAT(seq ORDER BY seq) FROM moves WHERE session = 1"))
                    .isEqualTo("1,2");
        }
    }

    @Test
    void aTransactionOfServerPreparedStatementsIsReplayedToo() throws Exception {
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J_SERVER_PREPARED);
             PreparedStatement insert = session.prepareStatement("INSERT INTO moves VALUES (?, ?, ?)");
             PreparedStatement count = session.prepareStatement("SELECT COUNT(*), SUM(amount) FROM moves "
                     + "WHERE session = ?")) {
            session.setAutoCommit(false);
            insert.setInt(1, 2);
            insert.setInt(2, 1);
            insert.setInt(3, 10);
            insert.executeUpdate();
            count.setInt(1, 2);
            try (ResultSet rows = count.executeQuery()) {
                rows.next();
                assertThat(rows.getInt(1)).isEqualTo(1);
            }

            DatabaseServer promoted = promoteAReplica();

            insert.setInt(2, 2);
            insert.setInt(3, 20);
            insert.executeUpdate();
            try (ResultSet rows = count.executeQuery()) {
                rows.next();
                assertThat(rows.getInt(1)).isEqualTo(2);
                assertThat(rows.getInt(2)).isEqualTo(30);
            }
            assertThat(queryString(session, "SELECT @@port")).isEqualTo(Integer.toString(promoted.port()));
            session.commit();
        }
        try (Connection direct = topology.connectAsApp(topology.primary())) {
            assertThat(queryString(direct, "SELECT GROUP_CONCAT(amount ORDER BY seq) FROM moves WHERE session = 2"))
                    .isEqualTo("10,20");
        }
    }

    @Test
    void aReplayThatWouldReadWhatAnotherSessionChangedEndsTheSessionInsteadOfAnsweringDifferently()
            throws Exception {
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J);
             Connection other = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(session, "BEGIN");
            String before = queryString(session, "SELECT balance FROM accounts WHERE id = 2");
            execute(other, "UPDATE accounts SET balance = balance + 1 WHERE id = 2"); // committed, replicated

            promoteAReplica();

            assertThatThrownBy(() -> execute(session, "UPDATE accounts SET balance = " + before + " - 5 WHERE id = 2"))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("could not be replayed")
                    .hasMessageContaining("answered differently");
            assertThat(session.isValid(2)).isFalse();
        }
        try (Connection direct = topology.connectAsApp(topology.primary())) {
            assertThat(queryString(direct, "SELECT balance FROM accounts WHERE id = 2"))
                    .as("the other session's update stands, the replayed transaction left nothing").isEqualTo("101");
        }
    }

    @Test
    void aTransactionThatReadNowCannotBeReplayed() throws Exception {
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(session, "BEGIN");
            queryString(session, "SELECT NOW(6)");

            promoteAReplica();

            assertThatThrownBy(() -> execute(session, "INSERT INTO moves VALUES (3, 1, 1)"))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("could not be replayed")
                    .hasMessageContaining("SELECT NOW(6)");
        }
    }

    /**
     * The case: eight clients in a loop of {@code BEGIN; INSERT; SELECT own count; (30 ms); INSERT; COMMIT};
     * the primary shut down without losing a committed transaction ({@code SHUTDOWN WAIT FOR ALL SLAVES}), a
     * replica promoted a second later. Client errors only for COMMITs on their way when the primary went (their
     * outcome unknown), every acknowledged transaction stored once, and every read inside a transaction agrees with the
     * client's own history.
     */
    @Test
    void eightClientsLoseNoTransactionWhenThePrimaryShutsDownOnTheBundledMariaDb() throws Exception {
        try (Topology own = TopologyKinds.startPrivate(TopologyKind.MARIADB, "replay-shutdown", 2)) {
            eightClientsAcrossAPrimaryShutdown(own);
        }
    }

    @Test
    void eightClientsLoseNoTransactionWhenThePrimaryShutsDownOnTheDistributionsMariaDb() throws Exception {
        try (Topology own = TopologyKinds.startDistributionMariaDb("replay-shutdown", 2)) {
            eightClientsAcrossAPrimaryShutdown(own);
        }
    }

    private static void eightClientsAcrossAPrimaryShutdown(Topology servers) throws Exception {
        List<Event> tallies = new CopyOnWriteArrayList<>();
        try (ProxyHarness proxy = ProxyHarness.start(servers, config -> config, list -> list, event -> {
            if (event instanceof EngineEvent.Timeline timeline
                    && timeline.event().kind() == EventKind.TRANSACTIONS_REPLAYED) {
                tallies.add(timeline.event());
            }
        }, Duration.ofSeconds(2))) {
            try (Connection setup = proxy.connect(Driver.MARIADB_CONNECTOR_J)) {
                execute(setup, "CREATE TABLE moves (session INT, seq INT, amount INT, PRIMARY KEY (session, seq))");
            }
            List<TransactionLoop> loops = new ArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int client = 0; client < 8; client++) {
                int id = client;
                TransactionLoop loop = new TransactionLoop(id, () -> {
                    try {
                        return proxy.connect(Driver.MARIADB_CONNECTOR_J);
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                });
                loops.add(loop);
                Thread thread = new Thread(loop, "replay-client-" + id);
                thread.start();
                threads.add(thread);
            }
            Thread.sleep(1500);
            DatabaseServer oldPrimary = servers.primary();
            try (Connection admin = servers.connectAsAdmin(oldPrimary); Statement statement = admin.createStatement()) {
                statement.execute("SHUTDOWN WAIT FOR ALL SLAVES");
            } catch (SQLException expected) {
                // the server may close this connection as it goes
            }
            Thread.sleep(1000);
            DatabaseServer promoted = servers.replicas().get(0);
            servers.promote(promoted);
            Thread.sleep(4000);
            loops.forEach(TransactionLoop::stop);
            for (Thread thread : threads) {
                thread.join();
            }

            List<String> errors = new ArrayList<>();
            int committed = 0;
            for (TransactionLoop loop : loops) {
                errors.addAll(loop.errors);
                committed += loop.committed.size();
            }
            System.out.printf("TransactionReplayIT: %d transactions committed by 8 clients, %d client errors %s; "
                    + "status %s%n", committed, errors.size(), errors, proxy.proxy.readStatus());
            // A client error can only be a COMMIT that was on its way when the primary went and whose outcome the
            // new primary's binlog could not tell; every other transaction open then was replayed, or its COMMIT
            // found committed (answered OK) or not (replayed and committed).
            Map<String, String> status = proxy.proxy.readStatus();
            assertThat(errors).as("client errors across the primary's shutdown")
                    .hasSize(Integer.parseInt(status.get("Transaction_replays_commit_unknown")))
                    .hasSizeLessThanOrEqualTo(1);
            assertThat(status.get("Transaction_replays_checksum_mismatch")).isEqualTo("0");
            assertThat(status.get("Transaction_replays_failed")).isEqualTo("0");
            // One timeline event for the loss, with its counts, once every replay of it has ended.
            await().atMost(Duration.ofSeconds(15)).until(() -> !tallies.isEmpty());
            assertThat(tallies).singleElement().satisfies(event -> {
                assertThat(event.server()).isEqualTo(promoted.address());
                assertThat(event.reason()).contains(status.get("Transaction_replays_replayed") + " replayed");
            });
            List<String> disagreements = new ArrayList<>();
            loops.forEach(loop -> disagreements.addAll(loop.disagreements));
            assertThat(disagreements).as("reads inside a transaction that disagree with the client's history")
                    .isEmpty();
            try (Connection direct = servers.connectAsApp(promoted);
                 Statement statement = direct.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT session, seq FROM moves")) {
                Map<Integer, List<Integer>> stored = new HashMap<>();
                while (rows.next()) {
                    stored.computeIfAbsent(rows.getInt(1), k -> new ArrayList<>()).add(rows.getInt(2));
                }
                for (TransactionLoop loop : loops) {
                    List<Integer> expected = new ArrayList<>();
                    for (int transaction : loop.committed) {
                        expected.add(transaction * 2);
                        expected.add(transaction * 2 + 1);
                    }
                    List<Integer> own = stored.getOrDefault(loop.id, List.of());
                    assertThat(own).as("client %d: every acknowledged transaction's rows, once", loop.id)
                            .containsAll(expected);
                    // A COMMIT whose answer was lost may have committed: at most its two rows more.
                    assertThat(own.size() - expected.size()).as("client %d: rows nobody acknowledged", loop.id)
                            .isBetween(0, 2 * loop.errors.size());
                }
            }
        }
    }

    /** One client's loop of two-insert transactions, each reading its own count in between. */
    private static final class TransactionLoop implements Runnable {
        final int id;
        private final Supplier<Connection> connect;
        final List<Integer> committed = new CopyOnWriteArrayList<>();
        final List<String> errors = new CopyOnWriteArrayList<>();
        final List<String> disagreements = new CopyOnWriteArrayList<>();
        private final AtomicBoolean running = new AtomicBoolean(true);

        TransactionLoop(int id, Supplier<Connection> connect) {
            this.id = id;
            this.connect = connect;
        }

        void stop() {
            running.set(false);
        }

        @Override
        public void run() {
            Connection connection = connect.get();
            int transaction = 0;
            int ownRows = 0; // what this client's transactions stored, as far as it knows
            try {
                while (running.get()) {
                    try (Statement statement = connection.createStatement();
                         PreparedStatement insert = connection.prepareStatement("INSERT INTO moves VALUES (?, ?, ?)")) {
                        statement.execute("BEGIN");
                        insert.setInt(1, id);
                        insert.setInt(2, transaction * 2);
                        insert.setInt(3, 1);
                        insert.executeUpdate();
                        try (ResultSet count = statement.executeQuery("SELECT COUNT(*) FROM moves WHERE session = "
                                + id)) {
                            count.next();
                            int expected = ownRows + 1;
                            if (count.getInt(1) != expected) {
                                disagreements.add("client " + id + " saw " + count.getInt(1) + " rows, expected "
                                        + expected);
                            }
                        }
                        Thread.sleep(30);
                        insert.setInt(2, transaction * 2 + 1);
                        insert.executeUpdate();
                        statement.execute("COMMIT");
                        committed.add(transaction);
                        ownRows += 2;
                    } catch (SQLException e) {
                        errors.add(e.getErrorCode() + " " + e.getMessage());
                        connection.close();
                        connection = connect.get();
                        ownRows = Integer.parseInt(queryString(connection,
                                "SELECT COUNT(*) FROM moves WHERE session = " + id));
                    }
                    transaction++;
                }
                connection.close();
            } catch (InterruptedException | SQLException e) {
                errors.add(e.toString());
            }
        }
    }

    private static DatabaseServer promoteAReplica() throws InterruptedException {
        DatabaseServer promoted = topology.replicas().get(0);
        topology.promote(promoted);
        Thread.sleep(HEALTH_INTERVAL.toMillis() * 3); // Gantry has seen it
        return promoted;
    }
}
