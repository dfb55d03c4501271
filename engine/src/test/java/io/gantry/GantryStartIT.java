package io.gantry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.authority.Retention;
import io.gantry.cdc.CdcSettings;
import io.gantry.cdc.TableFilter;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Starting the whole engine: a start that fails part-way leaves nothing behind; a taken port fails it first. */
class GantryStartIT {

    private static Topology topology;

    @TempDir
    Path dataDir;

    @BeforeAll
    static void topology() {
        topology = Sandboxes.shared(TopologyKind.MARIADB);
    }

    @Test
    void aTakenListenPortIsSaidAtOnceWithItsAddressBeforeAnythingStarts() throws Exception {
        Set<String> threadsBefore = gantryThreads();
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = taken.getLocalPort();
            long started = System.nanoTime();
            assertThatThrownBy(() -> Gantry.start(options(port)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("--listen 127.0.0.1:" + port + ": cannot listen there: another process listens on "
                            + "that address already (ss -ltnp 'sport = :" + port + "' names it)");
            long millis = (System.nanoTime() - started) / 1_000_000;
            System.out.println("GantryStartIT: a taken --listen port failed the start after " + millis + " ms");
            // Before the Authority is opened and the servers are checked: nothing was made or started.
            assertThat(dataDir).isEmptyDirectory();
            assertThat(millis).isLessThan(1000);
            assertThat(gantryThreads()).as("threads left by the failed start").isEqualTo(threadsBefore);
        }
        try (Gantry again = Gantry.start(options(0))) {
            assertThat(again.cdc()).isPresent();
            assertThat(again.upstreams().primary()).isPresent();
        }
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(gantryThreads()).as("threads left by a stopped Gantry").isEqualTo(threadsBefore));
    }

    @Test
    void aStartWhoseAdminSocketCannotBeMadeStopsTheProxyItStarted() throws Exception {
        Set<String> threadsBefore = gantryThreads();
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        java.nio.file.Files.createDirectories(dataDir);
        Path notASocket = java.nio.file.Files.writeString(dataDir.resolve("admin.sock"), "not a socket");
        assertThatThrownBy(() -> Gantry.start(options(port))).hasMessageContaining("exists and is not a socket");
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(gantryThreads()).as("threads left by the failed start").isEqualTo(threadsBefore));
        // The proxy port it had opened is free again.
        try (ServerSocket again = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThat(again.isBound()).isTrue();
        }
        java.nio.file.Files.delete(notASocket);
        try (Gantry gantry = Gantry.start(options(port))) {
            assertThat(gantry.adminSocket()).exists();
        }
    }

    /** Live threads of Gantry's own, by name without the numbers Netty and pools add. */
    private static Set<String> gantryThreads() {
        Set<String> names = new TreeSet<>();
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (thread.isAlive() && thread.getName().startsWith("gantry-")) {
                names.add(thread.getName().replaceAll("[-0-9]+$", ""));
            }
        }
        return names;
    }

    private Gantry.Options options(int port) {
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", port))
                .withConnectTimeout(Duration.ofSeconds(2));
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        return new Gantry.Options(proxy, urls, List.of(), dataDir, Duration.ofSeconds(1), Retention.DEFAULT, Set.of(),
                Optional.of(new CdcSettings(Duration.ofSeconds(1), 1, Optional.of(dataDir.resolve("changes.jsonl")),
                        1 << 20, TableFilter.parse("app.*", "app"), false)));
    }
}
