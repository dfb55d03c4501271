package io.gantry.console;

import io.gantry.admin.protocol.ServerState;
import java.time.Instant;

/** Server states for tests. */
public final class States {

    private States() {
    }

    public static ServerState server(int port, String role, String health, int weight) {
        return new ServerState("127.0.0.1", port, "app", "gantry", weight, "cdc, proxy", false, health,
                health.equals("down") ? Instant.parse("2026-12-02T02:30:01.204Z") : null,
                Instant.parse("2026-12-02T02:30:00Z"), 2, role, role.equals("replica") ? 0L : null, 0.4, 2.5, 0.4);
    }
}
