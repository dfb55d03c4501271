package io.gantry.proxy.command;

import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.MalformedPacketException;
import io.gantry.wire.Packet;
import io.gantry.wire.RowFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@code SHOW [FULL] PROCESSLIST} and {@code information_schema.PROCESSLIST} through Gantry: a row of a server
 * thread that is a Gantry session's connection shows the Gantry session id in its {@code Id} column, as
 * {@code CONNECTION_ID()} does, so that the id an operator copies from the list into {@code KILL} reaches that session
 * (Gantry's KILL takes session ids). Rows of other threads (other clients, Gantry's own service connections, pooled
 * connections no session holds) keep the server's id: they are killed on the server itself. Only the first result
 * set's rows are read, text or binary (a prepared statement's), and only when it has a column named {@code Id} of an
 * integer or string type.
 */
final class ProcesslistIds extends FirstResultRows {

    /**
     * The server's thread id of each Gantry session connection on the answering server, to the session's id: read
     * when the answer starts, so that a connection opened for this very statement is in it.
     */
    private final Supplier<Map<Long, Long>> threads;
    private Map<Long, Long> sessionsByThread = Map.of();
    private final ByteBufAllocator alloc;
    /** The position of the {@code Id} column, or -1. */
    private int idColumn = -1;

    /** @param mariaDbCapabilities the MariaDB extended capabilities the client negotiated */
    ProcesslistIds(Supplier<Map<Long, Long>> threads, int mariaDbCapabilities, ByteBufAllocator alloc) {
        super(mariaDbCapabilities);
        this.threads = threads;
        this.alloc = alloc;
    }

    @Override
    boolean columns(int columns) {
        idColumn = -1;
        sessionsByThread = threads.get();
        return !sessionsByThread.isEmpty();
    }

    @Override
    boolean column(int index, ColumnDefinition definition) {
        if (idColumn < 0 && definition.name().equalsIgnoreCase("Id") && RowFormat.readsAsText(definition)) {
            idColumn = index;
        }
        return true;
    }

    @Override
    Packet row(Packet response, RowFormat format) {
        if (idColumn < 0) {
            return response;
        }
        ByteBuf payload = response.payload();
        ByteBuf rewritten;
        try {
            String id = format.value(payload, idColumn);
            Long session = id == null ? null : sessionsByThread.get(Long.parseLong(id));
            if (session == null) {
                return response;
            }
            rewritten = format.withValue(payload, idColumn, Long.toString(session), alloc);
        } catch (MalformedPacketException | IllegalArgumentException e) {
            return response; // not a row of the shape looked for (NumberFormatException too): as the server sent it
        }
        response.release();
        return new Packet(response.sequenceId(), rewritten);
    }
}
