package io.gantry.proxy.login;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.gantry.admin.HostBlocks;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What a peer may hold before it has logged in, which hosts are blocked, and how long a refused login waits for its
 * answer.
 *
 * <p>A connection that has not logged in counts here, not toward {@code --max-client-connections}, so peers that
 * never finish the handshake cannot lock logged-in clients out; they are bounded in total and per host.
 *
 * <p>Two kinds of failure are told apart, because they call for different answers:
 * <ul>
 * <li><b>Protocol abuse</b> — a malformed login, or a handshake the peer leaves unfinished past
 *     {@code --connect-timeout-secs} — is the host's doing, whoever its accounts are: after
 *     {@code maxHandshakeErrors} in a row the host is refused for a cool-down (error 1129), as MariaDB's
 *     {@code max_connect_errors} does.</li>
 * <li><b>A refused password</b> is one account's problem on one host: a job with a stale password must not lock
 *     the other applications of its host (or of every host behind one NAT) out, nor the admin. So it never blocks
 *     a host; from the {@code delayAfter}-th refusal in a row of the same account from the same host, the refusal
 *     is answered only after a delay that doubles with every further one (1 s, 2 s, 4 s, up to
 *     {@code maxDelay}), as MySQL's {@code connection_control} plugin does. The account's right password is never
 *     delayed, and it clears the count.</li>
 * </ul>
 *
 * <p>Thread-safe: every event loop admits its own connections; the admin reads and lifts blocks from its own
 * threads.
 */
public final class LoginGate implements HostBlocks {

    /** The first delay of a refused login, doubled for each further refusal. */
    static final Duration FIRST_DELAY = Duration.ofSeconds(1);
    /** Refusals of an account from a host are forgotten this long after the last one. */
    static final Duration FORGET_REFUSALS_AFTER = Duration.ofMinutes(15);
    /** Connections that may wait for their turn to log in, per {@code --max-pending-logins}. */
    static final int MAX_QUEUED_PER_PENDING = 32;
    /** Accounts and hosts whose refusals are remembered at once; beyond it the least recent are forgotten. */
    private static final int MAX_REMEMBERED_ACCOUNTS = 100_000;

    /** Why a new connection is refused, if it is. */
    public sealed interface Refusal {
        /** The host is blocked until {@code until} ({@code left} from now) after {@code failures} failed handshakes. */
        record Blocked(String host, int failures, Instant until, Duration left) implements Refusal {
        }

        /** Too many connections are logging in at once, in total or from this host. */
        record TooManyPending(String host, int pending, int limit, boolean perHost) implements Refusal {
        }
    }

    private static final class HostState {
        int pending;
        int handshakeErrors;
        String lastError = "";
        Instant blockedSince = Instant.MIN;
        Instant blockedUntil = Instant.MIN;
        String blockReason = "";
        int blockFailures;
    }

    private record Account(String host, String user) {
    }

    /**
     * Connections waiting for their turn to log in, by host, each host's in arrival order: a connection beyond the
     * limits of logins in progress waits here, ungreeted, rather than being refused (a burst of clients from one
     * application host must not lose logins), until a login ends or its wait runs out.
     */
    private final Map<String, ArrayDeque<Runnable>> queued = new LinkedHashMap<>();
    private int queuedCount;
    private final LoginLimits limits;
    private final Clock clock;
    private final Map<String, HostState> hosts = new ConcurrentHashMap<>();
    /** Refused logins in a row, by account and host. */
    private final Cache<Account, Integer> refusals;
    private int pending;

    public LoginGate(LoginLimits limits, Clock clock) {
        this.limits = limits;
        this.clock = clock;
        this.refusals = Caffeine.newBuilder()
                .maximumSize(MAX_REMEMBERED_ACCOUNTS)
                .expireAfterWrite(FORGET_REFUSALS_AFTER)
                .ticker(() -> TimeUnit.MILLISECONDS.toNanos(clock.millis()))
                .executor(Runnable::run)
                .build();
    }

