package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the validator promises without a server to talk to: how long a server that never answers may take. */
class ServerValidatorTest {

    @Test
    void aServerThatAcceptsButNeverGreetsTakesTheConnectTimeoutPerTryNotTheLoginsReadTimeout() throws Exception {
        Duration timeout = Duration.ofSeconds(1);
        // A listening socket nobody accepts on: the kernel completes the connection, and no greeting ever comes.
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            UpstreamUrl url = new UpstreamUrl("127.0.0.1", silent.getLocalPort(), "app", "app", "app", 50);
            long started = System.nanoTime();

            ServerValidator.Report report = new ServerValidator(timeout, 1).validate(List.of(url));

            long millis = (System.nanoTime() - started) / 1_000_000;
            assertThat(report.unreachable()).singleElement().satisfies(u -> assertThat(u.reason())
                    .isEqualTo("connect and login did not finish within 1000 ms (tried 2 times)"));
            // Two tries of 1 s and the 250 ms pause between them; each try waited 2 s for the greeting before.
            assertThat(millis).isBetween(2_250L, 2_900L);
        }
    }
}
