package io.gantry.console.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.Reply;
import io.gantry.console.ui.UiExecutor;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ConnectionViewModelTest {

    @Test
    void theTitleNamesTheEngineAndTheStatusSaysWhenItWaits() {
        ConnectionViewModel model = new ConnectionViewModel(UiExecutor.direct(), Path.of("/data/admin.sock"));
        assertThat(model.stateProperty().get()).isEqualTo(ConnectionViewModel.State.CONNECTING);
        assertThat(model.titleProperty().get()).isEqualTo("Gantry console - connecting to /data/admin.sock");

        model.disconnected("cannot connect to the admin socket /data/admin.sock: Connection refused",
                Duration.ofMillis(400), 2);
        assertThat(model.stateProperty().get()).isEqualTo(ConnectionViewModel.State.WAITING);
        assertThat(model.statusProperty().get()).isEqualTo("No engine at /data/admin.sock: cannot connect to the "
                + "admin socket /data/admin.sock: Connection refused. Waiting for it; attempt 3 in 0.4 s ...");

        model.connected(new Reply.Welcome(1, "0.1.0", "127.0.0.1:3307", "/data"));
        assertThat(model.stateProperty().get()).isEqualTo(ConnectionViewModel.State.CONNECTED);
        assertThat(model.titleProperty().get()).isEqualTo("Gantry console - Gantry 0.1.0 at 127.0.0.1:3307 (/data)");

        model.disconnected("the engine closed the admin connection", Duration.ofMillis(200), 1);
        assertThat(model.titleProperty().get()).endsWith("(/data) - disconnected, waiting");
        assertThat(model.statusProperty().get()).startsWith("Engine gone: the engine closed the admin connection.");
    }
}
