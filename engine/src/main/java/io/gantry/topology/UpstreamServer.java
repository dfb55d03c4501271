package io.gantry.topology;

import io.gantry.gtid.SampledPosition;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A server of the upstream list and what is known about it now. Updated by the health loop and by sessions that
 * fail to reach it; read by routing on every statement, so every field is a cheap volatile read.
 */
public final class UpstreamServer {

    private final UpstreamUrl url;
    private final String address;
    private final AtomicInteger connections = new AtomicInteger();
    private volatile int maxConnections;
    private volatile int weight;
    private volatile Role role = Role.UNKNOWN;
    /** Reachability alone: {@link Health#UP} or {@link Health#DOWN}; see {@link #health()}. */
    private volatile Health health = Health.UP;
    /** {@link Health#BROKEN} or {@link Health#DIVERGED} with why, or null while replication is sound. */
    private volatile ReplicationProblem replicationProblem;
    private volatile Instant downSince;
    private volatile String lastError = "";
    private volatile Instant lastOk;
    private volatile long rttMicros = -1;
    /** {@link #smoothedRttMicros()}; written by the health loop's round alone, so read-then-write is safe. */
    private volatile long smoothedRttMicros = -1;
    private volatile long connectMicros = -1;
    private volatile long lagMillis = -1;
    private volatile SampledPosition position;

    public UpstreamServer(UpstreamUrl url) {
        this.url = url;
        this.address = url.address();
        this.weight = url.weight();
    }

    public UpstreamUrl url() {
        return url;
    }

    /** {@code host:port}. */
    public String address() {
        return address;
    }

    public int weight() {
        return weight;
    }

    public void setWeight(int weight) {
        if (weight < 1 || weight > 100) {
            throw new IllegalArgumentException("weight must be between 1 and 100, not " + weight);
        }
        this.weight = weight;
    }

    public Role role() {
        return role;
    }

    /**
     * {@link Health#DOWN} while unreachable; else {@link Health#BROKEN} or {@link Health#DIVERGED} while its
     * replication cannot be trusted; else {@link Health#UP}.
     */
    public Health health() {
        if (health == Health.DOWN) {
            return Health.DOWN;
        }
        ReplicationProblem problem = replicationProblem;
        return problem == null ? Health.UP : problem.health();
    }

    /** Whether it takes new work: reachable, and not broken or diverged. Only such a replica serves reads. */
    public boolean isUp() {
        return health() == Health.UP;
    }

    /** Whether it answered its last check (it may still be broken or diverged): the opposite of down. */
    public boolean isReachable() {
        return health != Health.DOWN;
    }

    /** Why it is not up, in plain words ("" while up). */
    public String healthReason() {
        if (health == Health.DOWN) {
            return lastError;
        }
        ReplicationProblem problem = replicationProblem;
        return problem == null ? "" : problem.describe(address);
    }

    /** The replication problem found by the last check, or null. */
    ReplicationProblem replicationProblem() {
        return replicationProblem;
    }

    /** Sets or clears (null) the replication problem; returns the one before. */
    synchronized ReplicationProblem setReplicationProblem(ReplicationProblem problem) {
        ReplicationProblem before = replicationProblem;
        replicationProblem = problem;
        return before;
    }

    /** When the server went down, or null while up. */
    public Instant downSince() {
        return downSince;
    }

    /** Why it went down last time, or "" if it never did. */
    public String lastError() {
        return lastError;
    }

    /** When the last successful check finished, or null. */
    public Instant lastOk() {
        return lastOk;
    }

    /**
     * Round trip of the last check's ping, on a connection the health loop keeps logged in, in microseconds; -1
     * before the first.
     */
    public long rttMicros() {
        return rttMicros;
    }

