package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gantry.TopologyKinds;
import io.gantry.proxy.RunningProxy;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.MariaDbTopology;
import io.gantry.sandbox.MySqlTopology;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every startup check, each against a real server set up to fail it. */
class ServerValidationIT {

    private static final ServerValidator VALIDATOR = new ServerValidator(Duration.ofSeconds(2));
    private static Topology topology;

    @BeforeAll
    static void topology() {
        topology = Sandboxes.shared(TopologyKind.MARIADB);
    }

    @Test
    void theSandboxListPasses() {
        ServerValidator.Report report = VALIDATOR.validate(urls(topology, "app"));
        assertThat(report.fatalProblem()).isNull();
        assertThat(report.outcomes()).allMatch(o -> o instanceof ServerValidator.Passed);
    }

    @Test
    void wrongPasswordIsFatalAndNamesTheServer() {
        List<UpstreamUrl> urls = new ArrayList<>(urls(topology, "app"));
        DatabaseServer replica = topology.replicas().get(0);
        urls.set(1, new UpstreamUrl(replica.host(), replica.port(), "app", "app", "wrong", 50));
        assertThat(VALIDATOR.validate(urls).fatalProblem())
                .startsWith(replica.address() + " failed the login check")
                .contains("Access denied")
                .doesNotContain("wrong");
    }

    @Test
    void missingDatabaseAndDifferentDatabaseNamesAreFatal() {
        assertThat(VALIDATOR.validate(urls(topology, "nowhere")).fatalProblem())
                .contains("failed the database check").contains("'nowhere' does not exist");
        List<UpstreamUrl> mixed = new ArrayList<>(urls(topology, "app"));
        DatabaseServer replica = topology.replicas().get(1);
        mixed.set(2, new UpstreamUrl(replica.host(), replica.port(), "mysql", "app", "app", 50));
        assertThat(VALIDATOR.validate(mixed).fatalProblem())
                .contains(replica.address() + " failed the database name check").contains("'mysql'");
    }

    @Test
    void serverWithoutBinaryLogFailsTheGtidCheck() {
        assertMisfitFails("no-binlog", List.of("skip-log-bin"), "failed the GTID check", "binary log is off");
    }

    @Test
    void serverWithoutStrictGtidModeFailsTheGtidCheck() {
        assertMisfitFails("no-strict", List.of("gtid-strict-mode=OFF"), "failed the GTID check",
                "gtid_strict_mode is OFF");
    }

    @Test
    void theMySqlSandboxListPasses() {
        ServerValidator.Report report = VALIDATOR.validate(urls(TopologyKinds.shared(TopologyKind.MYSQL), "app"));
        assertThat(report.fatalProblem()).isNull();
        assertThat(report.outcomes()).hasSize(3).allMatch(o -> o instanceof ServerValidator.Passed);
    }

    @Test
    void mySqlServerWithoutGtidsFailsTheGtidCheck() {
        Topology mySql = TopologyKinds.shared(TopologyKind.MYSQL);
        Optional<String> unavailable = TopologyKind.MYSQL.skipReason();
        assumeTrue(unavailable.isEmpty(), () -> "skipped: " + unavailable.orElse(""));
        try (MySqlTopology misfit = Sandboxes.startMySqlMisfit("mysql-no-gtid",
                List.of("gtid-mode=OFF", "enforce-gtid-consistency=OFF"))) {
            List<UpstreamUrl> urls = new ArrayList<>(urls(mySql, "app"));
            urls.add(new UpstreamUrl(misfit.primary().host(), misfit.primary().port(), "app", "app", "app", 50));
            assertThat(VALIDATOR.validate(urls).fatalProblem())
                    .startsWith(misfit.primary().address() + " failed the GTID check")
                    .contains("gtid_mode is OFF (MySQL needs gtid_mode=ON)");
        }
    }

    @Test
    void otherLowerCaseTableNamesFails() {
        assertMisfitFails("lctn", List.of("lower-case-table-names=1"), "failed the lower_case_table_names check",
                "it is 1");
    }

    @Test
    void otherTimeZoneFails() {
        assertMisfitFails("tz", List.of("default-time-zone=+07:00"), "failed the time zone check", "+07:00");
    }

    @Test
    void otherServerCollationFails() {
        assertMisfitFails("collation", List.of("collation-server=utf8mb4_unicode_ci"),
                "failed the server collation check", "utf8mb4_unicode_ci");
    }

    @Test
    void unreachableServerIsReportedAndTheRestStillPass() {
        List<UpstreamUrl> urls = new ArrayList<>(urls(topology, "app"));
        urls.add(new UpstreamUrl("127.0.0.1", 1, "app", "app", "app", 50));
        ServerValidator.Report report = VALIDATOR.validate(urls);
        assertThat(report.fatalProblem()).isNull();
        assertThat(report.unreachable()).singleElement()
                .satisfies(u -> assertThat(u.reason()).contains("Connection refused"));
        assertThat(VALIDATOR.validate(List.of(urls.get(3))).fatalProblem()).startsWith("no server passed validation");
    }

    @Test
    void serverThatDoesNotAnswerIsTriedAgainBeforeItCountsAsUnreachable() {
        long started = System.nanoTime();
        ServerValidator.Report report = new ServerValidator(Duration.ofSeconds(1), 2)
                .validate(List.of(new UpstreamUrl("127.0.0.1", 1, "app", "app", "app", 50)));
        assertThat(report.unreachable()).singleElement()
                .satisfies(u -> assertThat(u.reason()).endsWith("(tried 3 times)"));
        // Pauses of 250 and 500 ms between the three attempts.
        assertThat((System.nanoTime() - started) / 1_000_000).isGreaterThanOrEqualTo(750);
    }

    @Test
    void proxyRefusesToStartOnAFatalProblemAndStartsWithAnUnreachableServer() throws Exception {
        ProxyConfig config = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(2))
                .withConnectRetries(0);
        assertThatThrownBy(() -> RunningProxy.start(config, urls(topology, "nowhere"), Duration.ofSeconds(10)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("'nowhere' does not exist");
        List<UpstreamUrl> withDeadOne = new ArrayList<>(urls(topology, "app"));
        withDeadOne.add(new UpstreamUrl("127.0.0.1", 1, "app", "app", "app", 50));
        try (RunningProxy proxy = RunningProxy.start(config, withDeadOne, Duration.ofSeconds(10))) {
            assertThat(proxy.upstreams().find("127.0.0.1:1").orElseThrow().isUp()).isFalse();
            assertThat(proxy.upstreams().primary()).isPresent();
        }
    }

    private static void assertMisfitFails(String name, List<String> options, String check, String detail) {
        try (MariaDbTopology misfit = Sandboxes.startMisfit(name, options)) {
            List<UpstreamUrl> urls = new ArrayList<>(urls(topology, "app"));
            urls.add(new UpstreamUrl(misfit.primary().host(), misfit.primary().port(), "app", "app", "app", 50));
            assertThat(VALIDATOR.validate(urls).fatalProblem())
                    .startsWith(misfit.primary().address() + " " + check)
                    .contains(detail);
        }
    }

    static List<UpstreamUrl> urls(Topology topology, String database) {
        return topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), database, "app", "app", 50))
                .toList();
    }
}
