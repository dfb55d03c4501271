package io.gantry.proxy.backend;

import io.gantry.wire.Buffers;
import io.gantry.wire.ColumnDefinition.FieldType;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A command Gantry runs for itself on a backend — a replayed session setting, a lazy prepare, a COMMIT — whose
 * response is read here instead of being forwarded to the client.
 */
public final class InternalCommand implements BackendConnection.ResponseListener {

    /** The outcome: the first response packet's payload, and the server's error if it answered with one. */
    public interface Done {
        void accept(byte[] firstPacket, ErrPacket error);
    }

    /**
     * One value of a text result row, with whether its column is numeric (so it can be written unquoted) and the
     * column's type (null when the server sent one Gantry does not know).
     */
    public record Value(String text, boolean numeric, FieldType type) {
    }

    /** The outcome of {@link #queryRow}: the first row's values, or the server's error. */
    public interface RowDone {
        void accept(List<Value> row, ErrPacket error);
    }

    private static final Set<FieldType> NUMERIC = EnumSet.of(FieldType.DECIMAL, FieldType.TINY, FieldType.SHORT,
            FieldType.LONG, FieldType.FLOAT, FieldType.DOUBLE, FieldType.LONGLONG, FieldType.INT24,
            FieldType.NEWDECIMAL, FieldType.YEAR);
    /** From the end of a column definition: decimals (1), flags (2) and two filler bytes follow the type byte. */
    private static final int TYPE_FROM_END = 6;

    private final Done done;
    private final RowDone rowDone;
    private final Consumer<BackendFailure> failed;
    private byte[] firstPacket;
    private ErrPacket error;
    private final List<FieldType> columnTypes = new ArrayList<>();
    private List<Value> firstRow;

    private InternalCommand(Done done, RowDone rowDone, Consumer<BackendFailure> failed) {
        this.done = done;
        this.rowDone = rowDone;
        this.failed = failed;
    }

    /** Sends {@code payload} (a whole command, ownership passes) on an idle connection. */
    public static void run(BackendConnection connection, ByteBuf payload, Done done, Consumer<BackendFailure> failed) {
        connection.execute(new Packet(0, payload), new InternalCommand(done, null, failed));
    }

    /** One command of {@link #runAll}: its payload (a whole command, ownership passes) and what to do with its outcome. */
    public record Step(ByteBuf payload, Done done) {
    }

    /**
     * Runs commands in one round trip (pipelined, see {@link BackendConnection#executeAll}): each outcome goes to
     * its step's {@code done}, in order, then {@code then} runs once the last response is in. A step that closes the
     * connection stops the rest (nothing more is called); a connection failure goes to {@code failed} once.
     */
    public static void runAll(BackendConnection connection, List<Step> steps, Runnable then,
                              Consumer<BackendFailure> failed) {
        if (steps.isEmpty()) {
            then.run();
            return;
        }
        Consumer<BackendFailure> once = new Consumer<>() {
            private boolean told;

            @Override
            public void accept(BackendFailure failure) {
                if (!told) {
                    told = true;
                    failed.accept(failure);
                }
            }
        };
        List<Packet> packets = new ArrayList<>(steps.size());
        List<InternalCommand> listeners = new ArrayList<>(steps.size());
        for (int i = 0; i < steps.size(); i++) {
            Step step = steps.get(i);
            Done done = i < steps.size() - 1 ? step.done() : (first, error) -> {
                step.done().accept(first, error);
                if (!connection.isClosed()) {
                    then.run();
                }
            };
            packets.add(new Packet(0, step.payload()));
            listeners.add(new InternalCommand(done, null, once));
        }
        connection.executeAll(packets, listeners);
    }

    /**
     * Runs commands in order, in one round trip (a session's settings, replayed on a connection that has not run
     * them): {@code beforeEach} sees each first; {@code then} runs when all succeeded, else {@code refused} gets
     * the first error (the commands behind it were sent with it and ran all the same).
     *
     * @param commands payloads, command byte included
     */
    public static void runInOrder(BackendConnection connection, List<byte[]> commands, Consumer<byte[]> beforeEach,
                           Runnable then, Consumer<ErrPacket> refused, Consumer<BackendFailure> failed) {
        ErrPacket[] firstError = new ErrPacket[1];
        List<Step> steps = new ArrayList<>(commands.size());
        for (byte[] command : commands) {
            beforeEach.accept(command);
            steps.add(new Step(Unpooled.wrappedBuffer(command), (first, error) -> {
                if (firstError[0] == null) {
                    firstError[0] = error;
                }
            }));
        }
        runAll(connection, steps, () -> {
            if (firstError[0] != null) {
                refused.accept(firstError[0]);
            } else {
                then.run();
            }
        }, failed);
    }

    /**
     * Runs a text query on an idle connection and hands over its first row. Values are read one char per byte
     * (ISO-8859-1), so they can be sent back unchanged whatever the character set; the
     * column type (taken from the end of the definition, so MariaDB's extended metadata does not matter) tells
     * numbers from strings.
     */
    public static void queryRow(BackendConnection connection, ByteBuf queryPayload, RowDone done,
                         Consumer<BackendFailure> failed) {
        connection.execute(new Packet(0, queryPayload), new InternalCommand(null, done, failed));
    }

    @Override
    public void onPacket(Packet response, ResponseFraming framing) {
        try {
            ByteBuf payload = response.payload();
            if (framing.lastPacketKind() == ResponseFraming.PacketKind.COLUMN_DEFINITION) {
                int type = payload.getByte(payload.writerIndex() - TYPE_FROM_END) & 0xFF;
                columnTypes.add(FieldType.of(type).orElse(null));
            } else if (framing.lastPacketKind() == ResponseFraming.PacketKind.ROW && firstRow == null) {
                firstRow = textRow(payload.duplicate());
            }
            if (firstPacket == null) {
                firstPacket = ByteBufUtil.getBytes(response.payload());
            }
            if (framing.lastPacketKind() == ResponseFraming.PacketKind.ERR && error == null) {
                error = ErrPacket.decode(response.payload());
            }
        } finally {
            response.release();
        }
    }

    private List<Value> textRow(ByteBuf row) {
        List<Value> values = new ArrayList<>(columnTypes.size());
        for (FieldType type : columnTypes) {
            boolean numeric = type != null && NUMERIC.contains(type);
            if (Buffers.isNullMarker(row)) {
                row.skipBytes(1);
                values.add(new Value(null, numeric, type));
            } else {
                // One char per byte: the value goes back into a replayed SET byte for byte.
                values.add(new Value(Buffers.readLenEncSlice(row, "row value").toString(
                        java.nio.charset.StandardCharsets.ISO_8859_1), numeric, type));
            }
        }
        return values;
    }

    @Override
    public void onBatchEnd() {
        // Nothing was forwarded, so nothing to flush.
    }

    @Override
    public void onComplete(ResponseFraming framing) {
        if (rowDone != null) {
            rowDone.accept(firstRow == null ? List.of() : firstRow, error);
        } else {
            done.accept(firstPacket, error);
        }
    }

    @Override
    public void onFailure(BackendFailure failure) {
        failed.accept(failure);
    }
}
