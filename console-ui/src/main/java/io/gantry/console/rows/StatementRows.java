package io.gantry.console.rows;

import io.gantry.admin.protocol.Column;
import io.gantry.admin.protocol.Reply;
import io.gantry.console.engine.AdminCalls;
import io.gantry.console.engine.EngineConnection;
import io.gantry.console.engine.Failures;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Function;
import javafx.beans.property.SimpleStringProperty;
import javafx.beans.property.StringProperty;
import javafx.collections.FXCollections;
import javafx.collections.ObservableList;

/**
 * The rows of one admin statement ({@code SHOW GANTRY POOLS}, {@code SHOW GANTRY CLUSTER}) as a table's items: read
 * when the console connects, when a server's state changes (at most once a second: a busy engine pushes several a
 * second), and on demand. Rows are read by column name, so columns the engine adds later do not shift them; why a
 * read failed, or that there are no rows, is in {@link #messageProperty()}.
 *
 * @param <T> one row
 */
public class StatementRows<T> implements EngineConnection.Listener {

    /** One row of the answer, its values read by column name ("" for a column it lacks or a NULL). */
    public static final class Row {

        private final List<String> names;
        private final List<Object> values;

        Row(List<String> names, List<Object> values) {
            this.names = names;
            this.values = values;
        }

        public String text(String column) {
            int at = names.indexOf(column);
            return at >= 0 && at < values.size() && values.get(at) != null ? String.valueOf(values.get(at)) : "";
        }
    }

    /** Reads coming from server changes are at least this far apart. */
    public static final long MIN_INTERVAL_MILLIS = 1000;

    private final Executor ui;
    private final AdminCalls engine;
    private final Clock clock;
    private final String statement;
    private final Function<Row, T> row;
    private final String noRows;
    private final String what;
    private final ObservableList<T> rows = FXCollections.observableArrayList();
    private final StringProperty message = new SimpleStringProperty("");
    private long lastRead = Long.MIN_VALUE;
    private boolean reading;

    /**
     * @param statement the admin statement whose rows these are
     * @param row       one row of the answer as a {@code T}
     * @param noRows    the message when the answer has no row
     * @param what      what is read, for the message of a failed read ("the pools")
     */
    protected StatementRows(Executor ui, AdminCalls engine, Clock clock, String statement, Function<Row, T> row,
                            String noRows, String what) {
        this.ui = ui;
        this.engine = engine;
        this.clock = clock;
        this.statement = statement;
        this.row = row;
        this.noRows = noRows;
        this.what = what;
    }

    public ObservableList<T> rows() {
        return rows;
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

    /** Reads the rows again (on the UI thread). */
    public void refresh() {
        reading = true;
        lastRead = clock.millis();
        engine.sql(statement).whenComplete((reply, failure) -> ui.execute(() -> {
            reading = false;
            if (reply instanceof Reply.Rows answer) {
                rows.setAll(read(answer));
                message.set(answer.rows().isEmpty() ? noRows : "");
            } else {
                rows.clear();
                message.set("cannot read " + what + ": " + (failure != null ? Failures.message(failure)
                        : Failures.message(reply)));
            }
        }));
    }

    private List<T> read(Reply.Rows answer) {
        List<String> names = answer.columns().stream().map(Column::name).toList();
        List<T> read = new ArrayList<>(answer.rows().size());
        for (List<Object> values : answer.rows()) {
            read.add(row.apply(new Row(names, values)));
        }
        return read;
    }
}
