package io.gantry.proxy.execution;

import io.gantry.wire.OkPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.netty.buffer.ByteBuf;
import java.util.zip.CRC32C;

/**
 * A checksum of what a statement's answer told the client, the same for the same answer from another server: what a
 * transaction replay compares ({@code --transaction-replay}). It covers the rows and their columns, an OK's affected
 * rows and last insert id, the warning counts and an error's code and SQL state. It leaves out what differs between
 * servers without changing the answer: the status flags, the session-state changes an OK carries (the GTIDs), an
 * error's wording, progress reports.
 */
public final class AnswerChecksum {

    private final CRC32C crc = new CRC32C();

    /** Starts the checksum of the next answer. */
    public void reset() {
        crc.reset();
    }

    /** The checksum of the answer so far. */
    public long value() {
        return crc.getValue();
    }

    /** Adds one packet of the answer, as the server sent it (before Gantry corrects anything in it). */
    public void add(Packet packet, ResponseFraming framing) {
        ByteBuf payload = packet.payload();
        int start = payload.readerIndex();
        int length = payload.readableBytes();
        crc.update(framing.lastPacketKind().ordinal());
        switch (framing.lastPacketKind()) {
            case OK -> {
                int outcomeEnd = OkPacket.outcomeEnd(payload);
                update(payload, start + 1, outcomeEnd - start - 1); // affected rows and last insert id
                update(payload, outcomeEnd + 2, Math.min(2, start + length - outcomeEnd - 2)); // warnings
            }
            case EOF -> update(payload, start + 1, Math.min(2, length - 1)); // warnings
            case ERR -> update(payload, start + 1, Math.min(8, length - 1)); // code, '#', SQL state
            case PROGRESS_REPORT -> {
            }
            default -> update(payload, start, length); // column counts and definitions, rows
        }
    }

    private void update(ByteBuf payload, int from, int length) {
        if (length <= 0) {
            return;
        }
        if (payload.hasArray()) {
            crc.update(payload.array(), payload.arrayOffset() + from, length);
        } else {
            crc.update(payload.nioBuffer(from, length));
        }
    }
}
