package io.gantry.admin;

import io.gantry.authority.QueryResult;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * What an admin statement or request answers: typed rows, done, or failed. It holds no wire types: the proxy port
 * turns it into MySQL packets, the admin socket into JSON.
 */
public sealed interface AdminResult {

    /**
     * A result set.
     *
     * @param columns the columns in order, each with its type
     * @param rows    each row's values in column order, typed as {@link QueryResult.ValueType} says (null for SQL
     *                NULL); unmodifiable
     */
    record Rows(List<Column> columns, List<List<Object>> rows) implements AdminResult {

        public Rows {
            columns = List.copyOf(columns);
            List<List<Object>> copy = new ArrayList<>(rows.size());
            for (List<Object> row : rows) {
                if (row.size() != columns.size()) {
                    throw new IllegalArgumentException("a row has " + row.size() + " values for " + columns.size()
                            + " columns");
                }
                copy.add(Collections.unmodifiableList(new ArrayList<>(row)));
            }
            rows = Collections.unmodifiableList(copy);
        }

        /** Rows of text columns. */
        public static Rows ofText(List<String> columns, List<List<String>> rows) {
            List<List<Object>> values = new ArrayList<>(rows.size());
            for (List<String> row : rows) {
                values.add(new ArrayList<>(row));
            }
            return new Rows(columns.stream().map(name -> new Column(name, QueryResult.ValueType.TEXT)).toList(),
                    values);
        }

        /** The rows of an Authority query. */
        public static Rows of(QueryResult result) {
            List<Column> columns = new ArrayList<>(result.columns().size());
            for (int i = 0; i < result.columns().size(); i++) {
                columns.add(new Column(result.columns().get(i), result.types().get(i)));
            }
            return new Rows(columns, result.values());
        }

        /** The values as a MySQL text result set shows them ({@link QueryResult#text}); null stays null. */
        public List<List<String>> text() {
            List<List<String>> text = new ArrayList<>(rows.size());
            for (List<Object> row : rows) {
                List<String> values = new ArrayList<>(row.size());
                for (Object value : row) {
                    values.add(QueryResult.text(value));
                }
                text.add(values);
            }
            return text;
        }
    }

    /** A column of {@link Rows}: its name and the type of its values. */
    record Column(String name, QueryResult.ValueType type) {

        public Column {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(type, "type");
        }
    }

    /**
     * Done.
     *
     * @param affectedRows how many things changed (servers in a new list, 1 for a weight, 0 when nothing did)
     * @param message      what changed, in words, for the log and for clients that show it
     */
    record Done(long affectedRows, String message) implements AdminResult {

        public Done {
            Objects.requireNonNull(message, "message");
        }
    }

    /**
     * Refused or failed.
     *
     * @param failure what kind of failure, which decides the error code a SQL client sees
     * @param message why, in words an operator can act on
     */
    record Failed(Failure failure, String message) implements AdminResult {

        public Failed {
            Objects.requireNonNull(failure, "failure");
            Objects.requireNonNull(message, "message");
        }
    }

    /** The kinds of failure. */
    enum Failure {
        /** The statement or request is malformed, or names something that does not exist in it. */
        INVALID_STATEMENT,
        /** The account may not run admin statements ({@code --admin-users}). */
        ACCESS_DENIED,
        /** Well-formed, but refused in the engine's present state (an unknown server, a list that fails checks). */
        REFUSED,
        /** A write to the gantry tables, which show Gantry's state: it changes through ALTER GANTRY and the rest. */
        READ_ONLY,
        /** It broke while running (the Authority failed, a bug). */
        FAILED
    }
}
