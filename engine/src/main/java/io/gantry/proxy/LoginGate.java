package io.gantry.proxy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a peer may hold before it has logged in, and which hosts are blocked for failed logins. A connection that
 * has not logged in counts here, not toward {@code --max-client-connections}, so peers that never finish the
 * handshake cannot lock logged-in clients out; they are bounded in total and per host. A host whose logins fail
 * {@code maxAuthErrors} times in a row is refused for a cool-down, as MaxScale's
 * {@code max_auth_errors_until_block} does, before Gantry asks any server anything for it.
 *
 * <p>Thread-safe: every event loop admits its own connections.
 */
final class LoginGate {

    /** Why a new connection is refused, if it is. */
    sealed interface Refusal {
        /** The host is blocked until {@code until} ({@code left} from now) after {@code failures} failed logins. */
        record Blocked(String host, int failures, Instant until, Duration left) implements Refusal {
        }

        /** Too many connections are logging in at once, in total or from this host. */
        record TooManyPending(String host, int pending, int limit, boolean perHost) implements Refusal {
        }
    }

    private static final class HostState {
        int pending;
        int failures;
        Instant blockedUntil = Instant.MIN;
    }

    private final ProxyConfig.LoginLimits limits;
    private final Clock clock;
    private final Map<String, HostState> hosts = new ConcurrentHashMap<>();
    private int pending;

    LoginGate(ProxyConfig.LoginLimits limits, Clock clock) {
        this.limits = limits;
        this.clock = clock;
    }

    /** A new connection from {@code host}: admitted (and counted as pending) or refused. */
    synchronized Optional<Refusal> admit(String host) {
        HostState state = hosts.computeIfAbsent(host, h -> new HostState());
        Instant now = clock.instant();
        if (now.isBefore(state.blockedUntil)) {
            return Optional.of(new Refusal.Blocked(host, state.failures, state.blockedUntil,
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

    /** An admitted connection logged in or went away: it no longer counts as pending. */
    synchronized void leave(String host) {
        HostState state = hosts.get(host);
        if (state == null || state.pending == 0) {
            return;
        }
        pending--;
        state.pending--;
        forgetIfIdle(host, state);
    }

    /** A login from {@code host} succeeded: its count of failures starts again. */
    synchronized void succeeded(String host) {
        HostState state = hosts.get(host);
        if (state != null) {
            state.failures = 0;
            forgetIfIdle(host, state);
        }
    }

    /**
     * A login from {@code host} failed (refused credentials, a malformed login). Returns the block when this
     * failure is the one that blocks the host.
     */
    synchronized Optional<Refusal.Blocked> failed(String host) {
        if (limits.maxAuthErrors() == 0) {
            return Optional.empty();
        }
        HostState state = hosts.computeIfAbsent(host, h -> new HostState());
        state.failures++;
        if (state.failures < limits.maxAuthErrors()) {
            return Optional.empty();
        }
        state.blockedUntil = clock.instant().plus(limits.blockFor());
        Refusal.Blocked blocked = new Refusal.Blocked(host, state.failures, state.blockedUntil, limits.blockFor());
        state.failures = 0; // after the cool-down the host starts again from nothing
        return Optional.of(blocked);
    }

    /** How many connections are logging in now. */
    synchronized int pending() {
        return pending;
    }

    private void forgetIfIdle(String host, HostState state) {
        if (state.pending == 0 && state.failures == 0 && !clock.instant().isBefore(state.blockedUntil)) {
            hosts.remove(host);
        }
    }
}
