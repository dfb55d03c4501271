package io.gantry.authority;

import java.sql.SQLException;

/**
 * A function that may throw {@link SQLException}, for reading a {@link java.sql.ResultSet} in
 * {@link Authority#query}.
 *
 * @param <T> what it reads from
 * @param <R> what it returns
 */
@FunctionalInterface
public interface SqlFunction<T, R> {

    /** Applies the function. */
    R apply(T value) throws SQLException;
}
