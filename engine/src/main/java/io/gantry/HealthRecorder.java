package io.gantry;

import io.gantry.authority.Authority;
import io.gantry.authority.EventKind;
import io.gantry.authority.HealthSample;
import io.gantry.topology.TopologyListener;
import io.gantry.topology.UpstreamServer;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes what the topology notices into the Authority: each health round as health samples, and each down, up,
 * role or primary change as an event on the failover timeline. Writes run on one thread of their own
 * ({@code gantry-authority-writer}) so that neither the health loop nor an event loop waits for H2.
 */
final class HealthRecorder implements TopologyListener, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HealthRecorder.class);

    private final Authority authority;
    private final Clock clock;
    private final ExecutorService writer = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "gantry-authority-writer");
        thread.setDaemon(true);
        return thread;
    });

    HealthRecorder(Authority authority, Clock clock) {
        this.authority = authority;
        this.clock = clock;
    }

    @Override
    public void onChange(String server, Change change, String reason) {
        EventKind kind = switch (change) {
            case DOWN -> EventKind.DOWN;
            case UP -> EventKind.UP;
            case BROKEN -> EventKind.BROKEN;
            case DIVERGED -> EventKind.DIVERGED;
            case HOST_BLOCKED -> EventKind.HOST_BLOCKED;
            case ROLE_CHANGE, PRIMARY_CHANGE -> EventKind.ROLE_CHANGE;
            // The Authority records these itself, in the same transaction as the change.
            case LIST_CHANGED, WEIGHT_CHANGED -> null;
        };
        if (kind == null) {
            return;
        }
        Instant at = clock.instant();
        submit(() -> authority.recordEvent(at, server, kind, reason));
    }

    @Override
    public void onHealthRound(List<UpstreamServer> servers) {
        Instant at = clock.instant();
        List<HealthSample> samples = new ArrayList<>(servers.size());
        for (UpstreamServer server : servers) {
            // The history records whether the server answered; broken and diverged replicas are events.
            boolean answered = server.isReachable();
            samples.add(new HealthSample(at, server.address(), answered ? HealthSample.UP : HealthSample.DOWN,
                    server.role().name().toLowerCase(), answered && server.rttMicros() >= 0
                    ? server.rttMicros() / 1000.0 : null, answered && server.lagMillis() >= 0
                    ? server.lagMillis() : null));
        }
        submit(() -> authority.recordHealth(samples));
    }

    /** Records an event directly (startup, for example). */
    void record(String server, EventKind kind, String reason) {
        Instant at = clock.instant();
        submit(() -> authority.recordEvent(at, server, kind, reason));
    }

    private void submit(Runnable write) {
        writer.execute(() -> {
            try {
                write.run();
            } catch (RuntimeException e) {
                // A failed write must not stop the next ones; the operator sees why.
                LOG.error("authority: could not record health or events: {}", e.toString());
            }
        });
    }

    @Override
    public void close() {
        writer.shutdown();
        try {
            if (!writer.awaitTermination(5, TimeUnit.SECONDS)) {
                writer.shutdownNow();
            }
        } catch (InterruptedException e) {
            writer.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
