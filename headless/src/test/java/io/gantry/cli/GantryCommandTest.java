package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

class GantryCommandTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine commandLine = GantryCommand.newCommandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        return commandLine.execute(args);
    }

    @Test
    void withoutACommandSaysWhichOnesExist() {
        assertThat(run()).isEqualTo(2);
        assertThat(err.toString()).contains("Missing command").contains("demo");
    }

    @Test
    void runWithoutUpstreamsSaysTheFlagIsMissingAndTheThreeWaysToGiveIt(@TempDir Path dataDir) {
        assertThat(run("run", "--data-dir", dataDir.resolve("new").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("--upstream-db-url is missing: give the servers as "
                        + "mysql://user@host:port/database")
                .contains("as upstream-db-url = ... in the --config file, or in GANTRY_UPSTREAM_DB_URL")
                .doesNotContain("needs a database");
        assertThat(dataDir.resolve("new")).doesNotExist();
    }

    @Test
    void unknownFlagIsNamed() {
        assertThat(run("demo", "--replica", "2")).isEqualTo(2);
        assertThat(err.toString()).contains("Unknown options: '--replica'").contains("Possible solutions: --replicas");
    }

    @Test
    void replicaCountOutOfRangeIsRefusedBeforeAnythingStarts() {
        assertThat(run("demo", "--replicas", "12")).isEqualTo(2);
        assertThat(err.toString()).contains("--replicas must be between 0 and 9, not 12");
    }

    @Test
    void basePortOutOfRangeIsRefused() {
        assertThat(run("demo", "--base-port", "80")).isEqualTo(2);
        assertThat(err.toString()).contains("--base-port must leave room for 3 ports between 1024 and 65535, not 80");
    }

    @Test
    void anUnknownSocketTransportIsRefusedWithTheAcceptedOnes() {
        assertThat(run("demo", "--socket-transport", "kqueue")).isEqualTo(2);
        assertThat(err.toString()).contains("--socket-transport must be auto, io_uring, epoll, nio, not 'kqueue'");
    }

    @Test
    void aReplicaPreferenceOtherThanClosestOrWeightOrANegativeToleranceIsRefused() {
        assertThat(run("demo", "--follower-reads-prefer", "nearest")).isEqualTo(2);
        assertThat(err.toString()).contains("--follower-reads-prefer must be 'closest' or 'weight', got 'nearest'");
        err.getBuffer().setLength(0);
        assertThat(run("demo", "--follower-reads-closest-tolerance-ms", "-0.5")).isEqualTo(2);
        assertThat(err.toString()).contains("--follower-reads-closest-tolerance-ms must be 0 or more, got -0.5");
    }

    /** Netty's own switch turns both native transports off: asking for one then fails at once, naming why. */
    @Test
    void aSocketTransportThatCannotRunHereIsRefusedWithTheReason() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process process = new ProcessBuilder(java.toString(), "-Dio.netty.transport.noNative=true",
                "-cp", System.getProperty("java.class.path"), GantryCommand.class.getName(),
                "demo", "--socket-transport", "epoll")
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isEqualTo(2);
        assertThat(output).contains("--socket-transport epoll is not available on this machine")
                .contains("auto picks the best one that is");
    }

    @Test
    void eventLoopThreadsOutOfRangeAreRefusedBeforeAnythingStarts() {
        assertThat(run("demo", "--event-loop-threads", "0")).isEqualTo(2);
        assertThat(err.toString()).contains("--event-loop-threads must be between 1 and 256, not 0");
        err.getBuffer().setLength(0);
        assertThat(run("demo", "--event-loop-threads", "257")).isEqualTo(2);
        assertThat(err.toString()).contains("--event-loop-threads must be between 1 and 256, not 257");
        err.getBuffer().setLength(0);
        assertThat(run("demo", "--event-loop-threads", "two")).isEqualTo(2);
        assertThat(err.toString()).contains("--event-loop-threads").contains("'two' is not an int");
    }

    /** Below a millisecond the timeout is 0 ms: said in milliseconds, not as a {@code Duration} ({@code PT0S}). */
    @Test
    void aConnectTimeoutBelowAMillisecondIsRefusedInMilliseconds() {
        assertThat(run("demo", "--upstream-connect-timeout", "0.0001")).isEqualTo(2);
        assertThat(err.toString()).contains("--upstream-connect-timeout must be positive, not 0 ms")
                .doesNotContain("PT0S");
    }

    @Test
    void badChangeStreamFlagsAreRefusedBeforeAnythingStarts() {
        assertThat(run("demo", "--cdc-sink", "kafka:orders")).isEqualTo(2);
        assertThat(err.toString()).contains("--cdc-sink 'kafka:orders' is not understood: expected jsonl:PATH");
        err.getBuffer().setLength(0);
        assertThat(run("demo", "--cdc-tables", "app.orders,orders")).isEqualTo(2);
        assertThat(err.toString()).contains("--cdc-tables: 'orders' is not database.table");
        err.getBuffer().setLength(0);
        assertThat(run("demo", "--cdc-sink-rotate-mb", "0")).isEqualTo(2);
        assertThat(err.toString()).contains("--cdc-sink-rotate-mb must be at least 1, not 0");
        err.getBuffer().setLength(0);
        assertThat(run("demo", "--cdc-snapshot")).isEqualTo(2);
        assertThat(err.toString()).contains("--cdc-snapshot needs a change sink to write the snapshot to");
        err.getBuffer().setLength(0);
        assertThat(run("demo", "--no-cdc", "--cdc-sink", "jsonl:x.jsonl")).isEqualTo(2);
        assertThat(err.toString()).contains("--no-cdc turns the change stream off: it cannot go with --cdc-sink");
    }

    @Test
    void helpListsTheDemoFlags() {
        assertThat(run("demo", "--help")).isZero();
        assertThat(out.toString()).contains("--dir").contains("--replicas").contains("--base-port");
    }

    @ParameterizedTest(name = "gantry {0}")
    @ValueSource(strings = {"--version", "run --version", "demo --version", "export-health --version"})
    void versionIsPrintedByTheCommandAndEverySubcommand(String args) {
        assertThat(run(args.split(" "))).isZero();
        // The project's version, filled in at build time: never a placeholder or a "development build".
        assertThat(out.toString()).matches("gantry \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?\\R");
    }
}
