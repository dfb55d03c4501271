package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import java.util.Objects;

/**
 * One logical MySQL packet: its sequence id and its whole payload, continuation frames already
 * joined (or not yet split).
 *
 * <p>A {@code Packet} owns one reference to {@code payload} and is a {@link ByteBufHolder}, so
 * Netty's {@code ReferenceCountUtil} and channel size estimation treat it like a buffer. Whoever
 * receives one from {@link PacketFrameDecoder} must release it (or pass it on).
 *
 * <p>{@code sequenceId} is the id of the first frame. A payload of {@link #MAX_FRAME_PAYLOAD} bytes
 * or more travels in several frames with consecutive ids; {@link #lastSequenceId()} gives the id
 * of the last one, which is what the peer's next packet must follow.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_packets.html">MySQL Packets</a>
 */
public record Packet(int sequenceId, ByteBuf payload) implements ByteBufHolder {

    /** The largest payload one frame can carry, 2^24 - 1; a frame this long is continued. */
    public static final int MAX_FRAME_PAYLOAD = 0xFFFFFF;

    /** Bytes of frame header: {@code int<3>} payload length and {@code int<1>} sequence id. */
    public static final int HEADER_SIZE = 4;

    /**
     * @throws IllegalArgumentException if {@code sequenceId} is not 0 to 255
     */
    public Packet {
        if (sequenceId < 0 || sequenceId > 0xFF) {
            throw new IllegalArgumentException("sequence id must be 0 to 255, was " + sequenceId);
        }
        Objects.requireNonNull(payload, "payload");
    }

    /** Number of frames a payload of {@code payloadLength} bytes takes on the wire. */
    public static int frameCount(int payloadLength) {
        // A length that is an exact multiple of 0xFFFFFF needs a trailing empty frame, so the
        // receiver knows the packet ended; this formula counts it.
        return payloadLength / MAX_FRAME_PAYLOAD + 1;
    }

    /** Sequence id of the last frame this packet occupies on the wire. */
    public int lastSequenceId() {
        return (sequenceId + frameCount(payload.readableBytes()) - 1) & 0xFF;
    }

    /** Sequence id the next packet in this exchange must carry. */
    public int nextSequenceId() {
        return (lastSequenceId() + 1) & 0xFF;
    }

    @Override
    public ByteBuf content() {
        return payload;
    }

    @Override
    public Packet copy() {
        return replace(payload.copy());
    }

    @Override
    public Packet duplicate() {
        return replace(payload.duplicate());
    }

    @Override
    public Packet retainedDuplicate() {
        return replace(payload.retainedDuplicate());
    }

    @Override
    public Packet replace(ByteBuf content) {
        return new Packet(sequenceId, content);
    }

    @Override
    public int refCnt() {
        return payload.refCnt();
    }

    @Override
    public Packet retain() {
        payload.retain();
        return this;
    }

    @Override
    public Packet retain(int increment) {
        payload.retain(increment);
        return this;
    }

    @Override
    public Packet touch() {
        payload.touch();
        return this;
    }

    @Override
    public Packet touch(Object hint) {
        payload.touch(hint);
        return this;
    }

    @Override
    public boolean release() {
        return payload.release();
    }

    @Override
    public boolean release(int decrement) {
        return payload.release(decrement);
    }

    @Override
    public String toString() {
        return "Packet[sequenceId=" + sequenceId + ", length="
                + (payload.refCnt() > 0 ? payload.readableBytes() : "released") + "]";
    }
}
