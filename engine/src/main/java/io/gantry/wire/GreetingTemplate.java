package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * A greeting encoded once, for every client connection that is shown it: each connection's copy differs only in its
 * connection id and its seed, written into the copy where {@link HandshakeV10#encode} puts them. A login then costs
 * one copy of a few dozen bytes instead of a record and its encoding.
 */
public final class GreetingTemplate {

    private final HandshakeV10 greeting;
    private final byte[] encoded;
    private final int idOffset;
    private final int seedPart2Offset;
    private final int seedLength;
    private final boolean mariaDb;

    /** @param greeting the greeting to show; its connection id and seed are placeholders, replaced per connection */
    public GreetingTemplate(HandshakeV10 greeting) {
        this.greeting = greeting;
        ByteBuf buf = Unpooled.buffer(128);
        try {
            greeting.encode(buf);
            this.encoded = new byte[buf.readableBytes()];
            buf.readBytes(encoded);
        } finally {
            buf.release();
        }
        this.idOffset = greeting.connectionIdOffset();
        this.seedPart2Offset = greeting.seedPart2Offset();
        this.seedLength = greeting.authPluginData().length;
        this.mariaDb = ServerVersion.parse(greeting.serverVersion()).mariaDb();
    }

    /** The greeting this template encodes (with its placeholder id and seed). */
    public HandshakeV10 greeting() {
        return greeting;
    }

    /** Whether the greeting is a MariaDB server's (its version says so). */
    public boolean mariaDb() {
        return mariaDb;
    }

    /** The encoded length: what a buffer for {@link #writeTo} needs. */
    public int size() {
        return encoded.length;
    }

    /**
     * Writes the greeting of one connection: what {@code encode} writes for this greeting with {@code connectionId}
     * and {@code seed} in place of the placeholders.
     *
     * @throws IllegalArgumentException when the seed's length is not the template's, or the id does not fit
     */
    public void writeTo(ByteBuf out, long connectionId, byte[] seed) {
        if (seed.length != seedLength) {
            throw new IllegalArgumentException("the seed must be " + seedLength + " bytes, was " + seed.length);
        }
        if (connectionId < 0 || connectionId > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("connectionId must fit in 32 unsigned bits, was " + connectionId);
        }
        int start = out.writerIndex();
        out.writeBytes(encoded);
        out.setIntLE(start + idOffset, (int) connectionId);
        int part1 = Math.min(8, seed.length);
        out.setBytes(start + idOffset + 4, seed, 0, part1);
        if (seedPart2Offset >= 0) {
            out.setBytes(start + seedPart2Offset, seed, part1, seed.length - part1);
        }
    }
}
