package io.gantry.route;

/**
 * What a COM_QUERY text does, as far as routing is concerned.
 *
 * <p>For a multi-statement text the strongest kind wins: {@link #WRITE} beats
 * {@link #TRANSACTION_BEGIN}, which beats {@link #TRANSACTION_END}, which beats
 * {@link #TRANSACTION_SAVEPOINT}, which beats {@link #READ}. {@link #SESSION_STATE} stays
 * {@link #SESSION_STATE} only when every statement of the text is one; mixed with anything else
 * the text becomes a {@link #WRITE} flagged {@link StatementFlag#MIXED_SESSION_STATE}.
 */
public enum StatementKind {
    /** A plain read a replica can answer: {@code SELECT}, {@code SHOW}, {@code DESCRIBE}, {@code EXPLAIN SELECT}, {@code HELP}. */
    READ,
    /**
     * A change to this connection's session only ({@code SET NAMES}, {@code SET sql_mode}, {@code SET autocommit},
     * {@code SET TRANSACTION}, {@code USE db}, {@code SET ROLE}): the proxy runs it on the primary and replays it on
     * every backend connection of the session instead of pinning the session.
     */
    SESSION_STATE,
    /** {@code SAVEPOINT}, {@code RELEASE SAVEPOINT}, {@code ROLLBACK TO [SAVEPOINT]}: runs where the transaction runs. */
    TRANSACTION_SAVEPOINT,
    /** {@code COMMIT}, {@code ROLLBACK} (not {@code ROLLBACK TO}), {@code XA COMMIT}, {@code XA ROLLBACK}. */
    TRANSACTION_END,
    /** {@code BEGIN}, {@code START TRANSACTION ...}, {@code XA START}; see {@link TransactionFlavor}. */
    TRANSACTION_BEGIN,
    /** Everything else, including anything the classifier does not understand: it goes to the primary. */
    WRITE
}
