package io.gantry.cli;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import sun.misc.Signal;

/**
 * SIGTERM (systemd's stop, {@code kill}) and SIGINT (Ctrl-C) for {@code gantry run}: once Gantry serves, the first
 * asks for a drain, the second for a stop at once; while it starts, either stops it at once. JVM shutdown hooks cannot do this: once the JVM shuts down a second signal is not
 * delivered to anyone, so the handlers replace the JVM's own for these two signals ({@code sun.misc.Signal}, the
 * supported way on JDK 17, from the {@code jdk.unsupported} module).
 */
final class StopSignals {

    private final CompletableFuture<String> first = new CompletableFuture<>();
    private final CompletableFuture<Object> second = new CompletableFuture<>();
    private final AtomicInteger received = new AtomicInteger();
    /** Until Gantry serves, a signal stops the process at once, as the JVM's own handler would. */
    private volatile boolean serving;

    private StopSignals() {
    }

    static StopSignals install() {
        StopSignals signals = new StopSignals();
        for (String name : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(name), signals::received);
        }
        return signals;
    }

    /**
     * Gantry serves from now on: a signal drains it. Installed before the start and armed after it, so that no
     * signal between the two falls to the JVM's own handler, which would stop the process without draining.
     */
    void serving() {
        serving = true;
    }

    private void received(Signal signal) {
        if (!serving) {
            // Still starting: nothing to drain; stop now (shutdown hooks run), with the status the JVM's would give.
            Runtime.getRuntime().exit(128 + signal.getNumber());
            return;
        }
        String name = "SIG" + signal.getName();
        if (received.incrementAndGet() == 1) {
            first.complete(name);
        } else {
            second.complete(name);
        }
    }

    /** Completes on the first stop signal, with its name ({@code SIGTERM}). */
    CompletableFuture<String> first() {
        return first;
    }

    /** Completes on the second stop signal. */
    CompletableFuture<Object> second() {
        return second;
    }
}
