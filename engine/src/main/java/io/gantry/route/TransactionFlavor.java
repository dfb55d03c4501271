package io.gantry.route;

/** The access mode a {@link StatementKind#TRANSACTION_BEGIN} statement asks for. */
public enum TransactionFlavor {
    /** {@code START TRANSACTION READ ONLY}: may run entirely on one replica. */
    READ_ONLY,
    /** {@code BEGIN}, {@code START TRANSACTION}, {@code START TRANSACTION WITH CONSISTENT SNAPSHOT}: may write, so primary. */
    DEFAULT,
    /** {@code START TRANSACTION READ WRITE}, {@code XA START}/{@code XA BEGIN}: primary. */
    READ_WRITE
}
