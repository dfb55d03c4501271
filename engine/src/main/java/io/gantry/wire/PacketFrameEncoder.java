package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import java.util.List;

/**
 * Writes {@link Packet}s as frames: a 4-byte header ({@code int<3>} length, {@code int<1>}
 * sequence id) and the payload.
 *
 * <p>A payload of 0xFFFFFF bytes or more is split into 0xFFFFFF-byte frames with consecutive
 * sequence ids (wrapping at 255), ending with a shorter frame; when the length is an exact
 * multiple of 0xFFFFFF that last frame is empty. Small payloads are copied behind their header in
 * one buffer; large ones are sent as a composite of headers and retained slices, without copying.
 * Stateless and sharable.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_packets.html">MySQL Packets</a>
 */
@Sharable
public final class PacketFrameEncoder extends MessageToMessageEncoder<Packet> {

    /** Payloads up to this size are copied rather than sliced: one small write beats two. */
    private static final int COPY_THRESHOLD = 8 * 1024;

    public PacketFrameEncoder() {
        super(Packet.class);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Packet packet, List<Object> out) {
        out.add(frame(packet, ctx.alloc()));
    }

    /**
     * Frames {@code packet} into a new buffer from {@code alloc}, leaving the packet's own
     * reference count unchanged (slices it uses are retained separately).
     */
    public static ByteBuf frame(Packet packet, ByteBufAllocator alloc) {
        ByteBuf payload = packet.payload();
        int length = payload.readableBytes();
        if (length <= COPY_THRESHOLD) {
            ByteBuf buf = alloc.buffer(Packet.HEADER_SIZE + length);
            writeHeader(buf, length, packet.sequenceId());
            buf.writeBytes(payload, payload.readerIndex(), length);
            return buf;
        }
        int frames = Packet.frameCount(length);
        CompositeByteBuf composite = alloc.compositeBuffer(frames * 2);
        int offset = payload.readerIndex();
        int remaining = length;
        int sequenceId = packet.sequenceId();
        for (int i = 0; i < frames; i++) {
            int chunk = Math.min(remaining, Packet.MAX_FRAME_PAYLOAD);
            ByteBuf header = alloc.buffer(Packet.HEADER_SIZE);
            writeHeader(header, chunk, sequenceId);
            composite.addComponent(true, header);
            if (chunk > 0) {
                composite.addComponent(true, payload.retainedSlice(offset, chunk));
            }
            offset += chunk;
            remaining -= chunk;
            sequenceId = (sequenceId + 1) & 0xFF;
        }
        return composite;
    }

    /** Writes {@code packet} as frames into {@code out}, copying the payload. */
    public static void writeFramed(Packet packet, ByteBuf out) {
        ByteBuf payload = packet.payload();
        int remaining = payload.readableBytes();
        int offset = payload.readerIndex();
        int sequenceId = packet.sequenceId();
        int frames = Packet.frameCount(remaining);
        for (int i = 0; i < frames; i++) {
            int chunk = Math.min(remaining, Packet.MAX_FRAME_PAYLOAD);
            writeHeader(out, chunk, sequenceId);
            out.writeBytes(payload, offset, chunk);
            offset += chunk;
            remaining -= chunk;
            sequenceId = (sequenceId + 1) & 0xFF;
        }
    }

    private static void writeHeader(ByteBuf buf, int length, int sequenceId) {
        buf.writeMediumLE(length);
        buf.writeByte(sequenceId);
    }
}
