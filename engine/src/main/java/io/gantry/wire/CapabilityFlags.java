package io.gantry.wire;

import java.util.StringJoiner;

/**
 * The {@code CLIENT_*} capability bits exchanged in the handshake, and MariaDB's extended
 * capabilities.
 *
 * <p>The MySQL capabilities are the 32-bit word carried in {@link HandshakeV10} and
 * {@link HandshakeResponse41}. MariaDB adds a second 32-bit word (its capabilities 32 to 63),
 * sent in otherwise reserved handshake bytes only when the server clears {@link #CLIENT_MYSQL};
 * the {@code MARIADB_CLIENT_*} constants are bits of that second word.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/group__group__cs__capabilities__flags.html">Capabilities Flags</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase.html">Connection Phase</a>
 */
public final class CapabilityFlags {

    public static final int CLIENT_LONG_PASSWORD = 1;
    /**
     * MariaDB's name for bit 0. A MariaDB server clears it in its greeting to say that the
     * extended capabilities word is present; MySQL servers and clients always set it.
     */
    public static final int CLIENT_MYSQL = CLIENT_LONG_PASSWORD;
    public static final int CLIENT_FOUND_ROWS = 1 << 1;
    public static final int CLIENT_LONG_FLAG = 1 << 2;
    public static final int CLIENT_CONNECT_WITH_DB = 1 << 3;
    public static final int CLIENT_NO_SCHEMA = 1 << 4;
    public static final int CLIENT_COMPRESS = 1 << 5;
    public static final int CLIENT_ODBC = 1 << 6;
    public static final int CLIENT_LOCAL_FILES = 1 << 7;
    public static final int CLIENT_IGNORE_SPACE = 1 << 8;
    public static final int CLIENT_PROTOCOL_41 = 1 << 9;
    public static final int CLIENT_INTERACTIVE = 1 << 10;
    public static final int CLIENT_SSL = 1 << 11;
    public static final int CLIENT_IGNORE_SIGPIPE = 1 << 12;
    public static final int CLIENT_TRANSACTIONS = 1 << 13;
    public static final int CLIENT_RESERVED = 1 << 14;
    /** Called {@code CLIENT_RESERVED2} in newer MySQL headers; 4.1 authentication. */
    public static final int CLIENT_SECURE_CONNECTION = 1 << 15;
    public static final int CLIENT_MULTI_STATEMENTS = 1 << 16;
    public static final int CLIENT_MULTI_RESULTS = 1 << 17;
    public static final int CLIENT_PS_MULTI_RESULTS = 1 << 18;
    public static final int CLIENT_PLUGIN_AUTH = 1 << 19;
    public static final int CLIENT_CONNECT_ATTRS = 1 << 20;
    public static final int CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 1 << 21;
    public static final int CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS = 1 << 22;
    public static final int CLIENT_SESSION_TRACK = 1 << 23;
    public static final int CLIENT_DEPRECATE_EOF = 1 << 24;
    public static final int CLIENT_OPTIONAL_RESULTSET_METADATA = 1 << 25;
    public static final int CLIENT_ZSTD_COMPRESSION_ALGORITHM = 1 << 26;
    public static final int CLIENT_QUERY_ATTRIBUTES = 1 << 27;
    public static final int MULTI_FACTOR_AUTHENTICATION = 1 << 28;
    public static final int CLIENT_CAPABILITY_EXTENSION = 1 << 29;
    public static final int CLIENT_SSL_VERIFY_SERVER_CERT = 1 << 30;
    public static final int CLIENT_REMEMBER_OPTIONS = 1 << 31;

    /** MariaDB extended word, bit 0 (capability 32): progress reports during long statements. */
    public static final int MARIADB_CLIENT_PROGRESS = 1;
    /** MariaDB extended word, bit 1 (capability 33): COM_MULTI (removed in later servers). */
    public static final int MARIADB_CLIENT_COM_MULTI = 1 << 1;
    /** MariaDB extended word, bit 2 (capability 34): COM_STMT_BULK_EXECUTE. */
    public static final int MARIADB_CLIENT_STMT_BULK_OPERATIONS = 1 << 2;
    /** MariaDB extended word, bit 3 (capability 35): extended column type information. */
    public static final int MARIADB_CLIENT_EXTENDED_METADATA = 1 << 3;
    /** MariaDB extended word, bit 4 (capability 36): prepared statement metadata may be skipped. */
    public static final int MARIADB_CLIENT_CACHE_METADATA = 1 << 4;
    /** MariaDB extended word, bit 5 (capability 37): per-row results from bulk execution. */
    public static final int MARIADB_CLIENT_BULK_UNIT_RESULTS = 1 << 5;

    private static final String[] NAMES = {
        "CLIENT_LONG_PASSWORD", "CLIENT_FOUND_ROWS", "CLIENT_LONG_FLAG", "CLIENT_CONNECT_WITH_DB",
        "CLIENT_NO_SCHEMA", "CLIENT_COMPRESS", "CLIENT_ODBC", "CLIENT_LOCAL_FILES",
        "CLIENT_IGNORE_SPACE", "CLIENT_PROTOCOL_41", "CLIENT_INTERACTIVE", "CLIENT_SSL",
        "CLIENT_IGNORE_SIGPIPE", "CLIENT_TRANSACTIONS", "CLIENT_RESERVED", "CLIENT_SECURE_CONNECTION",
        "CLIENT_MULTI_STATEMENTS", "CLIENT_MULTI_RESULTS", "CLIENT_PS_MULTI_RESULTS", "CLIENT_PLUGIN_AUTH",
        "CLIENT_CONNECT_ATTRS", "CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA",
        "CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS", "CLIENT_SESSION_TRACK", "CLIENT_DEPRECATE_EOF",
        "CLIENT_OPTIONAL_RESULTSET_METADATA", "CLIENT_ZSTD_COMPRESSION_ALGORITHM",
        "CLIENT_QUERY_ATTRIBUTES", "MULTI_FACTOR_AUTHENTICATION", "CLIENT_CAPABILITY_EXTENSION",
        "CLIENT_SSL_VERIFY_SERVER_CERT", "CLIENT_REMEMBER_OPTIONS",
    };

    private CapabilityFlags() {
    }

    /** True if every bit of {@code flag} is set in {@code capabilities}. */
    public static boolean has(int capabilities, int flag) {
        return (capabilities & flag) == flag;
    }

    /**
     * The capabilities in effect for a connection: those both sides announced.
     */
    public static int negotiate(int serverCapabilities, int clientCapabilities) {
        return serverCapabilities & clientCapabilities;
    }

    /** The names of the bits set, joined by {@code |}, e.g. {@code CLIENT_SSL|CLIENT_PROTOCOL_41}. */
    public static String describe(int capabilities) {
        StringJoiner names = new StringJoiner("|");
        for (int bit = 0; bit < 32; bit++) {
            if ((capabilities & (1 << bit)) != 0) {
                names.add(NAMES[bit]);
            }
        }
        return names.length() == 0 ? "0" : names.toString();
    }
}