    /** A new connection from {@code host}: admitted (and counted as pending) or refused. */
    public synchronized Optional<Refusal> admit(String host) {
        HostState state = hosts.computeIfAbsent(host, h -> new HostState());
        Instant now = clock.instant();
        if (now.isBefore(state.blockedUntil)) {
            return Optional.of(new Refusal.Blocked(host, state.blockFailures, state.blockedUntil,
                    Duration.between(now, state.blockedUntil)));
        }
        if (pending >= limits.maxPending()) {
            return Optional.of(new Refusal.TooManyPending(host, pending, limits.maxPending(), false));
        }
        if (state.pending >= limits.maxPendingPerHost()) {
            return Optional.of(new Refusal.TooManyPending(host, state.pending, limits.maxPendingPerHost(), true));
        }
        pending++;
        state.pending++;
        return Optional.empty();
    }

    /**
     * What became of a new connection: admitted now ({@code refusal} null), queued ({@code refusal} says why it
     * waits), or refused.
     */
    public record Admission(Refusal refusal, boolean queued) {
        static final Admission NOW = new Admission(null, false);

        public boolean admitted() {
            return refusal == null;
        }
    }

    /**
     * A new connection from {@code host}: admitted now, refused (a blocked host), or, when too many connections are
     * logging in, in total or from that host, queued: {@code turn} then runs once a login ends and makes room for
     * it, counted as pending from then on, on the thread that ended that login, unless {@link #withdraw withdrawn}
     * first. At most {@value #MAX_QUEUED_PER_PENDING} times {@code --max-pending-logins} connections wait; beyond
     * that a connection is refused.
     */
    public Admission admitOrQueue(String host, Runnable turn) {
        synchronized (this) {
            Optional<Refusal> refusal = admit(host);
            if (refusal.isEmpty()) {
                return Admission.NOW;
            }
            if (!(refusal.get() instanceof Refusal.TooManyPending)
                    || queuedCount >= MAX_QUEUED_PER_PENDING * limits.maxPending()) {
                return new Admission(refusal.get(), false);
            }
            queued.computeIfAbsent(host, h -> new ArrayDeque<>()).addLast(turn);
            queuedCount++;
            return new Admission(refusal.get(), true);
        }
    }

    /** Takes a queued connection out of the queue: true if it was still waiting (not admitted yet). */
    public synchronized boolean withdraw(String host, Runnable turn) {
        ArrayDeque<Runnable> waiting = queued.get(host);
        if (waiting == null || !waiting.remove(turn)) {
            return false;
        }
        queuedCount--;
        if (waiting.isEmpty()) {
            queued.remove(host);
        }
        return true;
    }

    /** Connections waiting for their turn to log in. */
    public synchronized int queued() {
        return queuedCount;
    }

    /**
     * An admitted connection logged in or went away: it no longer counts as pending, and the connections waiting
     * for the room it leaves are admitted (its own host's first).
     */
    public void leave(String host) {
        List<Runnable> admitted = new ArrayList<>(0);
        synchronized (this) {
            HostState state = hosts.get(host);
            if (state == null || state.pending == 0) {
                return;
            }
            pending--;
            state.pending--;
            if (queuedCount == 0) {
                // Every login's end comes here; nothing waits nearly always.
                forgetIfIdle(host, state);
                return;
            }
            admitQueued(host, admitted);
            for (String other : List.copyOf(queued.keySet())) {
                if (pending >= limits.maxPending()) {
                    break;
                }
                admitQueued(other, admitted);
            }
            forgetIfIdle(host, state);
        }
        admitted.forEach(Runnable::run);
    }

    /** Admits {@code host}'s queued connections while the limits leave room; collects their turns. */
    private void admitQueued(String host, List<Runnable> admitted) {
        ArrayDeque<Runnable> waiting = queued.get(host);
        if (waiting == null) {
            return;
        }
        HostState state = hosts.computeIfAbsent(host, h -> new HostState());
        while (!waiting.isEmpty() && pending < limits.maxPending() && state.pending < limits.maxPendingPerHost()) {
            admitted.add(waiting.pollFirst());
            queuedCount--;
            pending++;
            state.pending++;
        }
        if (waiting.isEmpty()) {
            queued.remove(host);
        }
    }

