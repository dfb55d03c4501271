package io.gantry.console.hosts;

import io.gantry.admin.protocol.Reply;
import io.gantry.console.engine.AdminCalls;
import io.gantry.console.engine.EngineConnection;
import io.gantry.console.engine.Failures;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import javafx.beans.property.BooleanProperty;
import javafx.beans.property.SimpleBooleanProperty;
import javafx.beans.property.SimpleStringProperty;
import javafx.beans.property.StringProperty;
import javafx.collections.FXCollections;
import javafx.collections.ObservableList;

/**
 * The hosts the engine refuses for malformed or unfinished handshakes ({@code SHOW GANTRY BLOCKED HOSTS}), read when
 * the console connects, when the timeline says a host was blocked, and on demand; and lifting a block early
 * ({@code FLUSH GANTRY HOST 'addr'}, {@code FLUSH GANTRY HOSTS}), after which the list is read again. What the last
 * action came to is in {@link #messageProperty()}, an error in red ({@link #failedProperty()}).
 */
public final class BlockedHostsViewModel implements EngineConnection.Listener {

    /** The timeline kind of a block, which makes the list be read again. */
    static final String HOST_BLOCKED = "host_blocked";

    private final Executor ui;
    private final AdminCalls engine;
    private final ObservableList<BlockedHost> hosts = FXCollections.observableArrayList();
    private final StringProperty message = new SimpleStringProperty("");
    private final BooleanProperty failed = new SimpleBooleanProperty();

    public BlockedHostsViewModel(Executor ui, AdminCalls engine) {
        this.ui = ui;
        this.engine = engine;
    }

    public ObservableList<BlockedHost> hosts() {
        return hosts;
    }

    public StringProperty messageProperty() {
        return message;
    }

    public BooleanProperty failedProperty() {
        return failed;
    }

    @Override
    public void connected(Reply.Welcome welcome) {
        refresh();
    }

    @Override
    public void push(Reply push) {
        if (push instanceof Reply.Event event && HOST_BLOCKED.equals(event.event().kind())) {
            refresh();
        }
    }

    /** Reads the list again. */
    public void refresh() {
        engine.sql("SHOW GANTRY BLOCKED HOSTS").whenComplete((reply, failure) -> ui.execute(() -> {
            if (reply instanceof Reply.Rows rows) {
                hosts.setAll(read(rows));
            } else {
                shown(false, "cannot read the blocked hosts: " + error(reply, failure));
            }
        }));
    }

    /** Lifts the block of {@code host}. */
    public void unblock(BlockedHost host) {
        flush("FLUSH GANTRY HOST '" + host.host().replace("'", "''") + "'");
    }

    /** Lifts every block. */
    public void unblockAll() {
        flush("FLUSH GANTRY HOSTS");
    }

    private void flush(String sql) {
        engine.sql(sql).whenComplete((reply, failure) -> ui.execute(() -> {
            if (reply instanceof Reply.Done done) {
                shown(true, done.message());
            } else {
                shown(false, "not lifted: " + error(reply, failure));
            }
            refresh();
        }));
    }

    private void shown(boolean ok, String text) {
        failed.set(!ok);
        message.set(text);
    }

    private static String error(Reply reply, Throwable failure) {
        return failure != null ? Failures.message(failure) : Failures.message(reply);
    }

    private static List<BlockedHost> read(Reply.Rows rows) {
        List<BlockedHost> read = new ArrayList<>(rows.rows().size());
        for (List<Object> row : rows.rows()) {
            read.add(new BlockedHost(text(row, 0), text(row, 1), text(row, 2), text(row, 3), text(row, 4)));
        }
        return read;
    }

    private static String text(List<Object> row, int column) {
        return column < row.size() && row.get(column) != null ? String.valueOf(row.get(column)) : "";
    }
}
