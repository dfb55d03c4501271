package io.gantry.consistency;

import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * Faults injected into a sandbox topology while a {@link Workload} runs, one at a time on its own thread, each noted
 * in the {@link History}: lag (a replica's SQL thread paused for a random 100-1500 ms, then a short gap), one kill -9
 * of a replica and its restart at {@code killAt}, and optionally one promotion of a replica at {@code promoteAt}
 * (the sandbox repoints the old primary and the other replicas to it). Writes refused as read-only during a
 * promotion, until the proxy has followed it, are expected and marked so in the history.
 */
public final class Chaos implements AutoCloseable {

    /**
     * When to do what.
     *
     * @param killAt    when to kill and restart a replica, or null for never
     * @param promoteAt when to promote a replica, or null for never
     * @param seed      for the choices and lengths
     */
    public record Plan(Duration killAt, Duration promoteAt, long seed) {
    }

    private final Topology topology;
    private final History history;
    private final Plan plan;
    private final Consumer<DatabaseServer> awaitPromotionSeen;
    private final SplittableRandom random;
    private final Thread thread;
    private volatile boolean stopping;
    private volatile Throwable failure;
    private int pauses;
    private int kills;
    private int promotions;

    /**
     * @param awaitPromotionSeen returns once the proxy sends writes to the promoted server (called on the chaos
     *                           thread)
     */
    public Chaos(Topology topology, History history, Plan plan, Consumer<DatabaseServer> awaitPromotionSeen) {
        this.topology = topology;
        this.history = history;
        this.plan = plan;
        this.awaitPromotionSeen = awaitPromotionSeen;
        this.random = new SplittableRandom(plan.seed());
        this.thread = new Thread(this::run, "history-chaos");
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    private void run() {
        long started = System.nanoTime();
        boolean killed = plan.killAt() == null;
        boolean promoted = plan.promoteAt() == null;
        try {
            while (!stopping) {
                long elapsed = System.nanoTime() - started;
                if (!promoted && elapsed >= plan.promoteAt().toNanos()) {
                    promoted = true;
                    promote();
                } else if (!killed && elapsed >= plan.killAt().toNanos()) {
                    killed = true;
                    killAndRestart();
                } else {
                    lag();
                }
                sleep(50 + random.nextInt(250));
            }
        } catch (Throwable e) {
            failure = e;
            history.note("chaos failed: " + e);
        }
    }

    private DatabaseServer anyRunningReplica() {
        List<DatabaseServer> replicas = topology.replicas().stream().filter(DatabaseServer::isRunning).toList();
        return replicas.isEmpty() ? null : replicas.get(random.nextInt(replicas.size()));
    }

    private void lag() {
        DatabaseServer replica = anyRunningReplica();
        if (replica == null) {
            return;
        }
        long millis = 100 + random.nextInt(1401);
        history.note("pause SQL thread of " + replica.name() + " for " + millis + " ms");
        topology.pauseReplication(replica);
        pauses++;
        try {
            sleep(millis);
        } finally {
            topology.resumeReplication(replica);
            history.note("resume SQL thread of " + replica.name());
        }
    }

    private void killAndRestart() {
        DatabaseServer replica = anyRunningReplica();
        if (replica == null) {
            return;
        }
        history.note("kill -9 " + replica.name());
        topology.kill(replica);
        kills++;
        sleep(500 + random.nextInt(1001));
        topology.start(replica);
        history.note("restarted " + replica.name());
    }

    private void promote() {
        DatabaseServer replica = anyRunningReplica();
        if (replica == null) {
            return;
        }
        long from = System.nanoTime();
        history.note("promote " + replica.name() + " (primary was " + topology.primary().name() + ")");
        topology.promote(replica);
        history.note("promoted " + replica.name());
        awaitPromotionSeen.accept(replica);
        history.note("proxy follows the new primary " + replica.name());
        // Writes already on their way to the old primary may still be refused just after the switch.
        history.expectReadOnlyRefusals(from, System.nanoTime() + Duration.ofSeconds(1).toNanos(),
                "promotion of " + replica.name());
        promotions++;
    }

    private void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopping = true;
        }
    }

    public String summary() {
        return pauses + " lag pauses, " + kills + " replica kills, " + promotions + " promotions";
    }

    /** Stops injecting and waits until the running fault is undone; rethrows what went wrong on the thread. */
    @Override
    public void close() {
        stopping = true;
        try {
            thread.join(Duration.ofSeconds(90).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (failure != null) {
            throw new IllegalStateException("chaos failed: " + failure, failure);
        }
    }
}
