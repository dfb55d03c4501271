package io.gantry.proxy.command;

import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.wire.Buffers;
import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.MalformedPacketException;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.gantry.wire.RowFormat;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * A rewriter of the rows of an answer's first result set, for the few answers Gantry corrects in passing (the
 * {@code Ssl_*} status, the process list): it reads the column count and each column's definition as they go by, and
 * a subclass decides from them whether the rows are of the shape it rewrites. The rows are text rows after COM_QUERY
 * and binary rows after COM_STMT_EXECUTE and COM_STMT_FETCH; the subclass reads and replaces their values through
 * the {@link RowFormat} of the answer, the same for both. Every other packet, and every row of a shape it does not
 * want, passes unchanged. A statement's rewriter serves the fetches from its cursor too: their rows come without
 * column definitions, as the first result set's.
 */
abstract class FirstResultRows implements ResponseForwarder.ResponseRewriter {

    /** The MariaDB extended capabilities the client negotiated: the layout of the column definitions it is sent. */
    private final int mariaDbCapabilities;
    private final List<ColumnDefinition> definitions = new ArrayList<>();
    private int resultSets;
    private boolean wanted;
    private RowFormat format;

    FirstResultRows(int mariaDbCapabilities) {
        this.mariaDbCapabilities = mariaDbCapabilities;
    }

    /** The first result set starts with {@code columns} columns: whether its rows may be wanted. */
    abstract boolean columns(int columns);

    /** Column {@code index} is {@code definition}: whether the rows are still wanted. */
    abstract boolean column(int index, ColumnDefinition definition);

    /**
     * A row of a wanted result set, of {@code format}: the packet to send instead (the same one when it stays as it
     * is; a row replaced is released).
     */
    abstract Packet row(Packet row, RowFormat format);

    @Override
    public final Packet rewrite(Packet response, ResponseFraming framing) {
        switch (framing.lastPacketKind()) {
            case COLUMN_COUNT -> {
                resultSets++;
                definitions.clear();
                format = null;
                wanted = resultSets == 1 && columns(count(response.payload()));
            }
            case COLUMN_DEFINITION -> {
                if (wanted) {
                    ColumnDefinition definition = definition(response.payload());
                    wanted = definition != null && column(definitions.size(), definition);
                    definitions.add(definition);
                }
            }
            case ROW -> {
                if (wanted) {
                    if (format == null) {
                        format = RowFormat.of(framing.command(), definitions);
                    }
                    return row(response, format);
                }
            }
            default -> { }
        }
        return response;
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

    /** A column definition as the client is sent it, or null for one that cannot be read. */
    private ColumnDefinition definition(ByteBuf payload) {
        try {
            return ColumnDefinition.decode(payload.duplicate(), mariaDbCapabilities);
        } catch (MalformedPacketException e) {
            return null;
        }
    }
}
