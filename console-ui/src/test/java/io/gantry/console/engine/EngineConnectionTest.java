package io.gantry.console.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.admin.protocol.Request;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EngineConnectionTest {

    @TempDir
    Path dir;

    @Test
    void theBackoffStartsAt200MsDoublesAndStopsAt2s() {
        assertThat(List.of(1, 2, 3, 4, 5, 6, 40).stream().map(EngineConnection::backoff).map(Duration::toMillis))
                .containsExactly(200L, 400L, 800L, 1600L, 2000L, 2000L, 2000L);
    }

    @Test
    void withoutAnEngineItSaysWhyAndKeepsTryingUntilClosed() throws Exception {
        Path socket = dir.resolve("admin.sock");
        List<String> heard = new CopyOnWriteArrayList<>();
        EngineConnection connection = new EngineConnection(socket);
        connection.addListener(new EngineConnection.Listener() {
            @Override
            public void disconnected(String reason, Duration retryIn, int attempt) {
                heard.add(attempt + " " + reason);
            }
        });
        connection.start();
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> heard.size() >= 3);
        assertThat(heard.get(0)).startsWith("1 cannot connect to the admin socket " + socket);
        assertThat(heard.get(2)).startsWith("3 ");
        assertThat(connection.isConnected()).isFalse();
        assertThatThrownBy(() -> connection.call(id -> new Request.Ping(id)).get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(IOException.class)
                .hasMessage("not connected to the engine (" + socket + ")");
        connection.close();
        int after = heard.size();
        // Nothing to wait for but the absence of another attempt: one capped backoff and a little more.
        Thread.sleep(EngineConnection.MAX_RETRY.toMillis() + 300);
        assertThat(heard).hasSize(after);
    }
}
