package io.gantry.authority;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * How the stores put Java values into the Authority's columns and take them out, written once for all of them:
 * instants are {@code TIMESTAMP WITH TIME ZONE} in UTC, and an absent number is SQL {@code NULL}.
 */
final class SqlValues {

    private SqlValues() {
    }

    /** The instant as a UTC date-time, for a {@code TIMESTAMP WITH TIME ZONE} parameter. */
    static OffsetDateTime utc(Instant at) {
        return OffsetDateTime.ofInstant(at, ZoneOffset.UTC);
    }

    /** The {@code TIMESTAMP WITH TIME ZONE} column as an instant, or null for SQL {@code NULL}. */
    static Instant instant(ResultSet rows, int column) throws SQLException {
        OffsetDateTime time = rows.getObject(column, OffsetDateTime.class);
        return time == null ? null : time.toInstant();
    }

    /** Sets the parameter to {@code value}, or to SQL {@code NULL} of {@code sqlType} when it is null. */
    static void setNullable(PreparedStatement statement, int index, Object value, int sqlType)
            throws SQLException {
        if (value == null) {
            statement.setNull(index, sqlType);
        } else {
            statement.setObject(index, value, sqlType);
        }
    }
}
