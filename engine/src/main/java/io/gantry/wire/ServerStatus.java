package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import java.util.StringJoiner;

/**
 * The {@code SERVER_*} status flags carried in OK and EOF packets ({@code status_flags}).
 *
 * <p>The proxy reads transaction state from these flags rather than guessing it from SQL.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_ok_packet.html">OK_Packet</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/mysql__com_8h.html">mysql_com.h (SERVER_STATUS_flags_enum)</a>
 */
public final class ServerStatus {

    /** A transaction is active. */
    public static final int SERVER_STATUS_IN_TRANS = 1;
    /** Autocommit is on. */
    public static final int SERVER_STATUS_AUTOCOMMIT = 1 << 1;
    /** Another result set (or OK) follows this one. */
    public static final int SERVER_MORE_RESULTS_EXISTS = 1 << 3;
    public static final int SERVER_QUERY_NO_GOOD_INDEX_USED = 1 << 4;
    public static final int SERVER_QUERY_NO_INDEX_USED = 1 << 5;
    /** A read-only cursor was opened by COM_STMT_EXECUTE; rows come with COM_STMT_FETCH. */
    public static final int SERVER_STATUS_CURSOR_EXISTS = 1 << 6;
    /** The last row of an open cursor has been sent. */
    public static final int SERVER_STATUS_LAST_ROW_SENT = 1 << 7;
    public static final int SERVER_STATUS_DB_DROPPED = 1 << 8;
    public static final int SERVER_STATUS_NO_BACKSLASH_ESCAPES = 1 << 9;
    public static final int SERVER_STATUS_METADATA_CHANGED = 1 << 10;
    public static final int SERVER_QUERY_WAS_SLOW = 1 << 11;
    /** This result set carries the OUT parameters of a CALL. */
    public static final int SERVER_PS_OUT_PARAMS = 1 << 12;
    /** The active transaction is read-only. */
    public static final int SERVER_STATUS_IN_TRANS_READONLY = 1 << 13;
    /** The OK packet carries session state changes (needs CLIENT_SESSION_TRACK). */
    public static final int SERVER_SESSION_STATE_CHANGED = 1 << 14;
    /** MariaDB only: sql_mode contains ANSI_QUOTES. */
    public static final int SERVER_STATUS_ANSI_QUOTES = 1 << 15;

    private static final String[] NAMES = {
        "SERVER_STATUS_IN_TRANS", "SERVER_STATUS_AUTOCOMMIT", "BIT_2", "SERVER_MORE_RESULTS_EXISTS",
        "SERVER_QUERY_NO_GOOD_INDEX_USED", "SERVER_QUERY_NO_INDEX_USED", "SERVER_STATUS_CURSOR_EXISTS",
        "SERVER_STATUS_LAST_ROW_SENT", "SERVER_STATUS_DB_DROPPED", "SERVER_STATUS_NO_BACKSLASH_ESCAPES",
        "SERVER_STATUS_METADATA_CHANGED", "SERVER_QUERY_WAS_SLOW", "SERVER_PS_OUT_PARAMS",
        "SERVER_STATUS_IN_TRANS_READONLY", "SERVER_SESSION_STATE_CHANGED", "SERVER_STATUS_ANSI_QUOTES",
    };

    private ServerStatus() {
    }

    /** True if every bit of {@code flag} is set in {@code status}. */
    public static boolean has(int status, int flag) {
        return (status & flag) == flag;
    }

    /** True if a transaction is active (read-write or read-only). */
    public static boolean inTransaction(int status) {
        return has(status, SERVER_STATUS_IN_TRANS);
    }

    /** True if the active transaction is read-only. */
    public static boolean inReadOnlyTransaction(int status) {
        return has(status, SERVER_STATUS_IN_TRANS) && has(status, SERVER_STATUS_IN_TRANS_READONLY);
    }

    /** True if another result follows. */
    public static boolean moreResultsExist(int status) {
        return has(status, SERVER_MORE_RESULTS_EXISTS);
    }

    /** True if autocommit is on. */
    public static boolean autocommit(int status) {
        return has(status, SERVER_STATUS_AUTOCOMMIT);
    }

    /** The names of the bits set, joined by {@code |}. */
    public static String describe(int status) {
        StringJoiner names = new StringJoiner("|");
        for (int bit = 0; bit < 16; bit++) {
            if ((status & (1 << bit)) != 0) {
                names.add(NAMES[bit]);
            }
        }
        for (int bit = 16; bit < 32; bit++) {
            if ((status & (1 << bit)) != 0) {
                names.add("BIT_" + bit);
            }
        }
        return names.length() == 0 ? "0" : names.toString();
    }

    /**
     * Marks the OK or EOF packet that ends a result as followed by more results ({@link #SERVER_MORE_RESULTS_EXISTS}),
     * in place: how a multi-statement answer put together from several servers' answers says it goes on.
     */
    public static void markMoreResults(ByteBuf terminator) {
        StatusPackets.addStatusFlags(terminator, SERVER_MORE_RESULTS_EXISTS);
    }
}
