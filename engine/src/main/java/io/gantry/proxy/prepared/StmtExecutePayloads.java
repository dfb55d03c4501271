package io.gantry.proxy.prepared;

import io.gantry.wire.Buffers;
import io.gantry.wire.CommandType;
import io.gantry.wire.MalformedPacketException;
import io.netty.buffer.ByteBuf;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * Reading and rewriting the client's prepared-statement command payloads, so one client statement
 * can run on several backends under different statement ids.
 *
 * <p>{@code COM_STMT_EXECUTE}, as read here:
 * <pre>
 * int&lt;1&gt;  status              0x17
 * int&lt;4&gt;  statement_id
 * int&lt;1&gt;  flags               cursor type (see the CURSOR_TYPE_* constants)
 * int&lt;4&gt;  iteration_count     always 1
 * if num_params &gt; 0:
 *   binary   null_bitmap         (num_params + 7) / 8 bytes, bit i of byte i / 8 is parameter i
 *   int&lt;1&gt;  new_params_bind_flag
 *   if new_params_bind_flag:
 *     int&lt;2&gt; parameter_type     per parameter: enum_field_types, then 0x80 if unsigned
 *   binary   parameter_values    not parsed here
 * </pre>
 * {@code num_params} is not in the packet: it is the count from the statement's
 * COM_STMT_PREPARE_OK, so every method that looks past {@code iteration_count} takes it.
 *
 * <p>CLIENT_QUERY_ATTRIBUTES is not implemented: Gantry does not offer that capability, so clients
 * never send the {@code parameter_count} and parameter names it adds, and a PARAMETER_COUNT_AVAILABLE
 * flag is ignored, as the server ignores it without the capability. MariaDB's
 * COM_STMT_BULK_EXECUTE shares the statement-id layout (so {@link #statementId} and
 * {@link #withStatementId} accept it) but its body is not parsed.
 *
 * <p>Nothing here consumes or releases the buffers passed in; the buffers returned are new, owned
 * by the caller.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_stmt_execute.html">COM_STMT_EXECUTE</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_stmt_send_long_data.html">COM_STMT_SEND_LONG_DATA</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_stmt_reset.html">COM_STMT_RESET</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_stmt_close.html">COM_STMT_CLOSE</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_stmt_fetch.html">COM_STMT_FETCH</a>
 */
public final class StmtExecutePayloads {

    /** {@code flags}: no cursor, rows come with the response. */
    public static final int CURSOR_TYPE_NO_CURSOR = 0x00;
    /** {@code flags}: open a read-only cursor; rows come later through COM_STMT_FETCH. */
    public static final int CURSOR_TYPE_READ_ONLY = 0x01;
    /** {@code flags}: cursor for update (not implemented by servers, which treat it as read-only). */
    public static final int CURSOR_TYPE_FOR_UPDATE = 0x02;
    /** {@code flags}: scrollable cursor (not implemented by servers). */
    public static final int CURSOR_TYPE_SCROLLABLE = 0x04;
    /** {@code flags}: a parameter count follows; only meaningful with CLIENT_QUERY_ATTRIBUTES. */
    public static final int PARAMETER_COUNT_AVAILABLE = 0x08;

    private static final int CURSOR_TYPES = CURSOR_TYPE_READ_ONLY | CURSOR_TYPE_FOR_UPDATE | CURSOR_TYPE_SCROLLABLE;
    private static final int STATEMENT_ID_OFFSET = 1;
    private static final long MAX_STATEMENT_ID = 0xFFFF_FFFFL;
    /** Command byte, statement_id, flags, iteration_count: where the NULL bitmap starts. */
    public static final int NULL_BITMAP_OFFSET = 1 + 4 + 1 + 4;

    private StmtExecutePayloads() {
    }

    /**
     * The part of a COM_STMT_EXECUTE before the parameter values.
     *
     * @param statementId    the id the client addressed, unsigned 32 bits
     * @param flags          the cursor-type flags byte
     * @param iterationCount always 1 in practice
     * @param paramCount     {@code num_params} the header was read for
     * @param nullBitmap     {@code (paramCount + 7) / 8} bytes; empty without parameters
     * @param newParamsBound true if {@code new_params_bind_flag} is set (any non-zero byte, as the
     *                       server reads it); always false without parameters
     * @param paramTypes     {@code 2 * paramCount} bytes when {@code newParamsBound}, else empty
     * @param valuesOffset   where the parameter values start (or the header ends, without
     *                       parameters), counted from the payload's reader index
     */
    public record ExecuteHeader(long statementId, int flags, long iterationCount, int paramCount, byte[] nullBitmap,
                                boolean newParamsBound, byte[] paramTypes, int valuesOffset) {

        /**
         * @throws IllegalArgumentException if the bitmap or the types do not fit {@code paramCount}
         */
        public ExecuteHeader {
            if (nullBitmap.length != nullBitmapLength(paramCount)) {
                throw new IllegalArgumentException("a NULL bitmap for " + paramCount + " parameters has "
                        + nullBitmapLength(paramCount) + " bytes, got " + nullBitmap.length);
            }
            if (paramTypes.length != (newParamsBound ? 2 * paramCount : 0)) {
                throw new IllegalArgumentException("expected " + (newParamsBound ? 2 * paramCount : 0)
                        + " bytes of parameter types, got " + paramTypes.length);
            }
            nullBitmap = nullBitmap.clone();
            paramTypes = paramTypes.clone();
        }

        /** True if parameter {@code index} (from 0) is marked NULL in the bitmap. */
        public boolean isNull(int index) {
            if (index < 0 || index >= paramCount) {
                throw new IndexOutOfBoundsException("parameter " + index + " of " + paramCount);
            }
            return (nullBitmap[index >> 3] & (1 << (index & 7))) != 0;
        }

        /** True if the flags ask for a cursor, so the rows stay on the backend until COM_STMT_FETCH. */
        public boolean opensCursor() {
            return (flags & CURSOR_TYPES) != 0;
        }

        @Override
        public byte[] nullBitmap() {
            return nullBitmap.clone();
        }

        @Override
        public byte[] paramTypes() {
            return paramTypes.clone();
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof ExecuteHeader that
                    && statementId == that.statementId
                    && flags == that.flags
                    && iterationCount == that.iterationCount
                    && paramCount == that.paramCount
                    && Arrays.equals(nullBitmap, that.nullBitmap)
                    && newParamsBound == that.newParamsBound
                    && Arrays.equals(paramTypes, that.paramTypes)
                    && valuesOffset == that.valuesOffset;
        }

        @Override
        public int hashCode() {
            int result = Long.hashCode(statementId);
            result = 31 * result + flags;
            result = 31 * result + Long.hashCode(iterationCount);
            result = 31 * result + paramCount;
            result = 31 * result + Arrays.hashCode(nullBitmap);
            result = 31 * result + Boolean.hashCode(newParamsBound);
            result = 31 * result + Arrays.hashCode(paramTypes);
            return 31 * result + valuesOffset;
        }

        @Override
        public String toString() {
            HexFormat hex = HexFormat.of();
            return "ExecuteHeader[statementId=" + statementId + ", flags=" + flags + ", iterationCount="
                    + iterationCount + ", paramCount=" + paramCount + ", nullBitmap=" + hex.formatHex(nullBitmap)
                    + ", newParamsBound=" + newParamsBound + ", paramTypes=" + hex.formatHex(paramTypes)
                    + ", valuesOffset=" + valuesOffset + "]";
        }
    }

    /**
     * The {@code statement_id} of a COM_STMT_EXECUTE, SEND_LONG_DATA, RESET, CLOSE, FETCH or
     * BULK_EXECUTE payload, read without consuming it.
     *
     * @throws IllegalArgumentException if the payload is not one of those commands
     * @throws MalformedPacketException if the id is cut off
     */
    public static long statementId(ByteBuf payload) {
        requireStatementId(payload);
        return payload.getUnsignedIntLE(payload.readerIndex() + STATEMENT_ID_OFFSET);
    }

    /**
     * Overwrites the {@code statement_id} in place (reader index unchanged), for a payload the
     * caller owns and will not need again with the client's id.
     *
     * @throws IllegalArgumentException as {@link #statementId}, or if {@code newId} is not an
     *                                  unsigned 32-bit value
     * @throws MalformedPacketException if the id is cut off
     */
    public static void setStatementId(ByteBuf payload, long newId) {
        checkStatementId(newId);
        requireStatementId(payload);
        payload.setIntLE(payload.readerIndex() + STATEMENT_ID_OFFSET, (int) newId);
    }

    /**
     * A copy of the payload with another {@code statement_id}; the rest is byte-for-byte the same.
     *
     * @throws IllegalArgumentException as {@link #setStatementId}
     * @throws MalformedPacketException if the id is cut off
     */
    public static ByteBuf withStatementId(ByteBuf payload, long newId) {
        checkStatementId(newId);
        requireStatementId(payload);
        ByteBuf copy = payload.copy();
        copy.setIntLE(STATEMENT_ID_OFFSET, (int) newId);
        return copy;
    }

    /**
     * Reads a COM_STMT_EXECUTE up to its parameter values, without consuming it.
     *
     * @param paramCount {@code num_params} of the statement's COM_STMT_PREPARE_OK
     * @throws IllegalArgumentException if the payload is not a COM_STMT_EXECUTE or
     *                                  {@code paramCount} is not 0 to 65535
     * @throws MalformedPacketException naming the field that is cut off
     */
    public static ExecuteHeader parseExecute(ByteBuf payload, int paramCount) {
        requireExecute(payload);
        checkParamCount(paramCount);
        ByteBuf view = payload.duplicate();
        view.skipBytes(1);
        long statementId = Buffers.readInt4(view, "COM_STMT_EXECUTE.statement_id");
        int flags = Buffers.readInt1(view, "COM_STMT_EXECUTE.flags");
        long iterationCount = Buffers.readInt4(view, "COM_STMT_EXECUTE.iteration_count");
        if (paramCount == 0) {
            return new ExecuteHeader(statementId, flags, iterationCount, 0, new byte[0], false, new byte[0],
                    view.readerIndex() - payload.readerIndex());
        }
        byte[] nullBitmap = Buffers.readFixedBytes(view, nullBitmapLength(paramCount), "COM_STMT_EXECUTE.null_bitmap");
        boolean bound = Buffers.readInt1(view, "COM_STMT_EXECUTE.new_params_bind_flag") != 0;
        byte[] types = bound
                ? Buffers.readFixedBytes(view, 2 * paramCount, "COM_STMT_EXECUTE.parameter_type")
                : new byte[0];
        return new ExecuteHeader(statementId, flags, iterationCount, paramCount, nullBitmap, bound, types,
                view.readerIndex() - payload.readerIndex());
    }

    /**
     * Whether a COM_STMT_EXECUTE binds parameter types ({@code new_params_bind_flag}), checking that its header is
     * all there as {@link #parseExecute} does, without reading the rest: most executions bind none, and this runs
     * for every one.
     *
     * @param paramCount {@code num_params} of the statement, 1 or more
     * @throws MalformedPacketException naming the field that is cut off
     */
    public static boolean bindsNewTypes(ByteBuf payload, int paramCount) {
        requireExecute(payload);
        checkParamCount(paramCount);
        require(payload, STATEMENT_ID_OFFSET, 4, "COM_STMT_EXECUTE.statement_id");
        require(payload, STATEMENT_ID_OFFSET + 4, 1, "COM_STMT_EXECUTE.flags");
        require(payload, STATEMENT_ID_OFFSET + 5, 4, "COM_STMT_EXECUTE.iteration_count");
        int bitmapLength = nullBitmapLength(paramCount);
        require(payload, NULL_BITMAP_OFFSET, bitmapLength, "COM_STMT_EXECUTE.null_bitmap");
        int flagOffset = NULL_BITMAP_OFFSET + bitmapLength;
        require(payload, flagOffset, 1, "COM_STMT_EXECUTE.new_params_bind_flag");
        return payload.getByte(payload.readerIndex() + flagOffset) != 0;
    }

    /**
     * What an execution's answer depends on, for the query caches: its NULL bitmap, its parameter types (bound by it,
     * or {@code rememberedTypes} when it binds none) and its values, one char per byte. Null when the execution opens
     * a cursor (its answer then has no rows) or binds no types and none are remembered. Call after
     * {@link #bindsNewTypes} has checked the header.
     *
     * @param rememberedTypes the types the client bound last, or null
     */
    public static String parameterKey(ByteBuf payload, int paramCount, byte[] rememberedTypes) {
        int base = payload.readerIndex();
        if (payload.getByte(base + STATEMENT_ID_OFFSET + 4) != 0) {
            return null;
        }
        if (paramCount == 0) {
            return "";
        }
        int bitmapLength = nullBitmapLength(paramCount);
        int flagOffset = NULL_BITMAP_OFFSET + bitmapLength;
        boolean bound = payload.getByte(base + flagOffset) != 0;
        if (!bound && rememberedTypes == null) {
            return null;
        }
        int valuesOffset = flagOffset + 1 + (bound ? 2 * paramCount : 0);
        StringBuilder key = new StringBuilder(payload.readableBytes() + (bound ? 0 : 2 * paramCount));
        appendBytes(key, payload, base + NULL_BITMAP_OFFSET, bitmapLength);
        if (bound) {
            appendBytes(key, payload, base + flagOffset + 1, 2 * paramCount);
        } else {
            for (byte type : rememberedTypes) {
                key.append((char) (type & 0xFF));
            }
        }
        appendBytes(key, payload, base + valuesOffset, payload.readableBytes() - valuesOffset);
        return key.toString();
    }

    /**
     * The first parameter's value when it is a non-NULL integer (TINY, SHORT, LONG, LONGLONG; unsigned above
     * 2<sup>63</sup>-1 excepted), else null: the key of a query whose condition is {@code key = ?} first.
     *
     * @param types the execution's parameter types ({@code 2 * paramCount} bytes)
     */
    public static Long firstIntegerParameter(ByteBuf payload, int paramCount, byte[] types) {
        int base = payload.readerIndex();
        if (paramCount == 0 || types == null || (payload.getByte(base + NULL_BITMAP_OFFSET) & 1) != 0) {
            return null;
        }
        int flagOffset = NULL_BITMAP_OFFSET + nullBitmapLength(paramCount);
        boolean bound = payload.getByte(base + flagOffset) != 0;
        int at = base + flagOffset + 1 + (bound ? 2 * paramCount : 0);
        boolean unsigned = (types[1] & 0x80) != 0;
        int size = switch (types[0] & 0xFF) {
            case 0x01 -> 1;
            case 0x02 -> 2;
            case 0x03 -> 4;
            case 0x08 -> 8;
            default -> 0;
        };
        if (size == 0 || at + size > base + payload.readableBytes()) {
            return null;
        }
        return switch (size) {
            case 1 -> unsigned ? (long) payload.getUnsignedByte(at) : (long) payload.getByte(at);
            case 2 -> unsigned ? (long) payload.getUnsignedShortLE(at) : (long) payload.getShortLE(at);
            case 4 -> unsigned ? payload.getUnsignedIntLE(at) : (long) payload.getIntLE(at);
            default -> {
                long value = payload.getLongLE(at);
                yield unsigned && value < 0 ? null : value;
            }
        };
    }

    /** A parameter value {@link #parameterValues} does not decode (a date, a time, a bit field). */
    public static final Object NOT_DECODED = new Object() {
        @Override
        public String toString() {
            return "(not decoded)";
        }
    };

    /**
     * The parameter values of an execution, in order: {@code null} for a NULL, a {@link Long} for a signed integer
     * type (a {@link java.math.BigInteger} for an unsigned one), a {@link Double} for FLOAT and DOUBLE, the bytes
     * ({@code byte[]}) of a string, blob, decimal or JSON value, and {@link #NOT_DECODED} for the rest. Null when the
     * payload is cut short or has no types to read the values by.
     *
     * @param types the execution's parameter types ({@code 2 * paramCount} bytes): bound by it, or remembered
     */
    public static List<Object> parameterValues(ByteBuf payload, int paramCount, byte[] types) {
        if (paramCount == 0) {
            return List.of();
        }
        if (types == null || types.length != 2 * paramCount) {
            return null;
        }
        int base = payload.readerIndex();
        int end = base + payload.readableBytes();
        int bitmapLength = nullBitmapLength(paramCount);
        int flagOffset = NULL_BITMAP_OFFSET + bitmapLength;
        if (base + flagOffset >= end) {
            return null;
        }
        boolean bound = payload.getByte(base + flagOffset) != 0;
        int at = base + flagOffset + 1 + (bound ? 2 * paramCount : 0);
        List<Object> values = new ArrayList<>(paramCount);
        for (int i = 0; i < paramCount; i++) {
            if ((payload.getByte(base + NULL_BITMAP_OFFSET + i / 8) & (1 << (i % 8))) != 0) {
                values.add(null);
                continue;
            }
            int type = types[2 * i] & 0xFF;
            boolean unsigned = (types[2 * i + 1] & 0x80) != 0;
            int fixed = switch (type) {
                case 0x01 -> 1;
                case 0x02, 0x0d -> 2;
                case 0x03, 0x09, 0x04 -> 4;
                case 0x08, 0x05 -> 8;
                case 0x06 -> 0;
                default -> -1;
            };
            if (type == 0x06) {
                values.add(null);
            } else if (fixed > 0) {
                if (at + fixed > end) {
                    return null;
                }
                values.add(switch (type) {
                    case 0x04 -> (double) Float.intBitsToFloat(payload.getIntLE(at));
                    case 0x05 -> Double.longBitsToDouble(payload.getLongLE(at));
                    case 0x01 -> unsigned ? (long) payload.getUnsignedByte(at) : (long) payload.getByte(at);
                    case 0x02, 0x0d -> unsigned ? (long) payload.getUnsignedShortLE(at) : (long) payload.getShortLE(at);
                    case 0x03, 0x09 -> unsigned ? payload.getUnsignedIntLE(at) : (long) payload.getIntLE(at);
                    default -> {
                        long value = payload.getLongLE(at);
                        yield unsigned && value < 0 ? new BigInteger(Long.toUnsignedString(value)) : value;
                    }
                });
                at += fixed;
            } else if (type == 0x07 || type == 0x0a || type == 0x0b || type == 0x0c) {
                if (at >= end) {
                    return null;
                }
                at += 1 + payload.getUnsignedByte(at); // a length byte, then the date or time
                values.add(NOT_DECODED);
            } else {
                ByteBuf view = payload.duplicate();
                view.readerIndex(at);
                long length;
                try {
                    length = Buffers.readLenEncInt(view, "COM_STMT_EXECUTE.parameter_value");
                } catch (MalformedPacketException e) {
                    return null;
                }
                if (length < 0 || view.readerIndex() + length > end) {
                    return null;
                }
                byte[] bytes = new byte[(int) length];
                view.getBytes(view.readerIndex(), bytes);
                values.add(type == 0x10 ? NOT_DECODED : bytes);
                at = view.readerIndex() + (int) length;
            }
        }
        return values;
    }

    private static void appendBytes(StringBuilder key, ByteBuf payload, int from, int length) {
        for (int i = 0; i < length; i++) {
            key.append((char) (payload.getByte(from + i) & 0xFF));
        }
    }

    /**
     * A copy of a COM_STMT_EXECUTE whose {@code new_params_bind_flag} is 0, turned into the payload
     * the client would have sent with the flag set to 1 and {@code paramTypes} bound: for a backend
     * that has not seen the statement's parameter types yet.
     *
     * @param paramCount {@code num_params} of the statement, 1 or more
     * @param paramTypes {@code 2 * paramCount} bytes, as taken from an earlier
     *                   {@link ExecuteHeader#paramTypes()}
     * @throws IllegalArgumentException if the payload is not a COM_STMT_EXECUTE, if it already
     *                                  binds types, if {@code paramCount} is 0, or if
     *                                  {@code paramTypes} has the wrong length
     * @throws MalformedPacketException naming the field that is cut off
     */
    public static ByteBuf withParamTypes(ByteBuf payload, int paramCount, byte[] paramTypes) {
        if (paramCount == 0) {
            throw new IllegalArgumentException("a statement without parameters has no parameter types to bind");
        }
        ExecuteHeader header = parseExecute(payload, paramCount);
        if (paramTypes.length != 2 * paramCount) {
            throw new IllegalArgumentException("expected " + 2 * paramCount + " bytes of parameter types for "
                    + paramCount + " parameters, got " + paramTypes.length);
        }
        if (header.newParamsBound()) {
            throw new IllegalArgumentException("the COM_STMT_EXECUTE already binds its parameter types");
        }
        int start = payload.readerIndex();
        int flagOffset = header.valuesOffset() - 1;
        int valuesLength = payload.readableBytes() - header.valuesOffset();
        ByteBuf out = payload.alloc().buffer(payload.readableBytes() + paramTypes.length);
        out.writeBytes(payload, start, flagOffset);
        out.writeByte(1);
        out.writeBytes(paramTypes);
        out.writeBytes(payload, start + header.valuesOffset(), valuesLength);
        return out;
    }

    /** Bytes of the NULL bitmap of a COM_STMT_EXECUTE for {@code paramCount} parameters. */
    public static int nullBitmapLength(int paramCount) {
        return (paramCount + 7) / 8;
    }

    /** A statement command whose id is all there; the field is named only when it is not (per execution). */
    private static void requireStatementId(ByteBuf payload) {
        CommandType command = statementCommand(payload);
        if (payload.readableBytes() < STATEMENT_ID_OFFSET + 4) {
            require(payload, STATEMENT_ID_OFFSET, 4, command + ".statement_id");
        }
    }

    /** {@code length} bytes at {@code offset} must be there; else the field is named with what is left from there. */
    private static void require(ByteBuf payload, int offset, int length, String field) {
        if (payload.readableBytes() < offset + length) {
            Buffers.require(payload.duplicate().skipBytes(offset), length, field);
        }
    }

    private static CommandType statementCommand(ByteBuf payload) {
        CommandType command = CommandType.of(payload);
        return switch (command) {
            case COM_STMT_EXECUTE, COM_STMT_SEND_LONG_DATA, COM_STMT_RESET, COM_STMT_CLOSE, COM_STMT_FETCH,
                 COM_STMT_BULK_EXECUTE -> command;
            default -> throw new IllegalArgumentException("not a statement command payload: " + command
                    + " (" + payload.readableBytes() + " bytes)");
        };
    }

    private static void requireExecute(ByteBuf payload) {
        CommandType command = CommandType.of(payload);
        if (command != CommandType.COM_STMT_EXECUTE) {
            throw new IllegalArgumentException("not a COM_STMT_EXECUTE payload: " + command);
        }
    }

    private static void checkStatementId(long id) {
        if (id < 0 || id > MAX_STATEMENT_ID) {
            throw new IllegalArgumentException("statement id must be 0 to " + MAX_STATEMENT_ID + ", was " + id);
        }
    }

    private static void checkParamCount(int paramCount) {
        if (paramCount < 0 || paramCount > 0xFFFF) {
            throw new IllegalArgumentException("paramCount must be 0 to 65535, was " + paramCount);
        }
    }
}
