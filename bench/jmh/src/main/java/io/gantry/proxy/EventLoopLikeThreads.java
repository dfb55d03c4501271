package io.gantry.proxy;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * JMH's benchmark threads, made the kind of thread the proxy's I/O runs on: Netty's {@code FastThreadLocalThread}.
 * Since Netty 4.2 only such threads recycle buffer objects and get the pooled allocator's thread caches; on a plain
 * thread every buffer, slice and outbound entry would be new garbage, a cost the proxy does not have. Used through
 * JMH's custom executor ({@code -Djmh.executor=CUSTOM}, see {@link PerQueryBenchmark}).
 */
public final class EventLoopLikeThreads extends ThreadPoolExecutor {

    /** The constructor JMH calls: at most {@code maxThreads} threads, named after {@code prefix}. */
    public EventLoopLikeThreads(int maxThreads, String prefix) {
        super(maxThreads, maxThreads, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(),
                new DefaultThreadFactory(prefix, true));
    }
}
