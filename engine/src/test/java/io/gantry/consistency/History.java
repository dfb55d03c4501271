package io.gantry.consistency;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The operations of a run, recorded by any number of client threads, and what the chaos did meanwhile (for reading a
 * report next to it). Thread-safe.
 */
public final class History {

    /** A span of time (nanoTime) in which writes refused by a read-only server are expected (a promotion). */
    public record Window(long fromNanos, long toNanos, String why) {
        boolean covers(long nanos) {
            return nanos >= fromNanos && nanos <= toNanos;
        }
    }

    private final long originNanos = System.nanoTime();
    private final ConcurrentLinkedQueue<Operation> operations = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> events = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Window> readOnlyWindows = new ConcurrentLinkedQueue<>();

    public void record(Operation operation) {
        operations.add(operation);
    }

    /** Something the chaos did, stamped with the time since the history began. */
    public void note(String event) {
        events.add(String.format("%8.1f ms %s", (System.nanoTime() - originNanos) / 1e6, event));
    }

    /** Writes refused as read-only between these times are expected (the primary was being changed). */
    public void expectReadOnlyRefusals(long fromNanos, long toNanos, String why) {
        readOnlyWindows.add(new Window(fromNanos, toNanos, why));
    }

    public long originNanos() {
        return originNanos;
    }

    /** The operations recorded so far, by invocation time. */
    public List<Operation> operations() {
        List<Operation> all = new ArrayList<>(operations);
        all.sort(Comparator.comparingLong(Operation::invokedNanos));
        return all;
    }

    public List<String> events() {
        return List.copyOf(events);
    }

    public List<Window> readOnlyWindows() {
        return List.copyOf(readOnlyWindows);
    }
}
