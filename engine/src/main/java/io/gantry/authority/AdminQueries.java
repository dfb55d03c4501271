package io.gantry.authority;

import java.math.BigDecimal;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Admin SQL on the Authority: an operator's read-only statement, checked by {@link ReadOnlySql}, run as the reader
 * user with a timeout and a row cap, and its result set turned into a typed {@link QueryResult}. Apart from the
 * stores because it runs the operator's SQL, not Gantry's.
 */
final class AdminQueries {

    private final AuthorityDatabase database;

    AdminQueries(AuthorityDatabase database) {
        this.database = database;
    }

    /** Runs one read-only statement and hands its result set to {@code handler}; see {@link Authority#query}. */
    <T> T query(String sql, SqlFunction<ResultSet, T> handler) {
        String statementText = ReadOnlySql.check(sql);
        return database.readForOperator(connection -> {
            try (Statement statement = connection.createStatement()) {
                statement.setQueryTimeout((int) Authority.ADMIN_QUERY_TIMEOUT.toSeconds());
                statement.setMaxRows(Authority.MAX_ADMIN_ROWS);
                try (ResultSet rows = statement.executeQuery(statementText)) {
                    return handler.apply(rows);
                }
            }
        });
    }

    /** Runs one read-only statement and returns its result; see {@link Authority#select}. */
    QueryResult select(String sql) {
        return query(sql, AdminQueries::toQueryResult);
    }

    private static QueryResult toQueryResult(ResultSet rows) throws SQLException {
        ResultSetMetaData meta = rows.getMetaData();
        int count = meta.getColumnCount();
        List<String> columns = new ArrayList<>(count);
        List<QueryResult.ValueType> types = new ArrayList<>(count);
        for (int i = 1; i <= count; i++) {
            String label = meta.getColumnLabel(i);
            columns.add(label.matches("[A-Z][A-Z0-9_]*") ? label.toLowerCase(Locale.ROOT) : label);
            types.add(valueType(meta.getColumnType(i)));
        }
        List<List<Object>> values = new ArrayList<>();
        while (rows.next()) {
            List<Object> row = new ArrayList<>(count);
            for (int i = 1; i <= count; i++) {
                row.add(value(types.get(i - 1), rows.getObject(i)));
            }
            values.add(row);
        }
        return new QueryResult(columns, types, values);
    }

    private static QueryResult.ValueType valueType(int sqlType) {
        return switch (sqlType) {
            case Types.TINYINT, Types.SMALLINT, Types.INTEGER, Types.BIGINT -> QueryResult.ValueType.INTEGER;
            case Types.DECIMAL, Types.NUMERIC -> QueryResult.ValueType.DECIMAL;
            case Types.REAL, Types.FLOAT, Types.DOUBLE -> QueryResult.ValueType.DOUBLE;
            case Types.BOOLEAN, Types.BIT -> QueryResult.ValueType.BOOLEAN;
            case Types.TIMESTAMP, Types.TIMESTAMP_WITH_TIMEZONE -> QueryResult.ValueType.TIMESTAMP;
            case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.BLOB -> QueryResult.ValueType.BINARY;
            default -> QueryResult.ValueType.TEXT;
        };
    }

    /**
     * A JDBC value as the Java type of its column's {@link QueryResult.ValueType}. Timestamps without a zone are
     * read as UTC, as Gantry writes them; a value that does not fit its column's type (H2 would not give one) is
     * kept as text.
     */
    private static Object value(QueryResult.ValueType type, Object value) {
        if (value == null) {
            return null;
        }
        switch (type) {
            case INTEGER, DOUBLE, DECIMAL -> {
                if (value instanceof Number number) {
                    return type == QueryResult.ValueType.INTEGER ? (Object) number.longValue()
                            : type == QueryResult.ValueType.DOUBLE ? (Object) number.doubleValue()
                            : number instanceof BigDecimal decimal ? decimal : new BigDecimal(number.toString());
                }
            }
            case BOOLEAN -> {
                if (value instanceof Boolean flag) {
                    return flag;
                }
            }
            case TIMESTAMP -> {
                Object time = plain(value);
                if (time instanceof Instant) {
                    return time;
                }
            }
            case BINARY -> {
                if (value instanceof byte[] bytes) {
                    return bytes;
                }
            }
            case TEXT -> {
                if (value instanceof String text) {
                    return text;
                }
            }
        }
        return QueryResult.text(plain(value));
    }

    /** Date-times as UTC instants and floats as doubles, so that {@link QueryResult#text} writes them right. */
    private static Object plain(Object value) {
        if (value instanceof OffsetDateTime time) {
            return time.toInstant();
        }
        if (value instanceof Timestamp time) {
            return time.toLocalDateTime().toInstant(ZoneOffset.UTC);
        }
        if (value instanceof LocalDateTime time) {
            return time.toInstant(ZoneOffset.UTC);
        }
        if (value instanceof Float number) {
            return number.doubleValue();
        }
        return value;
    }
}
