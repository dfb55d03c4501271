package io.gantry.topology;

import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.events.EngineEvent;
import io.gantry.events.EventPublisher;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The live upstream list: every server with its current role and health, and which one is the primary. Thread-safe;
 * routing reads it on every statement, the health loop and failing sessions write it. What changes is published:
 * downs, ups, broken and diverged replicas and role changes as timeline entries, weights and lists as state changes.
 */
public final class Upstreams {

    private static final Logger LOG = LoggerFactory.getLogger(Upstreams.class);

    private volatile List<UpstreamServer> servers;
    private final Clock clock;
    private final EventPublisher events;
    private volatile UpstreamServer primary;
    private volatile String noPrimaryReason = "no health check has run yet";
    private volatile ListReplacer listReplacer;
    private volatile HealthRounds rounds = HealthRounds.NONE;
    /** Told when a server is marked down, on the thread that marked it (a probe's, or a session's event loop). */
    private final List<BiConsumer<UpstreamServer, String>> downListeners = new CopyOnWriteArrayList<>();
    /** Servers whose down spell the listeners were told of; a server checked up again leaves the set. */
    private final Set<UpstreamServer> announcedDown = ConcurrentHashMap.newKeySet();

    /** A list whose changes are told to no one. */
    public Upstreams(List<UpstreamUrl> urls, Clock clock) {
        this(urls, clock, EventPublisher.NONE);
    }

    /** @param events where downs, ups, role, weight and list changes are told (from the first check on) */
    public Upstreams(List<UpstreamUrl> urls, Clock clock, EventPublisher events) {
        this.servers = urls.stream().map(UpstreamServer::new).toList();
        this.clock = clock;
        this.events = events;
    }

    /** Where what happens to the servers is told; the health loop tells its rounds there too. */
    EventPublisher events() {
        return events;
    }

    Clock clock() {
        return clock;
    }

    private void timeline(String server, EventKind kind, String reason) {
        events.publish(new EngineEvent.Timeline(new Event(0, clock.instant(), server, kind, reason)));
    }

    /**
     * Replaces the list (an online {@code ALTER GANTRY CHANGE UPSTREAM}). Servers still in the list keep their
     * state and weight from the new entry. With a health loop attached, every server of the new list is checked and
     * the primary detected <em>before</em> the new list takes effect, so there is no moment without a known primary
     * (and no login that cannot find one); without, new servers start unknown until the next health round.
     */
    public void replace(List<UpstreamUrl> urls, String reason) {
        ListReplacer replacer = listReplacer;
        if (replacer != null) {
            replacer.replace(urls, reason);
        } else {
            install(prepare(urls), null, reason);
        }
    }

    /** Checks a prepared list and puts it in place with {@link #install}; the health loop does it. */
    interface ListReplacer {
        void replace(List<UpstreamUrl> urls, String reason);
    }

    void setListReplacer(ListReplacer replacer) {
        this.listReplacer = replacer;
    }

    /** The health loop's rounds, as those who wait for one see them. */
    interface HealthRounds {
        /** Asks for a round as soon as possible; returns the number of the first round that starts after now. */
        long request(String reason);

        /** How many rounds have finished. */
        long finished();

        /** Without a health loop every request is answered at once: nothing will check again. */
        HealthRounds NONE = new HealthRounds() {
            @Override
            public long request(String reason) {
                return 0;
            }

            @Override
            public long finished() {
                return 0;
            }
        };
    }

    void setHealthRounds(HealthRounds healthRounds) {
        this.rounds = healthRounds;
    }

    /**
     * Asks the health loop to check every server now instead of at its next round: something suggests the
     * topology changed (the primary refused a write as read-only, a server was lost). Requests coalesce: many
     * sessions meeting the same change cost one round.
     *
     * @return a ticket for {@link #checkedSince}: the round that looks at the servers after this call
     */
    public long requestCheck(String reason) {
        return rounds.request(reason);
    }

    /** Whether the round of {@code ticket} (from {@link #requestCheck}) has finished, so its findings are in. */
    public boolean checkedSince(long ticket) {
        return rounds.finished() >= ticket;
    }

    /** A listener's registration; closing it removes the listener. */
    public interface Listening extends AutoCloseable {
        @Override
        void close();
    }

