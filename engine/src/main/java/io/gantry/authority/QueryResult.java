package io.gantry.authority;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The result of an admin {@code SELECT} as text, ready for a MySQL text result set.
 *
 * <p>Column names are as H2 labels them, except that plain identifiers H2 folded to upper case come back in lower
 * case ({@code host}, {@code rtt_ms}), as MySQL users write them. Values: SQL NULL is a Java {@code null};
 * timestamps are UTC {@code yyyy-MM-dd HH:mm:ss.SSS}; booleans {@code 1}/{@code 0}; numbers in plain decimal
 * notation (never {@code 1.0E-4}).
 *
 * @param columns column names in order
 * @param rows    each row's values in column order; unmodifiable, may hold nulls
 */
public record QueryResult(List<String> columns, List<List<String>> rows) {

    public QueryResult {
        columns = List.copyOf(columns);
        List<List<String>> copy = new ArrayList<>(rows.size());
        for (List<String> row : rows) {
            if (row.size() != columns.size()) {
                throw new IllegalArgumentException("a row has " + row.size() + " values for " + columns.size()
                        + " columns");
            }
            copy.add(Collections.unmodifiableList(new ArrayList<>(row)));
        }
        rows = Collections.unmodifiableList(copy);
    }
}
