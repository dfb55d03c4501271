package io.gantry.proxy;

import io.gantry.wire.ErrPacket;
import java.util.List;

/** What an admin statement answers: rows, a plain OK, or an error. */
public sealed interface AdminReply {

    /** A result set of text values (null for SQL NULL). */
    record Rows(List<String> columns, List<List<String>> rows) implements AdminReply {
    }

    /** Done; {@code message} says what changed, for the log. */
    record Ok(long affectedRows, String message) implements AdminReply {
    }

    /** Refused or failed, with the MySQL error code and SQL state a client expects. */
    record Error(ErrPacket error) implements AdminReply {
    }
}