    /**
     * Tells {@code listener} of each server a health check finds down from now on, with the reason: the proxy's
     * sessions and pools leave it at once. It must not block: it runs on the health check's thread.
     *
     * @return closing it removes the listener
     */
    public Listening onDown(BiConsumer<UpstreamServer, String> listener) {
        downListeners.add(listener);
        return () -> downListeners.remove(listener);
    }

    /** The servers a new list would have: those already in the list keep their object (and state). */
    synchronized List<UpstreamServer> prepare(List<UpstreamUrl> urls) {
        return urls.stream()
                .map(url -> find(url.address()).filter(s -> s.url().equals(url.withWeight(s.url().weight())))
                        .map(s -> {
                            s.setWeight(url.weight());
                            return s;
                        })
                        .orElseGet(() -> new UpstreamServer(url)))
                .toList();
    }

    /**
     * Puts a prepared list in place.
     *
     * @param detected the primary found by checking {@code next} (its primary may be null, with the reason), or
     *                 null when it was not checked: then the current primary stays if it is still in the list
     */
    synchronized void install(List<UpstreamServer> next, PrimaryChoice detected, String reason) {
        if (detected != null) {
            setPrimary(detected.primary(), detected.reasonWhenNone());
        } else {
            UpstreamServer current = primary;
            if (current != null && !next.contains(current)) {
                primary = null;
                noPrimaryReason = "the primary left the list; waiting for the next health round";
            }
        }
        servers = next;
        LOG.warn("topology: server list changed to {} ({})", next.stream().map(UpstreamServer::address).toList(),
                reason);
        // The Authority records the list change on the timeline, with the lists before and after.
        events.publish(new EngineEvent.StateChanged(null, "upstream list changed: " + reason));
    }

    /** The primary a health round found among the servers it checked, or null with the reason. */
    record PrimaryChoice(UpstreamServer primary, String reasonWhenNone) {
    }

    /** Changes a server's weight (a console slider, {@code ALTER GANTRY SET WEIGHT}). */
    public void setWeight(String address, int weight) {
        UpstreamServer server = find(address).orElseThrow(() -> new IllegalArgumentException(
                "no server " + address + " in the upstream list"));
        int before = server.weight();
        server.setWeight(weight);
        LOG.info("topology: weight of {} changed from {} to {}", address, before, weight);
        // The Authority records the weight change on the timeline.
        events.publish(new EngineEvent.StateChanged(address, "weight " + before + " -> " + weight));
    }

    /** Every server, in list order. */
    public List<UpstreamServer> servers() {
        return servers;
    }

    /** The server that takes writes, or empty when none is known (see {@link #noPrimaryReason()}). */
    public Optional<UpstreamServer> primary() {
        UpstreamServer current = primary;
        return current != null && current.isReachable() ? Optional.of(current) : Optional.empty();
    }

    /** {@link #primary()} without the {@code Optional}, null when none is known (for per-statement routing). */
    public UpstreamServer primaryOrNull() {
        UpstreamServer current = primary;
        return current != null && current.isReachable() ? current : null;
    }

    /** Whether {@code server} is the primary now (allocation-free, for per-statement checks). */
    public boolean isPrimary(UpstreamServer server) {
        UpstreamServer current = primary;
        return current == server && current != null && current.isReachable();
    }

    /** Why there is no primary now, for the error a client gets when it writes. */
    public String noPrimaryReason() {
        UpstreamServer current = primary;
        if (current != null && !current.isReachable()) {
            return "the primary " + current.address() + " is down (" + current.lastError() + ")";
        }
        return noPrimaryReason;
    }

    /** Replicas that are up (reachable, and neither broken nor diverged), in list order. */
    public List<UpstreamServer> upReplicas() {
        UpstreamServer current = primary;
        return servers.stream().filter(s -> s != current && s.isUp() && s.role() == Role.REPLICA).toList();
    }

    /** The server with this address, if it is in the list. */
    public Optional<UpstreamServer> find(String address) {
        return servers.stream().filter(s -> s.address().equals(address)).findFirst();
    }

