package io.gantry.authority;

/**
 * The Authority could not do what was asked: the database failed, refused a statement (for admin SQL: a syntax
 * error, an unknown table, not enough rights), or was made by a newer Gantry. The message says what was being done;
 * the cause, when there is one, is H2's {@link java.sql.SQLException} with its SQLState and error code.
 */
public final class AuthorityException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public AuthorityException(String message) {
        super(message);
    }

    public AuthorityException(String message, Throwable cause) {
        super(message, cause);
    }
}
