package io.gantry.proxy;

import io.gantry.wire.ErrPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.function.Consumer;

/**
 * A command Gantry runs for itself on a backend — a replayed session setting, a lazy prepare, a COMMIT — whose
 * response is read here instead of being forwarded to the client.
 */
final class InternalCommand implements BackendConnection.ResponseListener {

    /** The outcome: the first response packet's payload, and the server's error if it answered with one. */
    interface Done {
        void accept(byte[] firstPacket, ErrPacket error);
    }

    private final Done done;
    private final Consumer<BackendFailure> failed;
    private byte[] firstPacket;
    private ErrPacket error;

    private InternalCommand(Done done, Consumer<BackendFailure> failed) {
        this.done = done;
        this.failed = failed;
    }

    /** Sends {@code payload} (a whole command, ownership passes) on an idle connection. */
    static void run(BackendConnection connection, ByteBuf payload, Done done, Consumer<BackendFailure> failed) {
        connection.execute(new Packet(0, payload), new InternalCommand(done, failed));
    }

    @Override
    public void onPacket(Packet response, ResponseFraming framing) {
        try {
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

    @Override
    public void onBatchEnd() {
        // Nothing was forwarded, so nothing to flush.
    }

    @Override
    public void onComplete(ResponseFraming framing) {
        done.accept(firstPacket, error);
    }

    @Override
    public void onFailure(BackendFailure failure) {
        failed.accept(failure);
    }
}
