package io.gantry.wire;

import io.netty.buffer.ByteBuf;

/**
 * The command byte that starts every client packet of the command phase.
 *
 * <p>{@link #fromCode(int)} never fails: a byte no server defines gives {@link #UNKNOWN}, which
 * the proxy answers with an ERR packet rather than an exception.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_command_phase.html">Command Phase</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/my__command_8h.html">enum_server_command</a>
 */
public enum CommandType {
    COM_SLEEP(0x00),
    COM_QUIT(0x01),
    COM_INIT_DB(0x02),
    COM_QUERY(0x03),
    COM_FIELD_LIST(0x04),
    COM_CREATE_DB(0x05),
    COM_DROP_DB(0x06),
    COM_REFRESH(0x07),
    COM_SHUTDOWN(0x08),
    COM_STATISTICS(0x09),
    COM_PROCESS_INFO(0x0A),
    COM_CONNECT(0x0B),
    COM_PROCESS_KILL(0x0C),
    COM_DEBUG(0x0D),
    COM_PING(0x0E),
    COM_TIME(0x0F),
    COM_DELAYED_INSERT(0x10),
    COM_CHANGE_USER(0x11),
    COM_BINLOG_DUMP(0x12),
    COM_TABLE_DUMP(0x13),
    COM_CONNECT_OUT(0x14),
    COM_REGISTER_SLAVE(0x15),
    COM_STMT_PREPARE(0x16),
    COM_STMT_EXECUTE(0x17),
    COM_STMT_SEND_LONG_DATA(0x18),
    COM_STMT_CLOSE(0x19),
    COM_STMT_RESET(0x1A),
    COM_SET_OPTION(0x1B),
    COM_STMT_FETCH(0x1C),
    COM_DAEMON(0x1D),
    COM_BINLOG_DUMP_GTID(0x1E),
    COM_RESET_CONNECTION(0x1F),
    COM_CLONE(0x20),
    COM_SUBSCRIBE_GROUP_REPLICATION_STREAM(0x21),
    /** MariaDB only: execute a prepared statement with an array of parameter rows. */
    COM_STMT_BULK_EXECUTE(0xFA),
    /** Any byte that is not a known command; {@link #code()} is -1. */
    UNKNOWN(-1);

    private static final CommandType[] BY_CODE = new CommandType[256];

    static {
        for (CommandType type : values()) {
            if (type.code >= 0) {
                BY_CODE[type.code] = type;
            }
        }
    }

    private final int code;

    CommandType(int code) {
        this.code = code;
    }

    /** The command byte, or -1 for {@link #UNKNOWN}. */
    public int code() {
        return code;
    }

    /** The command for {@code code}; {@link #UNKNOWN} for anything else, including out of range. */
    public static CommandType fromCode(int code) {
        if (code < 0 || code > 0xFF) {
            return UNKNOWN;
        }
        CommandType type = BY_CODE[code];
        return type == null ? UNKNOWN : type;
    }

    /** The command of a command packet's payload, read without consuming it. */
    public static CommandType of(ByteBuf payload) {
        return payload.isReadable() ? fromCode(payload.getUnsignedByte(payload.readerIndex())) : UNKNOWN;
    }
}
