package io.gantry.proxy.command;

import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.wire.Buffers;
import io.gantry.wire.MalformedPacketException;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.netty.buffer.ByteBuf;

/**
 * A rewriter of the text rows of an answer's first result set, for the few answers Gantry corrects in passing (the
 * {@code Ssl_*} status, the process list): it reads the column count and each column's name as they go by, and a
 * subclass decides from them whether the rows are of the shape it rewrites. Every other packet, and every row of a
 * shape it does not want, passes unchanged.
 */
abstract class FirstResultRows implements ResponseForwarder.ResponseRewriter {

    private int resultSets;
    private int column;
    private boolean wanted;

    /** The first result set starts with {@code columns} columns: whether its rows may be wanted. */
    abstract boolean columns(int columns);

    /** Column {@code index} is named {@code name}: whether the rows are still wanted. */
    abstract boolean column(int index, String name);

    /** A row of a wanted result set: the packet to send instead (the same one when it stays as it is). */
    abstract Packet row(Packet row);

    @Override
    public final Packet rewrite(Packet response, ResponseFraming framing) {
        switch (framing.lastPacketKind()) {
            case COLUMN_COUNT -> {
                resultSets++;
                column = 0;
                wanted = resultSets == 1 && columns(count(response.payload()));
            }
            case COLUMN_DEFINITION -> {
                if (wanted) {
                    wanted = column(column, columnName(response.payload()));
                }
                column++;
            }
            case ROW -> {
                if (wanted) {
                    return row(response);
                }
            }
            default -> { }
        }
        return response;
    }

    /** The first value of a text row as a string, or null for NULL or a row of another shape; the index stays. */
    static String firstValue(ByteBuf payload) {
        int at = payload.readerIndex();
        try {
            return Buffers.isNullMarker(payload) ? null : Buffers.readLenEncString(payload, "row value");
        } catch (MalformedPacketException e) {
            return null;
        } finally {
            payload.readerIndex(at);
        }
    }

    private static int count(ByteBuf payload) {
        int at = payload.readerIndex();
        try {
            return (int) Buffers.readLenEncInt(payload, "column count");
        } catch (MalformedPacketException e) {
            return 0;
        } finally {
            payload.readerIndex(at);
        }
    }

    /** A column definition's name: its fifth field (the fields after it differ with MariaDB's extended metadata). */
    private static String columnName(ByteBuf payload) {
        int at = payload.readerIndex();
        try {
            for (String field : new String[] {"catalog", "schema", "table", "org_table"}) {
                Buffers.readLenEncSlice(payload, "column definition " + field);
            }
            return Buffers.readLenEncString(payload, "column definition name");
        } catch (MalformedPacketException e) {
            return "";
        } finally {
            payload.readerIndex(at);
        }
    }
}
