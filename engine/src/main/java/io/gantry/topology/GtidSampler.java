package io.gantry.topology;

import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples the executed GTID set of the primary and of every replica, every {@code --lag-sample-interval-ms}
 * (default 250), on one kept service connection per server and a thread of its own (never an event loop), apart from
 * the health loop. Each server's {@link UpstreamServer#position()} and lag come from here: a replica's safe time is
 * the sampling time of the newest primary set it contains, and its lag is how long ago that was (zero when it holds
 * the primary's newest set, so an idle primary never makes replicas look behind).
 *
 * <p>Sessions that need a fresher sample than the schedule gives (to learn that a replica has caught up with a write
 * they just made, or to settle what a read they just made saw) {@linkplain #nudge nudge} the sampler: it then takes
 * the next sample at once, but never sooner than {@link #NUDGE_MIN_GAP} after the previous one, so a busy proxy
 * costs each server at most one small query per gap.
 */
public final class GtidSampler implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GtidSampler.class);
    /** The shortest time between two samples, however often sessions ask for one. */
    public static final Duration NUDGE_MIN_GAP = Duration.ofMillis(5);
    /** How long {@link #close} lets a sample in flight finish before it cuts the connections. */
    private static final Duration ABORT_AFTER = Duration.ofMillis(500);

    private final Upstreams upstreams;
    private final Duration interval;
    private final Duration connectTimeout;
    private final Clock clock;
    /** Guarded by itself: the sampler writes it, and {@link #lagMillisOf} reads it from other threads. */
    private final ReplicationLag lag = new ReplicationLag(Duration.ofMinutes(15));
    /** The lag history's resolution: a fifth of the interval. */
    private final Duration lagHistoryStep;
    private Instant lastLagSample;
    /** Used by the sampling thread alone. */
    private final KeptConnections<Sampling> connections = new KeptConnections<>(Sampling::close);
    private final AtomicLong queries = new AtomicLong();
    private final Thread thread;
    private volatile boolean nudged;
    /** When the last nudge came: the sample it asks for must be taken in a later millisecond. */
    private volatile long nudgedAtMillis;
    private volatile boolean closed;

    /** A kept service connection to one server, and the query that reads its position. */
    private record Sampling(Connection connection, Statement statement, String query, Flavour flavour) {
        void close() {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // closing a connection that failed anyway
            }
        }

        /** Closes the socket at once: {@link #close} would wait for a read that a hung server never answers. */
        void abort() {
            try {
                connection.abort(Runnable::run);
            } catch (SQLException ignored) {
                // the socket is closed either way
            }
        }
    }

    public GtidSampler(Upstreams upstreams, Duration interval, Duration connectTimeout, Clock clock) {
        if (interval.toMillis() < 10) {
            throw new IllegalArgumentException("--lag-sample-interval-ms must be at least 10, not "
                    + interval.toMillis());
        }
        this.upstreams = upstreams;
        this.interval = interval;
        this.lagHistoryStep = interval.dividedBy(5);
        this.connectTimeout = connectTimeout;
        this.clock = clock;
        this.thread = new Thread(this::run, "gantry-gtid-sampler");
        this.thread.setDaemon(true);
    }

    /** Takes one sample now (so positions are known before clients connect), then runs on its own thread. */
    public void start() {
        sampleSafely();
        thread.start();
    }

    /** How often the schedule samples. */
    public Duration interval() {
        return interval;
    }

    /** Position queries sent so far, all servers together (for the sampler's cost). */
    public long queriesSent() {
        return queries.get();
    }

    /**
     * How far {@code position} is behind the primary, by the same measure as a replica's lag: 0 when it holds the
     * newest primary sample, else how long ago the newest sample it holds was taken; -1 when that cannot be told
     * (no primary sample yet, or another server flavour). The change stream's lag is its applied position's. Safe
     * from any thread.
     */
    public long lagMillisOf(GtidSet position) {
        synchronized (lag) {
            return lag.lagOf(position, clock.instant()).millis();
        }
    }

    /** Asks for a sample soon; cheap, and safe from any thread (an event loop included). */
    public void nudge() {
        nudgedAtMillis = clock.millis();
        if (!nudged) {
            nudged = true;
            LockSupport.unpark(thread);
        }
    }

    private void run() {
        long nextDue = System.nanoTime() + interval.toNanos();
        long earliest = System.nanoTime() + NUDGE_MIN_GAP.toNanos();
        while (!closed) {
            while (!closed) {
                // A nudge brings the sample forward to the end of the gap after the previous one.
                long due = nudged ? Math.min(nextDue, earliest) : nextDue;
                long wait = due - System.nanoTime();
                if (wait <= 0) {
                    break;
                }
                LockSupport.parkNanos(this, wait);
            }
            if (closed) {
                return;
            }
            nudged = false;
            // Sessions compare sampling times with completion times by the millisecond, strictly: a sample in the
            // nudge's own millisecond could not settle what asked for it.
            while (clock.millis() <= nudgedAtMillis && !closed) {
                LockSupport.parkNanos(this, 200_000);
            }
            long started = System.nanoTime();
            sampleSafely();
            earliest = started + NUDGE_MIN_GAP.toNanos();
            nextDue = started + interval.toNanos();
        }
    }

    private void sampleSafely() {
        try {
            sample();
        } catch (RuntimeException e) {
            // One bad sample must not end the schedule.
            LOG.error("topology: position sample failed: {}", e.toString(), e);
        }
    }

    /** One sample: the primary first, then each replica, so a replica is never compared with a later primary set. */
    void sample() {
        List<UpstreamServer> servers = upstreams.servers();
        connections.retain(servers);
        Optional<UpstreamServer> primary = upstreams.primary();
        if (primary.isPresent()) {
            Instant at = clock.instant();
            GtidSet executed = read(primary.get());
            if (executed != null) {
                if (lastLagSample == null || !at.isBefore(lastLagSample.plus(lagHistoryStep))) {
                    // Samples come up to every 5 ms when sessions ask; the lag history keeps one per step, which
                    // bounds its memory and its scans while keeping lag precise to well under a sampling interval.
                    synchronized (lag) {
                        lag.sample(at, executed);
                    }
                    lastLagSample = at;
                }
                primary.get().positionSampled(new SampledPosition(executed, at, at), 0);
            }
        }
        for (UpstreamServer server : servers) {
            if (primary.isPresent() && server == primary.get()) {
                continue;
            }
            Instant at = clock.instant();
            GtidSet executed = server.isReachable() ? read(server) : null;
            if (executed == null) {
                server.positionUnknown();
                continue;
            }
            // Behind every primary sample kept (or no primary yet): a known position of unknown freshness (EPOCH).
            Instant safe;
            long lagMillis;
            synchronized (lag) {
                safe = lag.safeTime(executed).orElse(Instant.EPOCH);
                lagMillis = lag.lagOf(executed, clock.instant()).millis();
            }
            server.positionSampled(new SampledPosition(executed, at, safe), lagMillis);
        }
    }

    /** The server's executed set, or null (and its connection dropped) when it cannot be read now. */
    private GtidSet read(UpstreamServer server) {
        Sampling sampling = connections.get(server);
        try {
            if (sampling == null) {
                sampling = open(server);
                connections.keep(server, sampling);
            }
            queries.incrementAndGet();
            try (ResultSet rows = sampling.statement().executeQuery(sampling.query())) {
                rows.next();
                String text = rows.getString(1);
                return GtidSet.parse(text == null ? "" : text, sampling.flavour());
            }
        } catch (SQLException | IllegalArgumentException e) {
            LOG.debug("topology: cannot sample the position of {}: {}", server.address(), e.toString());
            connections.drop(server);
            return null;
        }
    }

    /** The query for a server's executed GTID set: MariaDB's {@code gtid_current_pos}, MySQL's {@code gtid_executed}. */
    static String executedSetQuery(Flavour flavour) {
        return flavour == Flavour.MARIADB ? "SELECT @@GLOBAL.gtid_current_pos" : "SELECT @@GLOBAL.gtid_executed";
    }

    private Sampling open(UpstreamServer server) throws SQLException {
        Connection connection = ServiceConnections.open(server.url(), connectTimeout);
        try {
            Statement statement = connection.createStatement();
            statement.setQueryTimeout((int) Math.max(1, connectTimeout.toSeconds()));
            Flavour flavour;
            try (ResultSet rows = statement.executeQuery("SELECT VERSION()")) {
                rows.next();
                flavour = rows.getString(1).contains("MariaDB") ? Flavour.MARIADB : Flavour.MYSQL;
            }
            return new Sampling(connection, statement, executedSetQuery(flavour), flavour);
        } catch (SQLException e) {
            connection.close();
            throw e;
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(ABORT_AFTER.toMillis());
            if (thread.isAlive()) {
                // Still waiting for a server that does not answer (stopped, a hung host): closing its connection
                // would wait for the read's lock, up to the connect timeout, so the sockets are cut instead.
                connections.forEach(Sampling::abort);
                thread.join(TimeUnit.SECONDS.toMillis(5));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        connections.close();
    }
}
