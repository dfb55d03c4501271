package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;
import java.util.Optional;

/**
 * Splits a byte stream into {@link Packet}s, joining {@code 0xFFFFFF}-length continuation frames
 * into one logical payload.
 *
 * <p>The reassembled payload is capped (MySQL's {@code max_allowed_packet}). The cap is checked
 * against each frame header before the frame's bytes are buffered, so an oversized packet is
 * refused without reading it. On a payload over the cap, or a continuation frame out of sequence,
 * the decoder emits one {@link PacketDecodeFailure} and then discards all further input.
 *
 * <p>Single-frame payloads are zero-copy slices of the input; continued payloads are composite
 * buffers of such slices. Not sharable: one instance per channel.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_packets.html">MySQL Packets</a>
 */
public final class PacketFrameDecoder extends ByteToMessageDecoder {

    /** The largest cap accepted, 1 GiB: MySQL's own upper limit for max_allowed_packet. */
    public static final int MAX_CAP = 1 << 30;

    private enum State {
        /** Waiting for a 4-byte frame header. */
        READ_HEADER,
        /** Header read; waiting for all of the frame's payload. */
        READ_PAYLOAD,
        /** A failure was emitted; everything from now on is dropped. */
        DISCARD
    }

    private final int maxPayloadSize;
    private State state = State.READ_HEADER;
    private int frameLength;
    private int frameSequenceId;
    private CompositeByteBuf pending;
    private long pendingLength;
    private int firstSequenceId;
    private int lastSequenceId;

    /**
     * @param maxPayloadSize the largest reassembled payload accepted, in bytes, 1 to
     *                       {@link #MAX_CAP}; a payload of exactly this size is accepted
     * @throws IllegalArgumentException if the cap is outside that range
     */
    public PacketFrameDecoder(int maxPayloadSize) {
        if (maxPayloadSize < 1 || maxPayloadSize > MAX_CAP) {
            throw new IllegalArgumentException("maxPayloadSize must be 1 to " + MAX_CAP
                    + " bytes (1 GiB), was " + maxPayloadSize);
        }
        this.maxPayloadSize = maxPayloadSize;
    }

    /** The cap on a reassembled payload, in bytes. */
    public int maxPayloadSize() {
        return maxPayloadSize;
    }

    /** True once a {@link PacketDecodeFailure} has been emitted. */
    public boolean failed() {
        return state == State.DISCARD;
    }

    /**
     * Bytes held and not yet emitted: the part of a frame received so far plus the frames of a continued payload. At
     * most the cap plus a partial frame header (3 bytes) between reads; 0 once failed.
     */
    long bufferedBytes() {
        return internalBuffer().readableBytes() + pendingLength;
    }

    /**
     * Hands over the bytes received but not yet decoded, and stops decoding them. Used when the protocol switches
     * to TLS after an SSLRequest: a client sends its TLS ClientHello right behind the SSLRequest, so those bytes
     * may already sit here and must go to the TLS handler instead. Call it from the handler of the packet just
     * emitted, on the event loop.
     *
     * @return a buffer the caller owns (possibly empty)
     */
    public ByteBuf takeUndecodedBytes() {
        ByteBuf cumulation = internalBuffer();
        return cumulation.readRetainedSlice(cumulation.readableBytes());
    }

    /**
     * Hands over the bytes received but not yet emitted exactly as they arrived, a frame header already read
     * included, and starts again from a header: for a session that moves to another process, whose decoder must see
     * the same bytes. Call it on the event loop, with reads stopped.
     *
     * @return a buffer the caller owns (possibly empty); empty {@code Optional} while a payload continued over several
     *         frames is half received or the decoder failed (nothing is taken then)
     */
    public Optional<ByteBuf> takeUnemittedBytes(ByteBufAllocator alloc) {
        if (pending != null || state == State.DISCARD) {
            return Optional.empty();
        }
        ByteBuf cumulation = internalBuffer();
        int readable = cumulation.readableBytes();
        ByteBuf taken = alloc.buffer(Packet.HEADER_SIZE + readable);
        if (state == State.READ_PAYLOAD) {
            taken.writeMediumLE(frameLength).writeByte(frameSequenceId);
            state = State.READ_HEADER;
        }
        taken.writeBytes(cumulation, cumulation.readerIndex(), readable);
        cumulation.skipBytes(readable);
        return Optional.of(taken);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        // Loops through header and payload until one message is emitted or input runs short: a
        // zero-length frame has no payload bytes to trigger another call. Stopping after each
        // message lets the pipeline change between packets (e.g. TLS after an SSLRequest).
        int emitted = out.size();
        while (out.size() == emitted) {
            boolean progressed = switch (state) {
                case READ_HEADER -> readHeader(in, out);
                case READ_PAYLOAD -> readPayload(ctx, in, out);
                case DISCARD -> {
                    in.skipBytes(in.readableBytes());
                    yield false;
                }
            };
            if (!progressed) {
                return;
            }
        }
    }

    private boolean readHeader(ByteBuf in, List<Object> out) {
        if (in.readableBytes() < Packet.HEADER_SIZE) {
            return false;
        }
        int length = in.readUnsignedMediumLE();
        int sequenceId = in.readUnsignedByte();
        if (pending != null) {
            int expected = (lastSequenceId + 1) & 0xFF;
            if (sequenceId != expected) {
                fail(in, out, PacketDecodeFailure.sequenceOutOfOrder(sequenceId, expected,
                        pendingLength, maxPayloadSize));
                return false;
            }
        }
        long total = pendingLength + length;
        if (total > maxPayloadSize) {
            fail(in, out, PacketDecodeFailure.tooLarge(total, maxPayloadSize, sequenceId));
            return false;
        }
        frameLength = length;
        frameSequenceId = sequenceId;
        state = State.READ_PAYLOAD;
        return true;
    }

    private boolean readPayload(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < frameLength) {
            return false;
        }
        ByteBuf frame = in.readRetainedSlice(frameLength);
        state = State.READ_HEADER;
        if (frameLength == Packet.MAX_FRAME_PAYLOAD) {
            // A full frame means "more follows", even if the next frame turns out to be empty.
            if (pending == null) {
                pending = ctx.alloc().compositeBuffer(maxPayloadSize / Packet.MAX_FRAME_PAYLOAD + 2);
                firstSequenceId = frameSequenceId;
            }
            pending.addComponent(true, frame);
            pendingLength += frameLength;
            lastSequenceId = frameSequenceId;
            return true;
        }
        if (pending == null) {
            out.add(new Packet(frameSequenceId, frame));
            return true;
        }
        pending.addComponent(true, frame);
        out.add(new Packet(firstSequenceId, pending));
        pending = null;
        pendingLength = 0;
        return true;
    }

    private void fail(ByteBuf in, List<Object> out, PacketDecodeFailure failure) {
        state = State.DISCARD;
        releasePending();
        in.skipBytes(in.readableBytes());
        out.add(failure);
    }

    private void releasePending() {
        if (pending != null) {
            pending.release();
            pending = null;
            pendingLength = 0;
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        releasePending();
    }
}
