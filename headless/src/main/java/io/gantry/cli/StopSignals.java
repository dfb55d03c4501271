package io.gantry.cli;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import sun.misc.Signal;

/**
 * SIGTERM (systemd's stop, {@code kill}) and SIGINT (Ctrl-C) for {@code gantry run}: the first asks for a drain,
 * the second for a stop at once. JVM shutdown hooks cannot do this: once the JVM shuts down a second signal is not
 * delivered to anyone, so the handlers replace the JVM's own for these two signals ({@code sun.misc.Signal}, the
 * supported way on JDK 17, from the {@code jdk.unsupported} module).
 */
final class StopSignals {

    private final CompletableFuture<String> first = new CompletableFuture<>();
    private final CompletableFuture<Object> second = new CompletableFuture<>();
    private final AtomicInteger received = new AtomicInteger();

    private StopSignals() {
    }

    static StopSignals install() {
        StopSignals signals = new StopSignals();
        for (String name : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(name), signal -> signals.received("SIG" + signal.getName()));
        }
        return signals;
    }

    private void received(String name) {
        if (received.incrementAndGet() == 1) {
            first.complete(name);
        } else {
            second.complete(name);
        }
    }

    /** Blocks until the first stop signal; returns its name ({@code SIGTERM}). */
    String awaitFirst() throws InterruptedException {
        try {
            return first.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Completes on the second stop signal. */
    CompletableFuture<Object> second() {
        return second;
    }
}
