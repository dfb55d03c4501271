package io.gantry.cdc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One row of a change: its table, what happened, and the column values before and after, in table column order.
 *
 * <p>Values are already typed as in the table and ready to be written as JSON: {@code null}; a {@link Long},
 * {@link java.math.BigInteger} (unsigned BIGINT above 2<sup>63</sup>-1), {@link java.math.BigDecimal} (DECIMAL) or
 * {@link Double} (FLOAT, DOUBLE), written as JSON numbers; a {@link String} (character types, ENUM, SET, JSON
 * documents, and dates and times in ISO-8601 form), written as a JSON string; or a {@code byte[]} (binary types,
 * BIT), written as a base64 JSON string.
 *
 * @param before the row before an update or delete; {@code null} for insert and snapshot
 * @param after  the row after an insert or update, or the row a snapshot read; {@code null} for delete
 */
public record RowChange(String database, String table, ChangeOp op, Map<String, Object> before,
                        Map<String, Object> after) {

    public RowChange {
        Objects.requireNonNull(database, "database");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(op, "op");
        before = before == null ? null : Collections.unmodifiableMap(new LinkedHashMap<>(before));
        after = after == null ? null : Collections.unmodifiableMap(new LinkedHashMap<>(after));
    }
}
