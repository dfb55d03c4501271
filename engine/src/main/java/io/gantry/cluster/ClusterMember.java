package io.gantry.cluster;

import io.gantry.authority.Authority;
import io.gantry.authority.Pruner;
import io.gantry.authority.Retention;
import io.gantry.topology.Upstreams;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This instance's membership of a cluster ({@code --cluster}): the shared configuration is a sequence of versions in
 * the cluster's schema on the primary, each one whole, and every instance applies them in order to its
 * {@link LocalConfiguration}. A change here is the next version, added only if no instance added it first (the
 * versions table's primary key is the compare-and-set), and then applied here. The instance learns of the others'
 * versions when {@link #poke() poked} (its change stream saw the versions table change) and at every poll interval
 * in any case (the health interval; the only way with {@code --no-cdc}). The local copy lets the instance start and
 * serve while the primary is unreachable; changes are refused until it is back. The same rounds exchange the
 * instances' timeline events ({@link SharedTimeline}) and, every {@link Pruner#PERIOD}, prune the versions beyond
 * {@link VersionHistory#KEPT} and this instance's shared events older than its retention.
 *
 * <p>Everything that reads or writes the cluster runs under one lock, on the caller's thread (admin statements) or
 * on the member's own thread (polls), never on an event loop.
 */
public final class ClusterMember implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterMember.class);

    /** How often an instance writes its sign of life into {@code instances}, at most. */
    static final Duration HEARTBEAT = Duration.ofSeconds(5);
    /** How many more times the versions are read soon after a poke that found nothing new. */
    private static final int AFTER_POKE_TRIES = 6;
    /** Versions read in one go while catching up. */
    private static final int BATCH = 100;
    /** Server errors that say the service account lacks a privilege. */
    private static final List<Integer> PRIVILEGE_ERRORS = List.of(1044, 1142, 1143, 1227, 1410);

    private final ClusterSettings settings;
    private final ClusterStore store;
    private final Authority authority;
    private final LocalConfiguration local;
    private final Duration pollInterval;
    private final String gantryVersion;

    private final Object lock = new Object();
    /** The version the local configuration is; written under {@link #lock}, read without (status, metrics). */
    private volatile long applied;
    private final PrimaryConnection primary;
    private final SharedTimeline timeline;
    private boolean startSaid;
    private long lastHeartbeatNanos;
    private boolean prunedOnce;
    private long lastPruneNanos;

    /** Why the cluster could not be read at the last try; null when it could. */
    private volatile String problem;
    private volatile long latestSeen;

    private final Object wake = new Object();
    private boolean poked;
    private boolean ownEvents;
    private volatile boolean closed;
    /** Whom this instance's place in the cluster is lent to ({@link #pauseForHandOver}); null while it is its own. */
    private volatile String lentTo;
    private Thread thread;

    /**
     * @param pollInterval   how often the versions are read when nothing pokes (the health interval)
     * @param connectTimeout bound on connecting to the primary, login included
     * @param retention      how long this instance keeps events ({@code --health-retention}), in the shared timeline too
     */
    public ClusterMember(ClusterSettings settings, Upstreams upstreams, Authority authority, LocalConfiguration local,
                         Duration pollInterval, Duration connectTimeout, Retention retention, String gantryVersion) {
        this.settings = settings;
        this.store = new ClusterStore(settings.name(), settings.schema());
        this.authority = authority;
        this.local = local;
        this.pollInterval = pollInterval;
        this.gantryVersion = gantryVersion;
        this.applied = authority.appliedClusterVersion(settings.name());
        this.primary = new PrimaryConnection(upstreams, store, connectTimeout);
        this.timeline = new SharedTimeline(store, settings.instance(), authority, retention, Clock.systemUTC());
    }

    public ClusterSettings settings() {
        return settings;
    }

    /**
     * Joins: creates the cluster's tables where missing, adds this instance's configuration as the first version of
     * a cluster that has none, or applies the versions this instance has not, then polls on a thread of its own.
     * With the primary unreachable the instance serves with the version it applied last and catches up later.
     *
     * @throws ClusterException when the service account lacks a privilege the cluster needs: a setting to fix
     */
    public void join() {
        synchronized (lock) {
            try {
                sync();
                LOG.info("cluster '{}': instance {} joined; configuration version {} ({})", settings.name(),
                        settings.instance(), applied, local.current());
            } catch (SQLException e) {
                primary.drop();
                if (PRIVILEGE_ERRORS.contains(e.getErrorCode())) {
                    throw new ClusterException(privilegeMessage(e), e);
                }
                unreachable(e.getMessage());
            } catch (ClusterException e) {
                unreachable(e.getMessage());
            }
        }
        startPolling();
    }

    private void startPolling() {
        thread = new Thread(this::run, "gantry-cluster");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * A take-over: the Gantry taking over (the same instance of the cluster, on the same data directory) joins in this
     * one's place, so this one stops reading and writing the cluster (its configuration rounds, its sign of life and
     * its events) and refuses changes, while its proxy goes on serving with the configuration it has, until
     * {@link #resumeAfterHandOver} (the take-over failed) or its close.
     *
     * @param borrower who takes over, for the refusals ("the Gantry taking over (pid 42)")
     */
    public void pauseForHandOver(String borrower) {
        lentTo = borrower;
        stopPolling();
        synchronized (lock) {
            primary.drop();
        }
        LOG.info("cluster '{}': instance {} lets {} take its place; this process no longer reads or changes the "
                + "cluster's configuration", settings.name(), settings.instance(), borrower);
    }

    /** The take-over failed: this process is the instance again, and catches up at once. */
    public void resumeAfterHandOver() {
        if (lentTo == null || closed) {
            return;
        }
        lentTo = null;
        poke();
        startPolling();
        LOG.info("cluster '{}': instance {} is this process again", settings.name(), settings.instance());
    }

    /** The change stream saw the versions or the events table change: read them now rather than at the next poll. */
    public void poke() {
        synchronized (wake) {
            poked = true;
            wake.notifyAll();
        }
    }

    /**
     * This instance stored an event of its own: push it now rather than at the next round. Only the push: the
     * versions and the others' events wait for their round, so this costs one insert.
     */
    public void shareOwnEvents() {
        synchronized (wake) {
            ownEvents = true;
            wake.notifyAll();
        }
    }

    /**
     * Makes a change of the shared configuration: the next version, if no other instance made it first, then applied
     * here.
     *
     * @param description what the change is and who asked for it, for every instance's timeline
     * @param edit        the configuration after the change, from the one this instance serves with
     * @return the new version, or empty when the edit changes nothing (no version is added)
     * @throws ClusterException.Conflict when another instance made that version first (this instance applies it)
     * @throws ClusterException          when the primary cannot be reached or refuses the change
     */
    public OptionalLong change(String description, UnaryOperator<SharedConfiguration> edit) {
        String borrower = lentTo;
        if (borrower != null) {
            throw new ClusterException("the change was not made: this process is handing instance "
                    + settings.instance() + " over to " + borrower + "; make the change there, or on another "
                    + "instance");
        }
        synchronized (lock) {
            SharedConfiguration current = local.current();
            SharedConfiguration next = edit.apply(current);
            if (next.equals(current)) {
                return OptionalLong.empty();
            }
            long number = applied + 1;
            try {
                Connection c = primary.get();
                if (!store.add(c, number, settings.instance(), description, next)) {
                    ClusterStore.Version first = store.version(c, number).orElse(null);
                    catchUp(c);
                    throw new ClusterException.Conflict("the cluster's configuration was changed first by instance "
                            + (first == null ? "another instance" : first.instance() + " (version " + number + " at "
                            + first.at() + ": " + first.description() + ")") + "; this change was not made. This "
                            + "instance now has version " + applied + ": make the change again if it still applies");
                }
                apply(new ClusterStore.Version(number, settings.instance(), java.time.Instant.now(), description,
                        next));
                signOfLifeNow(c);
                return OptionalLong.of(number);
            } catch (SQLException e) {
                primary.drop();
                throw new ClusterException("the change was not made: the primary " + primary.target() + " refused "
                        + "it: " + e.getMessage(), e);
            } catch (ClusterException.Conflict e) {
                throw e;
            } catch (ClusterException e) {
                throw new ClusterException("the cluster's configuration lives on the primary and cannot change now: "
                        + e.getMessage() + ". This instance serves with version " + applied + "; changes wait until "
                        + "the primary is back", e);
            }
        }
    }

    /** What {@code SHOW GANTRY CLUSTER} shows. */
    public record View(String instance, long latest, List<ClusterInstance> rows, Optional<String> feedOwner) {
    }

    /**
     * The instances of the cluster as the primary has them.
     *
     * @throws ClusterException when the primary cannot be read now
     */
    public View view() {
        synchronized (lock) {
            try {
                Connection c = primary.get();
                long latest = store.latest(c);
                latestSeen = latest;
                return new View(settings.instance(), latest, store.instances(c), store.feedOwner(c));
            } catch (SQLException e) {
                primary.drop();
                throw new ClusterException("the cluster cannot be read on the primary " + primary.target() + ": "
                        + e.getMessage() + "; this instance has version " + appliedVersion(), e);
            } catch (ClusterException e) {
                throw new ClusterException("the cluster cannot be read: " + e.getMessage() + "; this instance has "
                        + "version " + applied, e);
            }
        }
    }

    /** The version this instance serves with. */
    public long appliedVersion() {
        return applied;
    }

    /** Rows for {@code SHOW GANTRY STATUS}: name, instance, version, and whether it is in step. */
    public List<String[]> statusRows() {
        long version = appliedVersion();
        String state = problem != null ? "serving with its last configuration: " + problem
                : version < latestSeen ? "catching up (cluster at version " + latestSeen + ")" : "in step";
        return List.of(new String[] {"Cluster", settings.name()}, new String[] {"Cluster Instance",
                settings.instance()}, new String[] {"Cluster Version", Long.toString(version)},
                new String[] {"Cluster State", state});
    }

    // ---- under the lock ------------------------------------------------------------------------

    /** One round: the versions, the timeline's events, pruning when due, the sign of life. */
    private SharedTimeline.Round sync() throws SQLException {
        Connection c = primary.get();
        long before = applied;
        long latest = store.latest(c);
        latestSeen = latest;
        if (latest == 0) {
            seed(c);
        } else if (latest < applied) {
            LOG.warn("cluster '{}': the primary has versions up to {}, fewer than this instance applied ({}): the "
                    + "cluster's tables were replaced or lost; applying its version {}", settings.name(), latest,
                    applied, latest);
            store.version(c, latest).ifPresent(this::apply);
        } else {
            catchUp(c);
        }
        SharedTimeline.Round events = timeline.exchange(c);
        pruneWhenDue(c);
        heartbeat(c, applied != before); // at once when it changed, so SHOW GANTRY CLUSTER is right
        if (problem != null) {
            LOG.info("cluster '{}': the primary {} answers again; configuration version {}", settings.name(),
                    primary.target(), applied);
            problem = null;
        }
        return events;
    }

    /** At the first round (so a missing privilege shows at the start) and then every {@link Pruner#PERIOD}. */
    private void pruneWhenDue(Connection c) throws SQLException {
        if (prunedOnce && System.nanoTime() - lastPruneNanos < Pruner.PERIOD.toNanos()) {
            return;
        }
        int versions = store.pruneVersions(c, VersionHistory.prunableUpTo(latestSeen));
        int events = timeline.prune(c);
        prunedOnce = true;
        lastPruneNanos = System.nanoTime();
        if (versions + events > 0) {
            LOG.info("cluster '{}': pruned {} configuration versions (the newest {} are kept) and {} of this "
                    + "instance's events from the shared timeline", settings.name(), versions, VersionHistory.KEPT,
                    events);
        }
    }

    /** The first instance of a cluster adds its own configuration as version 1 (or applies the one that won). */
    private void seed(Connection c) throws SQLException {
        SharedConfiguration mine = local.current();
        String description = "instance " + settings.instance() + " started the cluster with its configuration";
        if (store.add(c, 1, settings.instance(), description, mine)) {
            authority.saveAppliedClusterVersion(settings.name(), 1);
            applied = 1;
            LOG.info("cluster '{}': {} (version 1: {})", settings.name(), description, mine);
        } else {
            catchUp(c);
        }
    }

    private void catchUp(Connection c) throws SQLException {
        while (true) {
            List<ClusterStore.Version> versions = store.after(c, applied, BATCH);
            if (!versions.isEmpty() && VersionHistory.missesPruned(applied, versions.get(0).number())) {
                takeNewest(c, versions.get(0).number());
                continue;
            }
            for (ClusterStore.Version version : versions) {
                apply(version);
            }
            if (versions.size() < BATCH) {
                return;
            }
        }
    }

    /** This instance is behind by more than the versions kept: the newest is whole, and enough. */
    private void takeNewest(Connection c, long oldestLeft) throws SQLException {
        long latest = store.latest(c);
        LOG.warn("cluster '{}': this instance has version {}, but versions {} to {} were pruned (the cluster keeps "
                + "the newest {}); taking the newest whole, version {}", settings.name(), applied, applied + 1,
                oldestLeft - 1, VersionHistory.KEPT, latest);
        ClusterStore.Version newest = store.version(c, latest).orElseThrow(() -> new ClusterException(
                "version " + latest + " of the cluster's configuration is gone while it was read"));
        apply(newest);
    }

    private void apply(ClusterStore.Version version) {
        boolean own = version.instance().equals(settings.instance());
        String reason = "cluster version " + version.number() + (own ? "" : " from instance " + version.instance())
                + ": " + version.description();
        local.apply(version.configuration(), reason);
        authority.saveAppliedClusterVersion(settings.name(), version.number());
        applied = version.number();
        if (!own) {
            LOG.info("cluster '{}': applied {}", settings.name(), reason);
        }
    }

    private void heartbeat(Connection c, boolean now) throws SQLException {
        if (now || !startSaid || System.nanoTime() - lastHeartbeatNanos >= HEARTBEAT.toNanos()) {
            store.heartbeat(c, settings.instance(), settings.address(), gantryVersion, applied, !startSaid);
            startSaid = true;
            lastHeartbeatNanos = System.nanoTime();
        }
    }

    /** The change is made: a failed sign of life after it must not say otherwise (the next poll writes one). */
    private void signOfLifeNow(Connection c) {
        try {
            heartbeat(c, true);
        } catch (SQLException e) {
            primary.drop();
            LOG.warn("cluster '{}': the sign of life after version {} failed: {}", settings.name(), applied,
                    e.getMessage());
        }
    }

    private void unreachable(String why) {
        if (!why.equals(problem)) {
            LOG.warn("cluster '{}': cannot follow the cluster's configuration ({}); serving with version {} as "
                    + "this instance applied it last; changes wait until this is resolved", settings.name(), why,
                    applied);
        }
        problem = why;
    }

    private String privilegeMessage(SQLException e) {
        String user = primary.account();
        return "--cluster " + settings.name() + ": the service account " + user + " lacks a privilege on the schema `"
                + settings.schema() + "` on the primary " + primary.target() + " (" + e.getMessage() + "). Give it: "
                + "GRANT CREATE, SELECT, INSERT, UPDATE, DELETE ON `" + settings.schema() + "`.* TO " + user + "@'...'";
    }

    // ---- the member's thread -------------------------------------------------------------------

    /**
     * Waits for a poke or the poll interval, then runs a round. A poke can come before the change can be read: a
     * server sends a transaction to binlog readers before its commit is visible to other connections. So after a
     * poke that found nothing new (no version, no event of another instance) the round runs again soon,
     * {@value #AFTER_POKE_TRIES} times, 10 ms apart and doubling (630 ms in all). A round that left events to
     * exchange is followed by another at once. This instance's own new events are pushed in between.
     */
    private void run() {
        long waitMillis = pollInterval.toMillis();
        long roundDue = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        int triesLeft = 0;
        while (!closed && lentTo == null) {
            boolean wasPoked;
            boolean pushOnly;
            synchronized (wake) {
                if (!poked && !ownEvents && waitMillis > 0) {
                    try {
                        wake.wait(waitMillis);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                wasPoked = poked;
                pushOnly = ownEvents && !poked && System.nanoTime() - roundDue < 0;
                poked = false;
                ownEvents = false;
            }
            if (closed || lentTo != null) {
                return;
            }
            if (pushOnly) {
                pushOwnEvents();
                waitMillis = Math.max(0, TimeUnit.NANOSECONDS.toMillis(roundDue - System.nanoTime()));
                continue;
            }
            long before = appliedVersion();
            SharedTimeline.Round round = new SharedTimeline.Round(0, false);
            synchronized (lock) {
                try {
                    round = sync();
                } catch (SQLException e) {
                    primary.drop();
                    unreachable(e.getMessage());
                } catch (ClusterException e) {
                    unreachable(e.getMessage());
                } catch (RuntimeException e) {
                    LOG.error("cluster '{}': applying the cluster's configuration or storing its events failed: {}",
                            settings.name(), e.toString(), e);
                    problem = e.getMessage();
                }
            }
            if (wasPoked) {
                triesLeft = AFTER_POKE_TRIES;
            }
            if (round.more()) {
                waitMillis = 0;
            } else if (appliedVersion() != before || round.pulled() > 0 || triesLeft == 0) {
                triesLeft = 0;
                waitMillis = pollInterval.toMillis();
            } else {
                waitMillis = 10L << (AFTER_POKE_TRIES - triesLeft);
                triesLeft--;
            }
            roundDue = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        }
    }

    /** A failure here is the next round's to report: the events wait in the Authority until then. */
    private void pushOwnEvents() {
        synchronized (lock) {
            try {
                if (timeline.push(primary.get())) {
                    shareOwnEvents(); // a full batch: the rest at once
                }
            } catch (SQLException e) {
                primary.drop();
                LOG.debug("cluster '{}': pushing this instance's events failed: {}", settings.name(), e.getMessage());
            } catch (RuntimeException e) {
                LOG.debug("cluster '{}': pushing this instance's events failed: {}", settings.name(), e.toString());
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        stopPolling();
        synchronized (lock) {
            primary.drop();
        }
    }

    private void stopPolling() {
        Thread running = thread;
        if (running != null) {
            running.interrupt();
            try {
                running.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
