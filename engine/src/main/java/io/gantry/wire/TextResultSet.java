package io.gantry.wire;

import static io.gantry.wire.CapabilityFlags.CLIENT_DEPRECATE_EOF;
import static io.gantry.wire.CapabilityFlags.CLIENT_OPTIONAL_RESULTSET_METADATA;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A complete text result set that Gantry answers itself (admin statements, queries on the
 * {@code gantry} tables), and its encoding into the packets a client expects after COM_QUERY.
 *
 * <p>The packets, in order:
 * <ol>
 * <li>the column count, a length-encoded integer;</li>
 * <li>one {@link ColumnDefinition} per column;</li>
 * <li>an {@link EofPacket}, only without CLIENT_DEPRECATE_EOF;</li>
 * <li>one row per packet: each value a length-encoded string, SQL NULL as the byte 0xFB;</li>
 * <li>the terminator: an {@link EofPacket} without CLIENT_DEPRECATE_EOF, otherwise an
 *     {@link OkPacket} with header 0xFE ({@link OkPacket#eofReplacement()}).</li>
 * </ol>
 * Both EOF packets and the final OK carry the given status flags and no warnings. Values are
 * text as MySQL sends them (numbers in decimal, dates as {@code YYYY-MM-DD hh:mm:ss}), encoded as
 * UTF-8.
 *
 * @param columns the column definitions, at least one
 * @param rows    the rows, each with exactly one value per column; a {@code null} value is SQL NULL
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response_text_resultset.html">Text Resultset</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response_text_resultset_row.html">Text Resultset Row</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response.html">COM_QUERY Response</a>
 */
public record TextResultSet(List<ColumnDefinition> columns, List<List<String>> rows) {

    /**
     * Copies both lists (rows may hold {@code null} values).
     *
     * @throws IllegalArgumentException if there are no columns, or a row's width differs from the
     *                                  column count (the message names the row)
     */
    public TextResultSet {
        columns = List.copyOf(columns);
        if (columns.isEmpty()) {
            throw new IllegalArgumentException("a result set needs at least one column");
        }
        List<List<String>> copied = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            List<String> row = Objects.requireNonNull(rows.get(i), "row " + i);
            if (row.size() != columns.size()) {
                throw new IllegalArgumentException("row " + i + " has " + row.size() + " values for "
                        + columns.size() + " columns");
            }
            copied.add(Collections.unmodifiableList(new ArrayList<>(row)));
        }
        rows = Collections.unmodifiableList(copied);
    }

    /**
     * The payloads of a complete text result set, in order; see {@link TextResultSet}. The caller
     * owns the returned buffers and sends them with sequence ids 1, 2, ... (a payload of 16 MiB
     * or more becomes several frames, each with its own sequence id).
     *
     * @param capabilities the capabilities negotiated with the client
     * @param statusFlags  the {@link ServerStatus} flags for the EOF and OK packets
     * @throws IllegalArgumentException if the columns or rows are invalid (see the constructor),
     *                                  {@code statusFlags} is outside 0..0xFFFF, CLIENT_PROTOCOL_41
     *                                  is missing or CLIENT_OPTIONAL_RESULTSET_METADATA is set
     */
    public static List<ByteBuf> encode(List<ColumnDefinition> columns, List<List<String>> rows, int capabilities,
            int statusFlags, ByteBufAllocator alloc) {
        return new TextResultSet(columns, rows).encode(capabilities, statusFlags, alloc);
    }

    /**
     * The payloads of a complete text result set for a connection that negotiated MariaDB extended
     * capabilities: with {@link CapabilityFlags#MARIADB_CLIENT_EXTENDED_METADATA} every column
     * definition carries its extended-metadata block (see {@link ColumnDefinition}).
     *
     * @param mariaDbCapabilities the MariaDB extended capabilities negotiated with the client
     * @throws IllegalArgumentException as {@link #encode(List, List, int, int, ByteBufAllocator)}, and
     *                                  with MARIADB_CLIENT_CACHE_METADATA (the column count would
     *                                  then need a metadata-follows byte; never negotiated)
     */
    public static List<ByteBuf> encode(List<ColumnDefinition> columns, List<List<String>> rows, int capabilities,
            int mariaDbCapabilities, int statusFlags, ByteBufAllocator alloc) {
        return new TextResultSet(columns, rows).encode(capabilities, mariaDbCapabilities, statusFlags, alloc);
    }

    /**
     * The payloads of this result set; see {@link #encode(List, List, int, int, ByteBufAllocator)}.
     *
     * @throws IllegalArgumentException as {@link #encode(List, List, int, int, ByteBufAllocator)}
     */
    public List<ByteBuf> encode(int capabilities, int statusFlags, ByteBufAllocator alloc) {
        return encode(capabilities, 0, statusFlags, alloc);
    }

    /**
     * The payloads of this result set; see
     * {@link #encode(List, List, int, int, int, ByteBufAllocator)}.
     *
     * @throws IllegalArgumentException as {@link #encode(List, List, int, int, int, ByteBufAllocator)}
     */
    public List<ByteBuf> encode(int capabilities, int mariaDbCapabilities, int statusFlags, ByteBufAllocator alloc) {
        if (CapabilityFlags.has(mariaDbCapabilities, CapabilityFlags.MARIADB_CLIENT_CACHE_METADATA)) {
            throw new IllegalArgumentException("MARIADB_CLIENT_CACHE_METADATA is not supported");
        }
        if (!CapabilityFlags.has(capabilities, CLIENT_PROTOCOL_41)) {
            throw new IllegalArgumentException("a text result set needs CLIENT_PROTOCOL_41");
        }
        if (CapabilityFlags.has(capabilities, CLIENT_OPTIONAL_RESULTSET_METADATA)) {
            // With it the column count is followed by a metadata-follows flag; Gantry never negotiates it.
            throw new IllegalArgumentException("CLIENT_OPTIONAL_RESULTSET_METADATA is not supported");
        }
        Checks.range("statusFlags", statusFlags, 0xFFFF);
        boolean deprecateEof = CapabilityFlags.has(capabilities, CLIENT_DEPRECATE_EOF);
        List<ByteBuf> payloads = new ArrayList<>(columns.size() + rows.size() + 3);
        boolean done = false;
        try {
            ByteBuf count = add(payloads, alloc.buffer(Buffers.lenEncIntSize(columns.size())));
            Buffers.writeLenEncInt(count, columns.size());
            for (ColumnDefinition column : columns) {
                column.encode(add(payloads, alloc.buffer()), mariaDbCapabilities);
            }
            EofPacket eof = new EofPacket(0, statusFlags);
            if (!deprecateEof) {
                eof.encode(add(payloads, alloc.buffer(EofPacket.MAX_LENGTH_EXCLUSIVE)));
            }
            for (List<String> row : rows) {
                writeRow(add(payloads, alloc.buffer()), row);
            }
            ByteBuf terminator = add(payloads, alloc.buffer());
            if (deprecateEof) {
                new OkPacket(true, 0, 0, statusFlags, 0, "", List.of()).encode(terminator, capabilities);
            } else {
                eof.encode(terminator);
            }
            done = true;
            return payloads;
        } finally {
            if (!done) {
                payloads.forEach(ByteBuf::release);
            }
        }
    }

    private static ByteBuf add(List<ByteBuf> payloads, ByteBuf buf) {
        payloads.add(buf);
        return buf;
    }

    private static void writeRow(ByteBuf buf, List<String> row) {
        for (String value : row) {
            if (value == null) {
                Buffers.writeNullMarker(buf);
            } else {
                Buffers.writeLenEncString(buf, value);
            }
        }
    }
}
