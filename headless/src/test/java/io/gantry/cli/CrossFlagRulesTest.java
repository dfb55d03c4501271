package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.session.ProxyConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Flags whose allowed values depend on another flag: a default that depends on another flag is derived from it, so
 * a flag given alone never makes a default refused; a value the user gave (on the command line, in the
 * {@code --config} file or a {@code GANTRY_*} variable) is still refused, naming both flags and their values.
 */
class CrossFlagRulesTest {

    @TempDir
    Path directory;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    // ---- --login-max-delay-ms < --connect-timeout-secs -------------------------------------------------------------

    @Test
    void theLoginDelayDefaultIsHalfOfAShortConnectTimeoutAndFiveSecondsOtherwise() {
        assertThat(config().login().maxDelay()).isEqualTo(Duration.ofSeconds(5));
        assertThat(config("--connect-timeout-secs", "3").login().maxDelay()).isEqualTo(Duration.ofMillis(1500));
        assertThat(config("--connect-timeout-secs", "1").login().maxDelay()).isEqualTo(Duration.ofMillis(500));
        assertThat(config("--connect-timeout-secs", "60").login().maxDelay()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void aConnectTimeoutFromTheEnvironmentOrTheFileDerivesTheLoginDelayToo() throws IOException {
        assertThat(config(Map.of("GANTRY_CONNECT_TIMEOUT_SECS", "3")).login().maxDelay())
                .isEqualTo(Duration.ofMillis(1500));
        Path file = write("connect-timeout-secs = 4");
        assertThat(config("--config", file.toString()).login().maxDelay()).isEqualTo(Duration.ofSeconds(2));
    }

    /** Issue 44's case: the short timeout alone gets as far as the next thing missing, the servers. */
    @Test
    void aShortConnectTimeoutAloneIsNotRefused() {
        assertThat(execute("run", "--data-dir", directory.resolve("new").toString(), "--connect-timeout-secs", "3"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--upstream-db-url is missing").doesNotContain("--login-max-delay-ms");
    }

    @Test
    void aGivenLoginDelayNotBelowTheConnectTimeoutIsRefusedNamingBoth() throws IOException {
        assertThat(refusal("--connect-timeout-secs", "3", "--login-max-delay-ms", "5000"))
                .startsWith("--login-max-delay-ms 5000 must be less than --connect-timeout-secs 3 (3000 ms)");
        // against the timeout's default, which is named with its value
        assertThat(refusal("--login-max-delay-ms", "10000"))
                .startsWith("--login-max-delay-ms 10000 must be less than --connect-timeout-secs 10 (10000 ms)");
        Path file = write("login-max-delay-ms = 5000");
        assertThat(execute("run", "--config", file.toString(), "--connect-timeout-secs", "3")).isEqualTo(2);
        assertThat(err.toString()).contains("--login-max-delay-ms 5000 must be less than --connect-timeout-secs 3")
                .contains("(--login-max-delay-ms is set in " + file + " line 1)");
    }

    // ---- --backend-min-idle <= --backend-max-idle ------------------------------------------------------------------

    @Test
    void theWarmMinimumDefaultIsTwoOrTheIdleCapWhenThatIsLess() {
        assertThat(config().pool().minIdlePerServer()).isEqualTo(2);
        assertThat(config("--backend-max-idle", "1").pool().minIdlePerServer()).isEqualTo(1);
        assertThat(config("--backend-max-idle", "0").pool().minIdlePerServer()).isZero();
        assertThat(config(Map.of("GANTRY_BACKEND_MAX_IDLE", "1")).pool().minIdlePerServer()).isEqualTo(1);
        assertThat(config("--backend-max-idle", "10").pool().minIdlePerServer()).isEqualTo(2);
    }

    @Test
    void aGivenWarmMinimumAboveTheIdleCapIsRefusedNamingBoth() {
        assertThat(refusal("--backend-max-idle", "1", "--backend-min-idle", "2"))
                .startsWith("--backend-min-idle 2 must not be more than --backend-max-idle 1");
        assertThat(refusal(Map.of("GANTRY_BACKEND_MIN_IDLE", "3"), "--backend-max-idle", "0"))
                .startsWith("--backend-min-idle 3 must not be more than --backend-max-idle 0");
        // a wrong cap is named as such, not as a warm minimum derived from it
        assertThat(refusal("--backend-max-idle", "-1"))
                .startsWith("--backend-max-idle must be between 0 and 100000, not -1");
    }

    // ---- --follower-read-staleness-ms >= twice --lag-sample-interval-ms (or 0) -------------------------------------

    @Test
    void aSlowLagSampleAloneIsNotRefusedForTheStalenessDefault() {
        assertThat(config("--lag-sample-interval-ms", "5000").readGuarantees().followerReadStaleness()).isZero();
    }

    @Test
    void aGivenStalenessBelowTwoSamplesIsRefusedNamingBoth() {
        assertThat(refusal("--lag-sample-interval-ms", "500", "--follower-read-staleness-ms", "600"))
                .startsWith("--follower-read-staleness-ms: a staleness of 600 ms is below the minimum of 1000 ms "
                        + "(twice --lag-sample-interval-ms, 500 ms)");
    }

    // ---- pairs without a default to derive: the message names what was given --------------------------------------

    @Test
    void aHalfOfTheTlsPairIsRefusedNamingTheOtherHalf() {
        assertThat(refusal("--tls-cert", "cert.pem")).isEqualTo("--tls-cert cert.pem needs --tls-key, the "
                + "certificate's private key");
        assertThat(refusal("--tls-key", "key.pem")).isEqualTo("--tls-key key.pem needs --tls-cert, the certificate "
                + "it is the key of");
    }

    @Test
    void noCdcIsRefusedWithWhatWasGivenOfTheChangeStream() {
        assertThat(execute("demo", "--no-cdc", "--cdc-tables", "app.orders")).isEqualTo(2);
        assertThat(err.toString()).contains("--no-cdc turns the change stream off: it cannot go with --cdc-tables "
                + "app.orders");
    }

    // ---- --help ----------------------------------------------------------------------------------------------------

    @Test
    void helpSaysHowEachDerivedDefaultIsDerived() {
        assertThat(execute("run", "--help")).isZero();
        String help = out.toString().replaceAll("\\s+", " ");
        assertThat(help).contains("(default: 5000, or half of --connect-timeout-secs when that is less)")
                .contains("(default: 2, or --backend-max-idle when that is less)");
    }

    // ---- --take-over needs --socket-transport epoll; --detach needs --take-over -----------------------------------

    @Test
    void aTakeOverOnATransportThatCannotAdoptTheListenerIsRefusedNamingIt() {
        assertThat(execute("run", "--take-over", "--socket-transport", "nio", "--upstream-db-url",
                "mysql://app:app@127.0.0.1:1/app", "--data-dir", directory.resolve("new").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("--take-over runs the proxy on --socket-transport epoll")
                .contains("give epoll or auto, not nio");
        assertThat(directory.resolve("new")).doesNotExist();
    }

    @Test
    void detachWithoutATakeOverIsRefusedSayingWhatItGoesWith() {
        assertThat(execute("run", "--detach", "--upstream-db-url", "mysql://app:app@127.0.0.1:1/app", "--data-dir",
                directory.resolve("new").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("--detach goes with --take-over");
        assertThat(directory.resolve("new")).doesNotExist();
    }

    // ---- helpers ---------------------------------------------------------------------------------------------------

    private static ProxyConfig config(String... runArguments) {
        return config(Map.of(), runArguments);
    }

    private static ProxyConfig config(Map<String, String> environment, String... runArguments) {
        CommandLine run = parsedRun(environment, runArguments);
        return ((RunCommand) run.getCommand()).proxy.toConfig(run);
    }

    private static String refusal(String... runArguments) {
        return refusal(Map.of(), runArguments);
    }

    private static String refusal(Map<String, String> environment, String... runArguments) {
        CommandLine run = parsedRun(environment, runArguments);
        try {
            ProxyConfig config = ((RunCommand) run.getCommand()).proxy.toConfig(run);
            throw new AssertionError("not refused: " + config);
        } catch (CommandLine.ParameterException e) {
            return e.getMessage();
        }
    }

    private static CommandLine parsedRun(Map<String, String> environment, String... runArguments) {
        CommandLine commandLine = GantryCommand.newCommandLine(environment);
        String[] arguments = new String[runArguments.length + 1];
        arguments[0] = "run";
        System.arraycopy(runArguments, 0, arguments, 1, runArguments.length);
        commandLine.parseArgs(arguments);
        return commandLine.getSubcommands().get("run");
    }

    private int execute(String... arguments) {
        CommandLine commandLine = GantryCommand.newCommandLine(Map.of());
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        return commandLine.execute(arguments);
    }

    private Path write(String... lines) throws IOException {
        Path file = Files.createTempFile(directory, "gantry", ".conf");
        Files.write(file, List.of(lines));
        return file;
    }
}
