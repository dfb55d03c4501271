package io.gantry.admin;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes written to one admin-socket client and not yet taken by it, and the most a subscriber may have waiting:
 * what keeps a client that stops reading from growing the engine's memory. Answers always count; a push that would
 * take the total past the limit is refused, and the socket then disconnects the client. Thread-safe.
 */
final class PushBudget {

    private final long limit;
    private final AtomicLong waiting = new AtomicLong();

    /** @param limit bytes a subscriber may have waiting; pushes beyond are refused */
    PushBudget(long limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive, not " + limit);
        }
        this.limit = limit;
    }

    /** An answer of {@code bytes} is on its way: it counts, whatever the total. */
    void answer(long bytes) {
        waiting.addAndGet(bytes);
    }

    /** Whether a push of {@code bytes} fits; if it does, it counts from now. */
    boolean tryPush(long bytes) {
        while (true) {
            long now = waiting.get();
            if (now + bytes > limit) {
                return false;
            }
            if (waiting.compareAndSet(now, now + bytes)) {
                return true;
            }
        }
    }

    /** {@code bytes} written to the client's socket: they no longer wait in the engine. */
    void written(long bytes) {
        waiting.addAndGet(-bytes);
    }

    /** Bytes waiting now. */
    long waiting() {
        return waiting.get();
    }
}
