package io.gantry.console.pools;

import io.gantry.admin.protocol.Column;
import io.gantry.admin.protocol.Reply;
import io.gantry.console.engine.AdminCalls;
import io.gantry.console.engine.EngineConnection;
import io.gantry.console.engine.Failures;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import javafx.beans.property.SimpleStringProperty;
import javafx.beans.property.StringProperty;
import javafx.collections.FXCollections;
import javafx.collections.ObservableList;

/**
 * Connection multiplexing's pools ({@code SHOW GANTRY POOLS}), per server and account: read when the console
 * connects, when a server's state changes (its connection count among it, so about every health round while
 * sessions come and go; at most once a second), and on demand. Why a read failed is in {@link #messageProperty()}.
 */
public final class PoolsViewModel implements EngineConnection.Listener {

    /** Reads coming from server changes are at least this far apart. */
    static final long MIN_INTERVAL_MILLIS = 1000;

    private final Executor ui;
    private final AdminCalls engine;
    private final Clock clock;
    private final ObservableList<Pool> pools = FXCollections.observableArrayList();
    private final StringProperty message = new SimpleStringProperty("");
    private long lastRead = Long.MIN_VALUE;
    private boolean reading;

    public PoolsViewModel(Executor ui, AdminCalls engine, Clock clock) {
        this.ui = ui;
        this.engine = engine;
        this.clock = clock;
    }

    public ObservableList<Pool> pools() {
        return pools;
    }

    public StringProperty messageProperty() {
        return message;
    }

    @Override
    public void connected(Reply.Welcome welcome) {
        ui.execute(this::refresh);
    }

    @Override
    public void push(Reply push) {
        if (push instanceof Reply.ServerChanged || push instanceof Reply.ServerRemoved) {
            ui.execute(() -> {
                if (!reading && clock.millis() - lastRead >= MIN_INTERVAL_MILLIS) {
                    refresh();
                }
            });
        }
    }

    /** Reads the pools again (on the UI thread). */
    public void refresh() {
        reading = true;
        lastRead = clock.millis();
        engine.sql("SHOW GANTRY POOLS").whenComplete((reply, failure) -> ui.execute(() -> {
            reading = false;
            if (reply instanceof Reply.Rows rows) {
                pools.setAll(read(rows));
                message.set(rows.rows().isEmpty() ? "No pooled connection yet." : "");
            } else {
                message.set("cannot read the pools: " + (failure != null ? Failures.message(failure)
                        : reply instanceof Reply.Error refused ? refused.error() + ": " + refused.message()
                        : "unexpected answer " + reply));
            }
        }));
    }

    /** The rows by column name, so that columns the engine adds later do not shift them. */
    private static List<Pool> read(Reply.Rows rows) {
        List<String> names = rows.columns().stream().map(Column::name).toList();
        List<Pool> read = new ArrayList<>(rows.rows().size());
        for (List<Object> row : rows.rows()) {
            read.add(new Pool(text(row, names, "Server"), text(row, names, "User"),
                    text(row, names, "Server_connections"), text(row, names, "Cap"), text(row, names, "Waiting"),
                    text(row, names, "Idle"), text(row, names, "Created"), text(row, names, "Reused"),
                    text(row, names, "Reuse_ratio"), text(row, names, "Closed_idle"), text(row, names, "Waited"),
                    text(row, names, "Wait_p99_ms")));
        }
        return read;
    }

    private static String text(List<Object> row, List<String> names, String column) {
        int at = names.indexOf(column);
        return at >= 0 && at < row.size() && row.get(at) != null ? String.valueOf(row.get(at)) : "";
    }
}
