package io.gantry.proxy.execution;

import io.gantry.wire.ResponseFraming;
import java.util.OptionalLong;

/**
 * What the session's last statement left for {@code ROW_COUNT()} and {@code FOUND_ROWS()}, as the server that ran it
 * answers them: {@code ROW_COUNT()} is -1 after a result set or an error and the affected rows of the closing OK
 * otherwise; {@code FOUND_ROWS()} is the rows of the latest result set and keeps its value through statements that
 * send none (writes, settings, errors). Only the connection that ran the statement knows them; once that connection
 * has left the session (to the pool), a statement that asks is answered with these values instead.
 *
 * <p>Not known, and then not written in: {@code FOUND_ROWS()} before the session's first result set, after
 * {@code SQL_CALC_FOUND_ROWS} (the server's count, not the rows sent) and after an execution that opened a cursor.
 */
public final class PreviousCounts {

    private long rowCount;
    private boolean rowCountKnown;
    private long foundRows;
    private boolean foundRowsKnown;
    private boolean connectionLeft;

    /** A statement of the session completed on a connection with this response. */
    void ran(ResponseFraming framing, boolean calcFoundRows) {
        connectionLeft = false;
        rowCountKnown = true;
        if (framing.failed()) {
            rowCount = -1;
            return;
        }
        rowCount = framing.rowCount();
        long rows = framing.rowsOfLastResultSet();
        if (calcFoundRows || rows == ResponseFraming.NO_RESULT_SET && rowCount == -1) {
            foundRowsKnown = false; // the server's own count, or a cursor's rows still on the server
        } else if (rows != ResponseFraming.NO_RESULT_SET) {
            foundRows = rows;
            foundRowsKnown = true;
        }
    }

    /**
     * A statement that reads the previous one's diagnostics completed: a {@code SHOW WARNINGS}, {@code SHOW ERRORS},
     * {@code SHOW COUNT(*) ...} or {@code SHOW PROFILE(S)} leaves {@code ROW_COUNT()} at -1 (a result set) and
     * {@code FOUND_ROWS()} as it was (measured on MariaDB 11.4, but for {@code SHOW COUNT(*)}, which the server runs
     * as a one-row {@code SELECT}: its {@code FOUND_ROWS()} of 1 is not followed); {@code GET DIAGNOSTICS} leaves both.
     * One that failed leaves -1, as any error does.
     */
    void diagnosticRan(ResponseFraming framing) {
        if (framing.failed() || framing.rowsOfLastResultSet() != ResponseFraming.NO_RESULT_SET) {
            rowCount = -1;
            rowCountKnown = true;
        }
    }

    /**
     * Gantry answered the last statement with an OK of its own: {@code ROW_COUNT()} is 0, {@code FOUND_ROWS()} as it
     * was, and only the session knows it.
     */
    void answeredWithOk() {
        rowCount = 0;
        rowCountKnown = true;
        connectionLeft = true;
    }

    /** The connection that ran the last statement left the session. */
    void connectionLeft() {
        connectionLeft = true;
    }

    /** Whether a statement asking for the counts must be given them: the connection left and one of them is known. */
    boolean toWriteIn() {
        return connectionLeft && (rowCountKnown || foundRowsKnown);
    }

    /** {@code ROW_COUNT()} after the session's last statement, if known. */
    public OptionalLong rowCount() {
        return rowCountKnown ? OptionalLong.of(rowCount) : OptionalLong.empty();
    }

    /** {@code FOUND_ROWS()} after the session's last statement, if known. */
    public OptionalLong foundRows() {
        return foundRowsKnown ? OptionalLong.of(foundRows) : OptionalLong.empty();
    }
}
