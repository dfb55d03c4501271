package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.gantry.TopologyKinds;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Test;

/**
 * A Gantry session id never reaches a server as a thread id: a KILL among several statements is Gantry's, run in
 * its place with every other statement's result around it, and every KILL that Gantry does not translate is refused.
 * The victim is a direct connection to the primary whose server thread id is used as the KILL's argument; with the
 * KILL passed through, the server would kill it (same account).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KillTranslationIT {

    private Topology topology;
    private ProxyHarness gantry;

    /** The flavour this class runs against; a subclass runs the same tests on another. */
    TopologyKind kind() {
        return TopologyKind.MARIADB;
    }

    @BeforeAll
    void startProxy() {
        topology = TopologyKinds.shared(kind());
        gantry = ProxyHarness.start(topology);
    }

    @AfterAll
    void stopProxy() {
        if (gantry != null) { // null when the class was skipped: its kind of server cannot run here
            gantry.close();
        }
    }

    @Test
    void aKillAmongSeveralStatementsIsGantrysAndTheServerThreadWithThatNumberLives() throws SQLException {
        try (Connection victim = topology.connectAsApp(topology.primary());
             Connection client = viaGantry("allowMultiQueries=true")) {
            String thread = queryString(victim, "SELECT CONNECTION_ID()");
            for (String text : List.of("KILL " + thread + "; SELECT 1", "kill " + thread + ";select 1",
                    "SELECT 1; KILL CONNECTION " + thread, "/*! KILL " + thread + " */; SELECT 1",
                    "SELECT 1; /*!50000 KILL QUERY " + thread + " */")) {
                // The number is no Gantry session's: unknown, as a server says of a thread it does not have.
                SQLException refused = catchThrowableOfType(() -> {
                    try (Statement statement = client.createStatement()) {
                        statement.execute(text);
                        while (statement.getMoreResults() || statement.getUpdateCount() != -1) {
                            // every result, so that the KILL's error surfaces
                        }
                    }
                }, SQLException.class);
                assertThat((Throwable) refused).as(text).isNotNull();
                assertThat(refused.getErrorCode()).as(text).isEqualTo(1094);
                assertThat(queryString(victim, "SELECT 'alive'")).as("after %s", text).isEqualTo("alive");
            }
            assertThat(queryString(client, "SELECT 'still here'")).isEqualTo("still here");
        }
    }

    /** node mysql2's test-pool-disconnect sends {@code kill ?; select sleep(0.05)}: each result in turn, as direct. */
    @Test
    void aKillOfAGantrySessionAmongSeveralStatementsRunsInOrderWithEveryResult() throws SQLException {
        try (Connection victim = viaGantry(""); Connection killer = viaGantry("allowMultiQueries=true");
             Statement statement = killer.createStatement()) {
            String session = queryString(victim, "SELECT CONNECTION_ID()");
            assertThat(statement.execute("SELECT 'before'; KILL " + session + "; SELECT 'after', SLEEP(0.05)"))
                    .isTrue();
            try (ResultSet rows = statement.getResultSet()) {
                assertThat(rows.next()).isTrue();
                assertThat(rows.getString(1)).isEqualTo("before");
            }
            assertThat(statement.getMoreResults()).as("the KILL's OK").isFalse();
            assertThat(statement.getUpdateCount()).isZero();
            assertThat(statement.getMoreResults()).as("the last SELECT").isTrue();
            try (ResultSet rows = statement.getResultSet()) {
                assertThat(rows.next()).isTrue();
                assertThat(rows.getString(1)).isEqualTo("after");
            }
            assertThat(statement.getMoreResults()).isFalse();
            assertThat(statement.getUpdateCount()).isEqualTo(-1);
            assertThat((Throwable) catchThrowableOfType(() -> queryString(victim, "SELECT 1"), SQLException.class))
                    .as("the victim was killed").isNotNull();
            assertThat(queryString(killer, "SELECT 'next'")).isEqualTo("next");
        }
    }

    @Test
    void withoutMultiStatementsAKillAmongStatementsIsASyntaxErrorAsDirect() throws SQLException {
        try (Connection victim = viaGantry(""); Connection client = viaGantry("")) {
            String session = queryString(victim, "SELECT CONNECTION_ID()");
            SQLException refused = catchThrowableOfType(() -> execute(client, "KILL " + session + "; SELECT 1"),
                    SQLException.class);
            assertThat(refused.getErrorCode()).isEqualTo(1064);
            assertThat(queryString(victim, "SELECT 'alive'")).isEqualTo("alive");
        }
    }

    /** The id an operator copies from the process list into KILL reaches the session it names. */
    @Test
    void theProcessListShowsGantrySessionIdsAndAKillOfOneReachesThatSession() throws SQLException {
        try (Connection victim = viaGantry(""); Connection operator = viaGantry("")) {
            String victimId = queryString(victim, "SELECT CONNECTION_ID()");
            String operatorId = queryString(operator, "SELECT CONNECTION_ID()");
            execute(victim, "START TRANSACTION"); // holds its primary connection, as a busy session does
            execute(victim, "SELECT 1");
            List<String> shown = ids(operator, "SHOW FULL PROCESSLIST");
            assertThat(shown).as("the sessions' rows show their Gantry ids").contains(victimId, operatorId);
            // A SELECT is a read: on the primary only when asked (it would list a replica's threads otherwise).
            assertThat(ids(operator, "/*#mode=READWRITE*/ SELECT ID, USER FROM information_schema.PROCESSLIST "
                    + "ORDER BY ID")).contains(victimId, operatorId);
            execute(operator, "KILL " + victimId);
            assertThat((Throwable) catchThrowableOfType(() -> queryString(victim, "SELECT 1"), SQLException.class))
                    .as("the session the row showed was killed").isNotNull();
            // (The victim's id may still be listed: another server thread can have that number, as Gantry session ids
            // and server thread ids are counted apart.)
            assertThat(ids(operator, "SHOW PROCESSLIST")).contains(operatorId);
        }
    }

    /**
     * A statement prepared on the server (COM_STMT_PREPARE, binary rows) sees the ids a text statement sees:
     * {@code CONNECTION_ID()} is the session's id, named and typed as direct, and the process list shows the sessions'
     * ids, so that the id it shows reaches that session's KILL.
     */
    @Test
    void aPreparedStatementSeesTheSessionIdsATextOneSees() throws SQLException {
        String serverPrepared = "useServerPrepStmts=true";
        try (Connection victim = viaGantry(""); Connection operator = viaGantry(serverPrepared);
             Connection direct = DriverManager.getConnection("jdbc:mysql://" + topology.primary().address() + "/"
                     + topology.database() + "?sslMode=DISABLED&allowPublicKeyRetrieval=true&" + serverPrepared,
                     topology.appAccount().user(), topology.appAccount().password())) {
            String victimId = queryString(victim, "SELECT CONNECTION_ID()");
            String operatorId = queryString(operator, "SELECT CONNECTION_ID()");
            for (String sql : List.of("SELECT CONNECTION_ID()", "SELECT CONNECTION_ID() AS id, ? AS n")) {
                for (boolean prepared : new boolean[] {false, true}) {
                    List<String> seen = idColumn(operator, sql, prepared);
                    List<String> directly = idColumn(direct, sql, prepared);
                    assertThat(seen.get(0)).as(sql).isEqualTo(operatorId);
                    assertThat(seen.subList(1, seen.size())).as("%s (%s): label, type, precision, as direct", sql,
                            prepared ? "prepared" : "text").isEqualTo(directly.subList(1, directly.size()));
                }
            }
            execute(victim, "START TRANSACTION"); // holds its primary connection, as a busy session does
            execute(victim, "SELECT 1");
            assertThat(preparedIds(operator, "SHOW FULL PROCESSLIST")).contains(victimId, operatorId);
            assertThat(preparedIds(operator, "/*#mode=READWRITE*/ SELECT ID, USER FROM information_schema.PROCESSLIST "
                    + "WHERE ID > ? ORDER BY ID")).contains(victimId, operatorId);
            execute(operator, "KILL " + victimId);
            assertThat((Throwable) catchThrowableOfType(() -> queryString(victim, "SELECT 1"), SQLException.class))
                    .as("the session the prepared list showed was killed").isNotNull();
        }
    }

    /**
     * The first column of {@code sql}'s one row, then its label, type name and precision; prepared on the server, or
     * sent as text (its parameter written in).
     */
    private static List<String> idColumn(Connection connection, String sql, boolean prepared) throws SQLException {
        try (Statement statement = prepared ? connection.prepareStatement(sql) : connection.createStatement()) {
            if (prepared && sql.contains("?")) {
                ((PreparedStatement) statement).setInt(1, 7);
            }
            try (ResultSet rows = prepared ? ((PreparedStatement) statement).executeQuery()
                    : statement.executeQuery(sql.replace("?", "7"))) {
                assertThat(rows.next()).isTrue();
                java.sql.ResultSetMetaData columns = rows.getMetaData();
                return List.of(rows.getString(1), columns.getColumnLabel(1), columns.getColumnTypeName(1),
                        Integer.toString(columns.getPrecision(1)));
            }
        }
    }

    /** The first column of every row of a prepared {@code sql} (its one parameter, if any, is 0). */
    private static List<String> preparedIds(Connection connection, String sql) throws SQLException {
        List<String> ids = new java.util.ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            if (sql.contains("?")) {
                statement.setInt(1, 0);
            }
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    ids.add(rows.getString(1));
                }
            }
        }
        return ids;
    }

    private static List<String> ids(Connection connection, String sql) throws SQLException {
        List<String> ids = new java.util.ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            while (rows.next()) {
                ids.add(rows.getString(1));
            }
        }
        return ids;
    }

    @Test
    void killsGantryCannotTranslateAreRefusedAndNeverReachAServer() throws SQLException {
        try (Connection victim = topology.connectAsApp(topology.primary()); Connection client = viaGantry("")) {
            String thread = queryString(victim, "SELECT CONNECTION_ID()");
            for (String text : List.of("KILL QUERY ID " + thread, "KILL HARD QUERY ID " + thread, "KILL USER app",
                    "KILL (" + thread + ")", "KILL " + thread + " + 0", "PREPARE s FROM 'KILL " + thread + "'",
                    "PREPARE s FROM 'KI' 'LL " + thread + "'", "EXECUTE IMMEDIATE 'KILL " + thread + "'",
                    "BEGIN NOT ATOMIC KILL " + thread + "; END")) {
                SQLException refused = catchThrowableOfType(() -> execute(client, text), SQLException.class);
                assertThat((Throwable) refused).as(text).isNotNull();
                assertThat(refused.getErrorCode()).as(text).isEqualTo(1235);
                assertThat(refused.getMessage()).as(text).contains("Gantry");
                assertThat(queryString(victim, "SELECT 'alive'")).as("after %s", text).isEqualTo("alive");
            }
            // Had PREPARE gone through, this would kill the victim.
            assertThat(catchThrowableOfType(() -> execute(client, "EXECUTE s"), SQLException.class).getErrorCode())
                    .isEqualTo(1243);
            assertThat(queryString(victim, "SELECT 'alive'")).isEqualTo("alive");
        }
    }

    @Test
    void aKillPreparedOverTheBinaryProtocolIsRefused() throws SQLException {
        try (Connection victim = topology.connectAsApp(topology.primary());
             Connection client = viaGantry("useServerPrepStmts=true&emulateUnsupportedPstmts=false")) {
            String thread = queryString(victim, "SELECT CONNECTION_ID()");
            SQLException refused = catchThrowableOfType(() -> {
                try (PreparedStatement kill = client.prepareStatement("KILL " + thread)) {
                    kill.execute();
                }
            }, SQLException.class);
            assertThat((Throwable) refused).isNotNull();
            assertThat(refused.getErrorCode()).isEqualTo(1295);
            assertThat(queryString(victim, "SELECT 'alive'")).isEqualTo("alive");
        }
    }

    @Test
    void aKillOfAGantrySessionOnItsOwnStillWorks() throws SQLException {
        try (Connection victim = viaGantry(""); Connection killer = viaGantry("allowMultiQueries=true")) {
            String session = queryString(victim, "SELECT CONNECTION_ID()");
            execute(killer, "/* by id */ KILL CONNECTION " + session + ";");
            long started = System.nanoTime();
            assertThat((Throwable) catchThrowableOfType(() -> queryString(victim, "SELECT 1"), SQLException.class))
                    .isNotNull();
            // The killed client's connection is closed at once, as a server closes a killed one: a pool that
            // checks it right after the KILL finds it gone (node mysql2's test-pool-disconnect).
            assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(500);
        }
    }

    private Connection viaGantry(String options) throws SQLException {
        return DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + gantry.port() + "/" + topology.database()
                        + "?sslMode=DISABLED&allowPublicKeyRetrieval=true" + (options.isEmpty() ? "" : "&" + options),
                topology.appAccount().user(), topology.appAccount().password());
    }
}
