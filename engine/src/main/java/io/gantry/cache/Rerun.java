package io.gantry.cache;

import java.util.List;
import java.util.Objects;

/**
 * What a refresh worker needs to run an entry's statement again as the session that filled it ran it, so that the
 * answer has the bytes a session with the entry's result format would get: the login's format and the statement.
 *
 * @param format  how the worker's connection logs in and what it sets first; shared by the entries of one format
 * @param prepare the COM_STMT_PREPARE payload (command byte included) of a binary entry, null for a text one
 * @param command the COM_QUERY payload, or the COM_STMT_EXECUTE payload binding its parameter types (its statement
 *                id is replaced by the worker's)
 */
public record Rerun(Format format, byte[] prepare, byte[] command) {

    /**
     * A login's result format, as {@link QueryCaches.EntryKey#format()} tells it apart.
     *
     * @param key          tells formats apart: connections of one key give the same bytes
     * @param capabilities the capabilities the session negotiated with its client
     * @param mariaDbCapabilities the MariaDB extended capabilities (0 for none)
     * @param collationId  the client's collation
     * @param database     the session's initial database
     * @param settings     the session-state commands (payloads, command byte included) to replay, in order
     */
    public record Format(String key, int capabilities, int mariaDbCapabilities, int collationId, String database,
                         List<byte[]> settings) {

        public Format {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(database, "database");
            settings = List.copyOf(settings);
        }
    }

    public Rerun {
        Objects.requireNonNull(format, "format");
        Objects.requireNonNull(command, "command");
    }

    /** Whether the statement runs with the binary protocol (prepared, then executed). */
    public boolean binary() {
        return prepare != null;
    }

    /** The bytes it adds to its entry's weight (the format is shared). */
    int weight() {
        return command.length + (prepare == null ? 0 : prepare.length);
    }
}
