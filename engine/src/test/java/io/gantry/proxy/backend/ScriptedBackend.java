package io.gantry.proxy.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.function.Consumer;

/** Packet reading and writing for tests that play a MySQL server on a loopback socket, one packet at a time. */
final class ScriptedBackend {

    private ScriptedBackend() {
    }

    /** The next packet's payload. */
    static byte[] read(DataInputStream in) throws IOException {
        byte[] header = new byte[4];
        in.readFully(header);
        byte[] payload = new byte[(header[0] & 0xFF) | (header[1] & 0xFF) << 8 | (header[2] & 0xFF) << 16];
        in.readFully(payload);
        return payload;
    }

    /** Writes one packet whose payload {@code writer} makes. */
    static void write(OutputStream out, int sequence, Consumer<ByteBuf> writer) throws IOException {
        byte[] payload = bytes(writer);
        out.write(new byte[] {(byte) payload.length, (byte) (payload.length >> 8), (byte) (payload.length >> 16),
                (byte) sequence});
        out.write(payload);
        out.flush();
    }

    /** What {@code writer} writes, as bytes. */
    static byte[] bytes(Consumer<ByteBuf> writer) {
        ByteBuf buf = Unpooled.buffer();
        try {
            writer.accept(buf);
            return ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }
}
