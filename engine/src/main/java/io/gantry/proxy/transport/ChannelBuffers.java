package io.gantry.proxy.transport;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;

/**
 * The buffers of every client and backend channel: Netty's pooled allocator, whose thread caches and recycled buffer
 * objects leave a forwarded point select at about 470 B of garbage. Netty 4.2's default, the adaptive allocator,
 * left 1 200 B (BENCHMARKS.md).
 */
public final class ChannelBuffers {

    /** The allocator set on every channel Gantry opens or accepts. */
    public static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;

    private ChannelBuffers() {
    }
}
