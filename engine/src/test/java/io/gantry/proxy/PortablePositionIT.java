package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.TopologyKinds;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Read-your-writes across instances with the portable position: a write through one Gantry, then
 * {@code SELECT @@gantry_last_write_position} there and {@code SET gantry_read_after} on a session of another Gantry,
 * whose read then sees the write although every replica applies it 2 s late. Without the position the same read is
 * stale (the negative control), so the test can tell.
 */
class PortablePositionIT {

    private static final int WRITES = 10;

    private static Topology topology;
    private static ProxyHarness writer;
    private static ProxyHarness reader;

    @BeforeAll
    static void start() throws SQLException {
        topology = TopologyKinds.startPrivate(TopologyKind.MARIADB, "portable", 2);
        for (DatabaseServer replica : topology.replicas()) {
            try (Connection admin = topology.connectAsAdmin(replica); Statement statement = admin.createStatement()) {
                statement.execute("STOP SLAVE");
                statement.execute("CHANGE MASTER TO MASTER_DELAY = 2");
                statement.execute("START SLAVE");
            }
        }
        writer = ProxyHarness.start(topology);
        reader = ProxyHarness.start(topology);
        try (Connection setup = writer.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(setup, "CREATE TABLE notes (id INT PRIMARY KEY)");
        }
        for (DatabaseServer replica : topology.replicas()) { // the table, 2 s late
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                try (Connection direct = topology.connectAsApp(replica)) {
                    return queryString(direct, "SELECT COUNT(*) FROM information_schema.TABLES "
                            + "WHERE TABLE_NAME = 'notes'").equals("1");
                }
            });
        }
    }

    @AfterAll
    static void stop() {
        if (writer != null) {
            writer.close();
        }
        if (reader != null) {
            reader.close();
        }
        if (topology != null) {
            topology.close();
        }
    }

    @Test
    void aReadThroughAnotherInstanceAfterThePositionSeesTheWrite() throws Exception {
        int stale = 0;
        int staleWithout = 0;
        try (Connection writes = writer.connect(Driver.MARIADB_CONNECTOR_J)) {
            for (int id = 1; id <= WRITES; id++) {
                execute(writes, "INSERT INTO notes VALUES (" + id + ")");
                String position = queryString(writes, "SELECT @@gantry_last_write_position");
                assertThat(position).as("the position of write %d", id).isNotEmpty();
                try (Connection without = reader.connect(Driver.MARIADB_CONNECTOR_J)) {
                    staleWithout += count(without, id) == 0 ? 1 : 0;
                }
                try (Connection with = reader.connect(Driver.MARIADB_CONNECTOR_J)) {
                    execute(with, "SET gantry_read_after = '" + position + "'");
                    assertThat(queryString(with, "SELECT @@gantry_read_after")).isEqualTo(position);
                    stale += count(with, id) == 0 ? 1 : 0;
                }
            }
        }
        System.out.printf("PortablePositionIT: %d writes, stale reads through the other instance: %d with the "
                + "position, %d without%n", WRITES, stale, staleWithout);
        assertThat(stale).as("stale reads with gantry_read_after").isZero();
        assertThat(staleWithout).as("stale reads without it (the negative control)").isPositive();
    }

    @Test
    void theWritePositionIsReadOnlyAndABadPositionIsRefusedWithItsReason() throws Exception {
        try (Connection session = reader.connect(Driver.MARIADB_CONNECTOR_J)) {
            assertThat(queryString(session, "SELECT @@gantry_last_write_position")).isEmpty();
            assertThatThrownBy(() -> execute(session, "SET gantry_last_write_position = '0-1-1'"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("read only");
            assertThatThrownBy(() -> execute(session, "SET gantry_read_after = 'yesterday'"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("gantry_read_after")
                    .hasMessageContaining("yesterday");
            assertThat(queryString(session, "SELECT 'the session goes on'")).isEqualTo("the session goes on");
        }
    }

    private static int count(Connection session, int id) throws SQLException {
        return Integer.parseInt(queryString(session, "SELECT COUNT(*) FROM notes WHERE id = " + id));
    }
}
