package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.sandbox.MariaDbTopology;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.TopologyKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real {@code mariadb} command-line client through Gantry. */
class MariaDbClientIT {

    private static MariaDbTopology topology;
    private static ProxyHarness gantry;

    @BeforeAll
    static void startProxy() {
        topology = (MariaDbTopology) Sandboxes.shared(TopologyKind.MARIADB);
        gantry = ProxyHarness.start(topology);
    }

    @AfterAll
    static void stopProxy() {
        gantry.close();
    }

    @Test
    void readsGoToAReplicaAndHintedReadsToThePrimary() throws Exception {
        String replicaId = client("SELECT @@server_id").trim();
        assertThat(topology.replicas().stream().map(s -> Integer.toString(s.port()))).contains(replicaId);
        assertThat(client("/*#mode=READWRITE*/ SELECT @@server_id").trim())
                .isEqualTo(Integer.toString(topology.primary().port()));
    }

    @Test
    void writeThenReadInOneSessionAndAnErrorDoesNotEndIt() throws Exception {
        String output = client("CREATE TABLE cli_rows (id INT PRIMARY KEY, note VARCHAR(20));"
                + " INSERT INTO cli_rows VALUES (1, 'one'), (2, 'two');"
                + " SELECT note FROM cli_rows WHERE id = 2 FOR UPDATE;"
                + " DROP TABLE cli_rows;");
        assertThat(output).contains("two");
    }

    @Test
    void loadDataLocalInfileStreamsTheClientsFile(@TempDir Path directory) throws Exception {
        Path file = directory.resolve("rows.csv");
        List<String> lines = new ArrayList<>();
        // About 25 MB: far more than a socket buffer, so the upload has to wait for the server now and then.
        String padding = "x".repeat(100);
        for (int i = 1; i <= 200_000; i++) {
            lines.add(i + ",row " + i + "," + padding);
        }
        Files.write(file, lines, StandardCharsets.UTF_8);
        String output = client("CREATE TABLE cli_load (id INT PRIMARY KEY, note VARCHAR(20), pad VARCHAR(100));"
                + " LOAD DATA LOCAL INFILE '" + file + "' INTO TABLE cli_load FIELDS TERMINATED BY ',';"
                + " SELECT COUNT(*), MAX(id) FROM cli_load;"
                + " DROP TABLE cli_load;");
        assertThat(output).contains("200000\t200000");
    }

    private static String client(String sql) throws IOException, InterruptedException {
        // --comments: the mariadb client strips comments, and with them Gantry's hints, unless told not to.
        Process process = new ProcessBuilder(topology.installation().client().toString(), "--skip-ssl", "--comments",
                "--local-infile=1", "--batch", "--skip-column-names", "-h", "127.0.0.1", "-P",
                Integer.toString(gantry.port()), "-u", "app", "-papp", "app", "-e", sql)
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("mariadb client output: %s", output).isZero();
        return output;
    }
}
