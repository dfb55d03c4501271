package io.gantry.console.pools;

import io.gantry.console.engine.AdminCalls;
import io.gantry.console.rows.StatementRows;
import java.time.Clock;
import java.util.concurrent.Executor;
import javafx.collections.ObservableList;

/** Connection multiplexing's pools ({@code SHOW GANTRY POOLS}), per server and account. */
public final class PoolsViewModel extends StatementRows<Pool> {

    public PoolsViewModel(Executor ui, AdminCalls engine, Clock clock) {
        super(ui, engine, clock, "SHOW GANTRY POOLS", row -> new Pool(row.text("Server"), row.text("User"),
                row.text("Server_connections"), row.text("Cap"), row.text("Waiting"), row.text("Idle"),
                row.text("Created"), row.text("Reused"), row.text("Reuse_ratio"), row.text("Closed_idle"),
                row.text("Waited"), row.text("Wait_p99_ms")), "No pooled connection yet.", "the pools");
    }

    public ObservableList<Pool> pools() {
        return rows();
    }
}
