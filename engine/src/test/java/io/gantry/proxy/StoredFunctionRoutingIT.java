package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A read that calls a stored function runs on the primary, whatever the form of the call: the function here writes
 * a row and returns {@code @@server_id}. On a replica the app account (no {@code READ_ONLY ADMIN}, and the function
 * runs with the invoker's rights) gets error 1290, so a misrouted call fails the test.
 */
class StoredFunctionRoutingIT {

    /** Each form of call; {@code T} is replaced by a tag unique to the driver and the form. */
    private static final List<String> FORMS = List.of(
            "SELECT sf_write('T')",
            "select SF_WRITE ('T')",
            "SELECT CONCAT('', ABS(sf_write('T')))",
            "SELECT 0 FROM DUAL WHERE 1 = 0 UNION ALL SELECT sf_write('T')",
            "SELECT (SELECT sf_write('T'))",
            "SELECT s FROM (SELECT sf_write('T') AS s) d",
            "SELECT `app`.`sf_write`('T')",
            "SELECT app.sf_write('T')",
            "SELECT /*! sf_write('T') */",
            "/*!50000 SELECT sf_write('T') */",
            "SELECT /*M!100100 sf_write('T') */");

    private static Topology topology;
    private static ProxyHarness gantry;

    @BeforeAll
    static void createFunction() throws SQLException {
        topology = Sandboxes.shared(TopologyKind.MARIADB);
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "CREATE TABLE IF NOT EXISTS app.sf_calls (tag VARCHAR(100) PRIMARY KEY, server BIGINT)");
            // DETERMINISTIC (a white lie) so that the binary log accepts the definition without
            // log_bin_trust_function_creators; INVOKER so that on a replica the app account's missing
            // READ_ONLY ADMIN stops the write.
            execute(root, "CREATE OR REPLACE FUNCTION app.sf_write(tag VARCHAR(100)) RETURNS BIGINT "
                    + "DETERMINISTIC MODIFIES SQL DATA SQL SECURITY INVOKER "
                    + "BEGIN INSERT INTO app.sf_calls (tag, server) VALUES (tag, @@server_id); RETURN @@server_id; END");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        gantry = ProxyHarness.start(topology);
    }

    @AfterAll
    static void stopProxy() {
        gantry.close();
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void everyFormOfCallRunsOnThePrimaryAndTheSessionStaysFree(Driver driver) throws SQLException {
        List<String> tags = new ArrayList<>();
        try (Connection connection = gantry.connect(driver)) {
            for (int i = 0; i < FORMS.size(); i++) {
                String tag = driver.name() + "-" + i;
                String sql = FORMS.get(i).replace("'T'", "'" + tag + "'");
                assertThat(gantry.whereRuns(connection, sql)).as(sql).isEqualTo(topology.primary());
                tags.add(tag);
                // not pinned: the next plain read, built-ins included, goes to a replica again
                assertThat(topology.replicas())
                        .contains(gantry.whereRunsOnceSettled(connection, "SELECT ABS(CONCAT(@@server_id, ''))"));
            }
        }
        try (Connection root = topology.connectAsAdmin(topology.primary());
             PreparedStatement select = root.prepareStatement("SELECT server FROM app.sf_calls WHERE tag = ?")) {
            for (String tag : tags) {
                select.setString(1, tag);
                try (ResultSet rows = select.executeQuery()) {
                    assertThat(rows.next()).as("row %s", tag).isTrue();
                    assertThat(rows.getLong(1)).as("server of %s", tag).isEqualTo(topology.primary().port());
                }
            }
        }
    }

    @Test
    void theFunctionReallyCannotRunOnAReplica() throws SQLException {
        // The premise of the test above: called on a replica, the write fails.
        try (Connection direct = topology.connectAsApp(topology.replicas().get(0))) {
            SQLException refused = catchThrowableOfType(
                    () -> execute(direct, "SELECT sf_write('direct')"), SQLException.class);
            assertThat(refused.getErrorCode()).isEqualTo(1290);
        }
    }
}