    /**
     * Marks a server down after a failed connection or check. Only the first failure logs, so one dead server does
     * not flood the log with every session that tried it. New sessions pass it over at once; the health loop is
     * asked to look, and only its verdict ({@link #confirmDown}) makes the sessions already on it leave it: one
     * session's failed connect is not enough to cut every other session's connection.
     */
    public void markDown(UpstreamServer server, String reason) {
        if (server.markDown(reason, clock.instant())) {
            LOG.atWarn().addKeyValue("server", server.address())
                    .log("topology: {} is DOWN: {}", server.address(), reason);
            timeline(server.address(), EventKind.DOWN, reason);
            requestCheck(server.address() + " is down");
        }
    }

    /**
     * A health check found the server not answering: it is down, and the {@link #onDown} listeners are told, once
     * per spell (until a check finds it up again).
     */
    void confirmDown(UpstreamServer server, String reason) {
        markDown(server, reason);
        if (announcedDown.add(server)) {
            downListeners.forEach(listener -> listener.accept(server, reason));
        }
    }

    /**
     * Records what a health round found about a replica's replication: a problem (broken, diverged) or none (null).
     * A new problem, a change between broken and diverged, and the recovery are logged and are events; the same
     * problem with new details (a longer errant set) only updates the reason.
     */
    void replicationChecked(UpstreamServer server, ReplicationProblem problem) {
        ReplicationProblem before = server.setReplicationProblem(problem);
        if (problem == null) {
            if (before != null) {
                String reason = "replication is healthy again (was " + before.health().sqlName() + ": "
                        + before.detail() + ")";
                LOG.atInfo().addKeyValue("server", server.address())
                        .log("topology: replica {} is UP again: {}; it serves reads again", server.address(), reason);
                timeline(server.address(), EventKind.UP, reason);
            }
            return;
        }
        if (before == null || before.health() != problem.health()) {
            String reason = problem.describe(server.address());
            LOG.warn("topology: {}; it serves no reads until it recovers", reason);
            timeline(server.address(), problem.health() == Health.BROKEN ? EventKind.BROKEN : EventKind.DIVERGED,
                    reason);
        }
    }

    /**
     * Records a good check of a server and its detected role.
     *
     * @param rttMicros     the round trip of its ping on the kept connection
     * @param connectMicros how long opening and logging in its new connection took
     */
    void markChecked(UpstreamServer server, Role role, long rttMicros, long connectMicros) {
        Role before = server.role();
        announcedDown.remove(server);
        if (server.checkSucceeded(role, rttMicros, connectMicros, clock.instant())) {
            LOG.atInfo().addKeyValue("server", server.address())
                    .log("topology: {} is UP again ({})", server.address(), role.name().toLowerCase());
            timeline(server.address(), EventKind.UP, "health check succeeded");
        }
        if (before != Role.UNKNOWN && before != role) {
            String change = "role changed from " + before.name().toLowerCase() + " to " + role.name().toLowerCase();
            LOG.atWarn().addKeyValue("server", server.address()).log("topology: {} {}", server.address(), change);
            timeline(server.address(), EventKind.ROLE_CHANGE, change);
        }
    }

    /** Sets the primary found by the latest health round (null with a reason when there is none). */
    void setPrimary(UpstreamServer newPrimary, String reasonWhenNone) {
        UpstreamServer before = primary;
        primary = newPrimary;
        noPrimaryReason = reasonWhenNone;
        if (before != newPrimary) {
            if (newPrimary == null) {
                LOG.error("topology: no primary: {}; statements that need one wait for it (--switchover-hold-ms), then are "
                        + "refused", reasonWhenNone);
            } else if (before == null) {
                LOG.atInfo().addKeyValue("server", newPrimary.address())
                        .log("topology: primary is {}", newPrimary.address());
            } else {
                LOG.atWarn().addKeyValue("server", newPrimary.address())
                        .log("topology: primary moved from {} to {}; writes follow", before.address(),
                                newPrimary.address());
            }
            timeline(newPrimary == null ? null : newPrimary.address(), EventKind.ROLE_CHANGE, newPrimary == null
                    ? "no primary: " + reasonWhenNone
                    : "primary is now " + newPrimary.address() + (before == null ? "" : " (was " + before.address()
                    + ")"));
        }
    }
}
