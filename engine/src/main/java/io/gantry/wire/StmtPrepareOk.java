package io.gantry.wire;

import io.netty.buffer.ByteBuf;

/**
 * {@code COM_STMT_PREPARE_OK}: the first packet of a successful COM_STMT_PREPARE response. The
 * proxy rewrites the statement id, so besides the record there is {@link #rewriteStatementId},
 * which patches a payload in place before it is forwarded.
 *
 * @param statementId  the server's statement id, unsigned 32 bits
 * @param columnCount  number of column definitions that follow the parameter definitions
 * @param paramCount   number of parameter definitions that follow this packet
 * @param warningCount warnings raised by the prepare
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_stmt_prepare.html">COM_STMT_PREPARE</a>
 */
public record StmtPrepareOk(long statementId, int columnCount, int paramCount, int warningCount) {

    /** First byte of the packet. */
    public static final int HEADER = 0x00;
    /** Payload length as MySQL and MariaDB send it. */
    public static final int PAYLOAD_LENGTH = 12;

    private static final int STATEMENT_ID_OFFSET = 1;

    public StmtPrepareOk {
        Checks.range("statementId", statementId, 0xFFFF_FFFFL);
        Checks.range("columnCount", columnCount, 0xFFFF);
        Checks.range("paramCount", paramCount, 0xFFFF);
        Checks.range("warningCount", warningCount, 0xFFFF);
    }

    /**
     * Reads the packet. The warning count is optional on the wire (absent in packets shorter than
     * 12 bytes) and reads as 0 then.
     *
     * @throws MalformedPacketException naming the field that could not be read
     */
    public static StmtPrepareOk decode(ByteBuf buf) {
        int header = Buffers.readInt1(buf, "COM_STMT_PREPARE_OK.status");
        if (header != HEADER) {
            throw new MalformedPacketException("COM_STMT_PREPARE_OK.status", "expected 0x00, found 0x"
                    + Integer.toHexString(header));
        }
        long id = Buffers.readInt4(buf, "COM_STMT_PREPARE_OK.statement_id");
        int columns = Buffers.readInt2(buf, "COM_STMT_PREPARE_OK.num_columns");
        int params = Buffers.readInt2(buf, "COM_STMT_PREPARE_OK.num_params");
        Buffers.readInt1(buf, "COM_STMT_PREPARE_OK.reserved_1");
        int warnings = buf.isReadable() ? Buffers.readInt2(buf, "COM_STMT_PREPARE_OK.warning_count") : 0;
        return new StmtPrepareOk(id, columns, params, warnings);
    }

    /** Writes the 12-byte packet. */
    public void encode(ByteBuf buf) {
        buf.writeByte(HEADER);
        Buffers.writeFixedInt(buf, 4, statementId);
        buf.writeShortLE(columnCount);
        buf.writeShortLE(paramCount);
        buf.writeByte(0);
        buf.writeShortLE(warningCount);
    }

    /** A copy with another statement id. */
    public StmtPrepareOk withStatementId(long newId) {
        return new StmtPrepareOk(newId, columnCount, paramCount, warningCount);
    }

    /**
     * Overwrites the statement id of a COM_STMT_PREPARE_OK payload in place (reader index
     * unchanged), so the packet can be forwarded without re-encoding.
     *
     * @throws MalformedPacketException if {@code payload} is not a COM_STMT_PREPARE_OK
     */
    public static void rewriteStatementId(ByteBuf payload, long newId) {
        Checks.range("statementId", newId, 0xFFFF_FFFFL);
        int start = payload.readerIndex();
        if (payload.readableBytes() < 9 || payload.getUnsignedByte(start) != HEADER) {
            throw new MalformedPacketException("COM_STMT_PREPARE_OK.statement_id",
                    "payload of " + payload.readableBytes() + " bytes is not a COM_STMT_PREPARE_OK");
        }
        payload.setIntLE(start + STATEMENT_ID_OFFSET, (int) newId);
    }
}