    /** {@code user} logged in from {@code host}: the host's handshake errors and the account's refusals start again. */
    public synchronized void succeeded(String host, String user) {
        refusals.invalidate(new Account(host, user));
        HostState state = hosts.get(host);
        if (state != null) {
            state.handshakeErrors = 0;
            forgetIfIdle(host, state);
        }
    }

    /**
     * A handshake from {@code host} was malformed or left unfinished ({@code what} says which). Returns the block
     * when this failure is the one that blocks the host.
     */
    public synchronized Optional<Refusal.Blocked> handshakeFailed(String host, String what) {
        if (limits.maxHandshakeErrors() == 0) {
            return Optional.empty();
        }
        HostState state = hosts.computeIfAbsent(host, h -> new HostState());
        state.handshakeErrors++;
        state.lastError = what;
        if (state.handshakeErrors < limits.maxHandshakeErrors()) {
            return Optional.empty();
        }
        Instant now = clock.instant();
        state.blockedSince = now;
        state.blockedUntil = now.plus(limits.blockFor());
        state.blockFailures = state.handshakeErrors;
        state.blockReason = state.handshakeErrors + " failed handshakes in a row, the last one " + what;
        state.handshakeErrors = 0; // after the cool-down the host starts again from nothing
        return Optional.of(new Refusal.Blocked(host, state.blockFailures, state.blockedUntil, limits.blockFor()));
    }

    /**
     * The servers refused {@code user}'s login from {@code host} (a wrong password, an unknown account). Returns
     * how long the refusal waits before it is answered: zero until the account has been refused
     * {@code delayAfter} times in a row from that host.
     */
    public Duration loginRefused(String host, String user) {
        if (limits.delayAfter() == 0) {
            return Duration.ZERO;
        }
        int inARow = refusals.asMap().merge(new Account(host, user), 1, Integer::sum);
        return delayFor(inARow);
    }

    /** The delay of the {@code inARow}-th refusal in a row. */
    Duration delayFor(int inARow) {
        if (limits.delayAfter() == 0 || inARow < limits.delayAfter()) {
            return Duration.ZERO;
        }
        int doublings = Math.min(inARow - limits.delayAfter(), 20);
        Duration delay = FIRST_DELAY.multipliedBy(1L << doublings);
        return delay.compareTo(limits.maxDelay()) > 0 ? limits.maxDelay() : delay;
    }

    @Override
    public synchronized List<BlockedHost> blockedHosts() {
        Instant now = clock.instant();
        List<BlockedHost> blocked = new ArrayList<>();
        hosts.forEach((host, state) -> {
            if (now.isBefore(state.blockedUntil)) {
                blocked.add(new BlockedHost(host, state.blockReason, state.blockFailures, state.blockedSince,
                        Duration.between(now, state.blockedUntil)));
            }
        });
        blocked.sort(Comparator.comparing(BlockedHost::since).thenComparing(BlockedHost::host));
        return blocked;
    }

    /** As MariaDB's {@code FLUSH HOSTS} for one host: its handshake errors and its accounts' refusals go too. */
    @Override
    public synchronized boolean unblock(String host) {
        refusals.asMap().keySet().removeIf(account -> account.host().equals(host));
        HostState state = hosts.get(host);
        if (state == null) {
            return false;
        }
        boolean wasBlocked = clock.instant().isBefore(state.blockedUntil);
        state.blockedUntil = Instant.MIN;
        state.handshakeErrors = 0;
        forgetIfIdle(host, state);
        return wasBlocked;
    }

    @Override
    public synchronized int unblockAll() {
        int blocked = blockedHosts().size();
        refusals.invalidateAll();
        for (String host : List.copyOf(hosts.keySet())) {
            unblock(host);
        }
        return blocked;
    }

    /** How many connections are logging in now. */
    synchronized int pending() {
        return pending;
    }

    private void forgetIfIdle(String host, HostState state) {
        if (state.pending == 0 && state.handshakeErrors == 0 && !clock.instant().isBefore(state.blockedUntil)) {
            hosts.remove(host);
        }
    }
}