    /**
     * The checks' round trips ({@link #rttMicros()}) smoothed, in microseconds; -1 before the first check. An
     * exponentially weighted moving average that gives each new check 1/{@value #SMOOTHING_DIVISOR} of its weight, as
     * TCP smooths its round trip (RFC 6298): one slow ping (a pause of the server or of this process) moves it by an
     * eighth, while a lasting change shows within a few rounds. The first check after the server was down starts it
     * afresh, as the way back may be another. The closest replica is judged by it
     * ({@code --follower-reads-prefer=closest}).
     */
    public long smoothedRttMicros() {
        return smoothedRttMicros;
    }

    /** {@link #smoothedRttMicros()} in milliseconds as {@code rtt_smoothed_ms} shows it: null while unknown. */
    public Double smoothedRttMillis() {
        return millis(smoothedRttMicros);
    }

    /** A new round trip counts for 1/this in the smoothed one: TCP's 1/8. */
    static final int SMOOTHING_DIVISOR = 8;

    /** The smoothed round trip after {@code sample}, from {@code smoothed} (-1: none yet, the sample is the first). */
    static long smoothed(long smoothed, long sample) {
        return smoothed < 0 ? sample : smoothed + (sample - smoothed) / SMOOTHING_DIVISOR;
    }

    /** How long the last check took to open and log in a new connection, in microseconds; -1 before the first. */
    public long connectMicros() {
        return connectMicros;
    }

    /** {@link #rttMicros()} in milliseconds as {@code rtt_ms} shows it: null before the first check. */
    public Double rttMillis() {
        return millis(rttMicros);
    }

    /** {@link #connectMicros()} in milliseconds as {@code connect_ms} shows it: null before the first check. */
    public Double connectMillis() {
        return millis(connectMicros);
    }

    private static Double millis(long micros) {
        return micros < 0 ? null : micros / 1000.0;
    }

    /**
     * Replication lag in milliseconds from GTID positions (0 for the primary and for a caught-up replica), or -1
     * when unknown.
     */
    public long lagMillis() {
        return lagMillis;
    }

    /** The server's executed GTID set at the last sample ("" before the first). */
    public String executedGtids() {
        SampledPosition current = position;
        return current == null ? "" : current.executed().toString();
    }

    /**
     * The server's position at the last sample of the {@link GtidSampler}, or null while none is known (before the
     * first sample, or after a sample failed: a position that cannot be refreshed is not trusted).
     */
    public SampledPosition position() {
        return position;
    }

    void positionSampled(SampledPosition sampled, long lag) {
        this.position = sampled;
        this.lagMillis = lag;
    }

    void positionUnknown() {
        this.position = null;
        this.lagMillis = -1;
    }

    /** The server's {@code max_connections} as the last health check read it, 0 before one did. */
    public int maxConnections() {
        return maxConnections;
    }

    void maxConnectionsRead(int value) {
        maxConnections = value;
    }

    /** Client sessions currently holding a connection to this server. */
    public int connections() {
        return connections.get();
    }

    public void connectionOpened() {
        connections.incrementAndGet();
    }

    public void connectionClosed() {
        connections.decrementAndGet();
    }

    /** Records a successful check; returns true if the server was down before. */
    boolean checkSucceeded(Role detectedRole, long rtt, long connect, Instant at) {
        boolean wasDown = health == Health.DOWN;
        role = detectedRole;
        rttMicros = rtt;
        smoothedRttMicros = smoothed(wasDown ? -1 : smoothedRttMicros, rtt);
        connectMicros = connect;
        lastOk = at;
        health = Health.UP;
        downSince = null;
        return wasDown;
    }

    /** Marks the server down; returns true if it was up before (so only the first failure is reported). */
    synchronized boolean markDown(String reason, Instant at) {
        lastError = reason;
        if (health == Health.DOWN) {
            return false;
        }
        health = Health.DOWN;
        downSince = at;
        return true;
    }

    @Override
    public String toString() {
        return address() + " (" + role.name().toLowerCase() + ", " + health().sqlName() + ")";
    }
}
