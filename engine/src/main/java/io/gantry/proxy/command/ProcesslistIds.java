package io.gantry.proxy.command;

import io.gantry.wire.Buffers;
import io.gantry.wire.MalformedPacketException;
import io.gantry.wire.Packet;
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
 * set's text rows are read, and only when it has a column named {@code Id}.
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

    ProcesslistIds(Supplier<Map<Long, Long>> threads, ByteBufAllocator alloc) {
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
    boolean column(int index, String name) {
        if (idColumn < 0 && name.equalsIgnoreCase("Id")) {
            idColumn = index;
        }
        return true;
    }

    @Override
    Packet row(Packet response) {
        if (idColumn < 0) {
            return response;
        }
        ByteBuf payload = response.payload();
        int at = payload.readerIndex();
        int idStart;
        int idEnd;
        Long session;
        try {
            for (int i = 0; i < idColumn; i++) {
                skipValue(payload);
            }
            idStart = payload.readerIndex();
            if (Buffers.isNullMarker(payload)) {
                return response;
            }
            String id = Buffers.readLenEncString(payload, "processlist Id");
            idEnd = payload.readerIndex();
            session = sessionsByThread.get(Long.parseLong(id));
        } catch (MalformedPacketException | NumberFormatException e) {
            return response; // not a row of the shape looked for: as the server sent it
        } finally {
            payload.readerIndex(at);
        }
        if (session == null) {
            return response;
        }
        ByteBuf rewritten = alloc.buffer(payload.readableBytes() + 8);
        rewritten.writeBytes(payload, at, idStart - at);
        Buffers.writeLenEncString(rewritten, Long.toString(session));
        rewritten.writeBytes(payload, idEnd, payload.writerIndex() - idEnd);
        response.release();
        return new Packet(response.sequenceId(), rewritten);
    }

    private static void skipValue(ByteBuf payload) {
        if (Buffers.isNullMarker(payload)) {
            payload.skipBytes(1);
        } else {
            Buffers.readLenEncSlice(payload, "processlist column");
        }
    }
}
