package io.gantry.topology;

import io.gantry.authority.HealthSample;
import io.gantry.events.EngineEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The health loop: every interval it checks each server with the service account (JDBC, on its own small executor,
 * never on a Netty event loop), reads {@code read_only} and whom a replica replicates from, and updates
 * {@link Upstreams}: health, role, and which server is the primary. Between rounds anyone who sees a sign that the
 * topology changed (the primary refused a write as read-only, a server was lost) asks for a round at once
 * ({@link Upstreams#requestCheck}); such requests coalesce, and while no primary is known rounds come more often
 * ({@link RoundSchedule}), so a promotion or a server coming back is seen within a second.
 *
 * <p>Each check ({@link HealthProbes}) opens a new connection and times it (connect and login: {@code connect_ms}, what a client's first
 * statement waits for when Gantry connects for it; once the proxy runs, with the proxy's own login code and TLS
 * engine, {@link #timeLoginsWith}), and pings the server on a connection kept from round to round,
 * the round trip ({@code rtt_ms}): a ping on a connection that is already logged in is what a statement costs on the
 * wire, while a new connection's login costs many round trips and the server's authentication work. Every check is
 * bounded by the check timeout in all (connect, TLS, login; then each answer on the kept connection), so a server
 * that stopped answering (SIGSTOP, a hung host) is down within one interval and one timeout. The kept connection
 * is replaced by the new one when it does not answer (the server restarted or killed it), so only a server that
 * answers neither is down.
 *
 * <p>A refusal is not a death: a server that refuses the new connection for being full ({@code 1040}, {@code 1203})
 * or refuses the service account is checked on its kept connection, and without one keeps what was known of it; it
 * is never marked down for that, which would cost every session on it.
 *
 * <p>After the round, each replica is judged broken, diverged or sound ({@link ReplicationVerdicts}).
 *
 * <p>Primary rule: the one writable server. Several writable servers at once are never guessed between: there is no
 * primary (writes wait, then fail with an error naming them) until all but one are read-only, and none of them is
 * shown as the primary.
 */
public final class HealthChecker implements AutoCloseable {

    private final Upstreams upstreams;
    private final Duration checkTimeout;
    private final RoundSchedule schedule;
    /** Set as Gantry stops: a round cut short by it (its checks interrupted) says nothing about the servers. */
    private volatile boolean closing;
    private final ExecutorService probeThreads;
    private final HealthProbes probes;
    private final ReplicationVerdicts replication;

    /**
     * @param checkTimeout bound on each check's new connection, connect and login together, and on each answer on
     *                     the kept connection
     */
    public HealthChecker(Upstreams upstreams, Duration checkTimeout) {
        this.upstreams = upstreams;
        this.checkTimeout = checkTimeout;
        this.schedule = new RoundSchedule(this::checkNow, () -> upstreams.primaryOrNull() != null);
        this.probeThreads = Executors.newFixedThreadPool(8, named("gantry-probe"));
        this.probes = new HealthProbes(upstreams, checkTimeout, () -> closing);
        this.replication = new ReplicationVerdicts(upstreams, probes::kept);
        upstreams.setListReplacer(this::replaceList);
        upstreams.setHealthRounds(schedule);
    }

    /**
     * From now on, a round's new connection to a server that has a kept one is {@code check}'s: the proxy's own login
     * code and TLS engine, so {@code connect_ms} is what a session's new backend connection costs, and the checks
     * leave the JDK's TLS handshake (a full one every round: TLS 1.3 sessions are not resumed by MariaDB) to the kept
     * connections, opened once. Null: JDBC connections again (the proxy stopped).
     */
    public void timeLoginsWith(LoginCheck check) {
        probes.timeLoginsWith(check);
    }

    /** Runs a round every {@code interval} from now on, and more often when needed ({@link RoundSchedule}). */
    public void start(Duration interval) {
        schedule.start(interval);
    }

    /** One health round over every server, in parallel; returns when all checks are done. */
    public synchronized void checkNow() {
        schedule.roundStarted();
        try {
            Map<UpstreamServer, HealthProbe> results = probeAll(upstreams.servers());
            if (closing) {
                return;
            }
            Upstreams.PrimaryChoice choice = choosePrimary(results);
            recordChecks(results, choice);
            upstreams.setPrimary(choice.primary(), choice.reasonWhenNone());
            afterRound(results);
        } finally {
            schedule.roundFinished();
        }
    }

    /**
     * Applies a new upstream list ({@code ALTER GANTRY CHANGE UPSTREAM}) as one health round: every server of the
     * new list is checked and the primary chosen among them first, and only then does the list take effect, with
     * that primary. Runs between rounds (never at the same time as one), so a round of the old list cannot undo it.
     */
    synchronized void replaceList(List<UpstreamUrl> urls, String reason) {
        schedule.roundStarted();
        try {
            List<UpstreamServer> next = upstreams.prepare(urls);
            Map<UpstreamServer, HealthProbe> results = probeAll(next);
            Upstreams.PrimaryChoice choice = choosePrimary(results);
            recordChecks(results, choice);
            upstreams.install(next, choice, reason);
            afterRound(results);
        } finally {
            schedule.roundFinished();
        }
    }

    private Map<UpstreamServer, HealthProbe> probeAll(List<UpstreamServer> servers) {
        List<CompletableFuture<Optional<HealthProbe>>> checks = new ArrayList<>();
        for (UpstreamServer server : servers) {
            checks.add(CompletableFuture.supplyAsync(() -> probes.probe(server), probeThreads));
        }
        Map<UpstreamServer, HealthProbe> results = new HashMap<>();
        for (CompletableFuture<Optional<HealthProbe>> check : checks) {
            check.join().ifPresent(p -> results.put(p.server(), p));
        }
        return results;
    }

    /**
     * Records each good check with the role the round gave it: the chosen primary, a replica, or writable without
     * being the primary. A refused check changes nothing of what was known.
     */
    private void recordChecks(Map<UpstreamServer, HealthProbe> results, Upstreams.PrimaryChoice choice) {
        for (HealthProbe probe : results.values()) {
            if (probe.refused()) {
                continue;
            }
            Role role = !probe.writable() ? Role.REPLICA
                    : probe.server() == choice.primary() ? Role.PRIMARY : Role.WRITABLE;
            upstreams.markChecked(probe.server(), role, probe.rttMicros(), probe.connectMicros());
        }
    }

    private void afterRound(Map<UpstreamServer, HealthProbe> results) {
        probes.retain(upstreams.servers());
        replication.judge(results);
        upstreams.events().publish(new EngineEvent.HealthRound(samples(upstreams.servers())));
    }

    /** What the round found about each server, for the health history; broken and diverged replicas are events. */
    private List<HealthSample> samples(List<UpstreamServer> servers) {
        Instant at = upstreams.clock().instant();
        List<HealthSample> samples = new ArrayList<>(servers.size());
        for (UpstreamServer server : servers) {
            boolean answered = server.isReachable();
            samples.add(new HealthSample(at, server.address(), answered ? HealthSample.UP : HealthSample.DOWN,
                    server.role().name().toLowerCase(Locale.ROOT), answered ? server.rttMillis() : null,
                    answered && server.lagMillis() >= 0 ? server.lagMillis() : null,
                    answered ? server.connectMillis() : null));
        }
        return samples;
    }

    /**
     * The one writable server, or none with the reason: none answers, none is writable, or several are (never
     * guessed between: one of them may be an old primary still taking writes that the others will never see).
     */
    static Upstreams.PrimaryChoice choosePrimary(Map<UpstreamServer, HealthProbe> results) {
        List<UpstreamServer> writable = results.values().stream()
                .filter(HealthProbe::writable).map(HealthProbe::server).toList();
        if (writable.size() == 1) {
            return new Upstreams.PrimaryChoice(writable.get(0), "");
        }
        if (writable.isEmpty()) {
            return new Upstreams.PrimaryChoice(null, results.isEmpty()
                    ? "no server answers the health check"
                    : "no writable server (every server that answers has read_only=ON)");
        }
        return new Upstreams.PrimaryChoice(null, "several servers are writable at once (" + String.join(" and ",
                writable.stream().map(UpstreamServer::address).sorted().toList())
                + "); Gantry sends writes to neither until all but one have read_only=ON");
    }

    /**
     * Stops the loop and closes the kept connections, after the round that runs now if it ends within the check
     * timeout: closing a connection a check still uses would mark its server down as Gantry stops.
     */
    @Override
    public void close() {
        closing = true;
        schedule.close();
        probeThreads.shutdownNow();
        try {
            probeThreads.awaitTermination(checkTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        probes.close();
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
