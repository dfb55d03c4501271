package io.gantry.proxy.session;

import io.gantry.wire.Packet;
import java.util.ArrayDeque;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The commands a pipelining client sent while another of its commands ran, in order. Reading from the client stays
 * on in the usual one-command-at-a-time case, which saves two system calls per command; it pauses only while the
 * client is ahead by more than {@value #MAX_COMMANDS} commands or {@value #MAX_BYTES} bytes.
 */
final class CommandQueue {

    private static final int MAX_COMMANDS = 16;
    private static final int MAX_BYTES = 1 << 20;

    private final ClientWriter client;
    private final ArrayDeque<Packet> queued = new ArrayDeque<>();
    private long queuedBytes;
    /** Whether {@link #runQueued} is on the stack: a command it runs that completes at once returns to its loop. */
    private boolean running;

    CommandQueue(ClientWriter client) {
        this.client = client;
    }

    void add(Packet packet) {
        queued.add(packet);
        queuedBytes += packet.payload().readableBytes();
        if (queued.size() > MAX_COMMANDS || queuedBytes > MAX_BYTES) {
            client.readClient(false);
        }
    }

    /**
     * Hands queued commands to {@code dispatcher} while {@code ready} holds, in a loop rather than by recursion, and
     * reads from the client again once the session is ready with the queue drained.
     */
    void runQueued(Consumer<Packet> dispatcher, BooleanSupplier ready) {
        if (running) {
            return; // the loop below takes the next command
        }
        running = true;
        try {
            Packet next;
            while (ready.getAsBoolean() && (next = queued.poll()) != null) {
                queuedBytes -= next.payload().readableBytes();
                dispatcher.accept(next);
            }
        } finally {
            running = false;
        }
        if (ready.getAsBoolean() && !client.readsClient()) {
            client.readClient(true);
        }
    }

    boolean isEmpty() {
        return queued.isEmpty();
    }

    /** The session closed: what is queued is dropped. */
    void clear() {
        Packet packet;
        while ((packet = queued.poll()) != null) {
            packet.release();
        }
        queuedBytes = 0;
    }
}
