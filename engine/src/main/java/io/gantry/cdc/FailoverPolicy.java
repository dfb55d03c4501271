package io.gantry.cdc;

import io.gantry.gtid.GtidSet;
import io.gantry.gtid.MariaDbGtidSet;
import io.gantry.topology.UpstreamUrl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Which CDC server the change stream uses next, and from which position: the failover rules of the change stream as
 * a state machine without I/O, threads or clocks. The stream asks {@link #next} for a server, reports how the attempt
 * went ({@link #streaming} or {@link #failed}), and waits for the pause it is given.
 *
 * <ul>
 *   <li>A start ({@link #restart}) begins with the highest-weight server not known to be down.
 *   <li>A failed server is tried again {@code connectRetries} times, then the stream moves to the next server by
 *       weight, wrapping around the list. A server whose binlog lacks applied transactions ({@link #resume}) is
 *       passed over at once, without retries.
 *   <li>A server that reached its binlog and then failed starts a new failure, with its own retries.
 *   <li>When every server on the list has failed in a row, the stream pauses {@link #ROUND_PAUSE} before the next
 *       round; between retries it pauses {@link #RETRY_PAUSE}.
 *   <li>There is no fail-back: a server that comes back is used only when the stream moves to it in turn, or on a
 *       restart.
 * </ul>
 *
 * <p>It also keeps what the stream's events need: why the stream moved (the failure of each server passed over since
 * the last one that streamed), whether reaching a server is a first start, a move, a restart or a reconnection, and
 * whether a server's skip was already reported. Used by the stream thread only; not thread safe.
 */
final class FailoverPolicy {

    static final Duration RETRY_PAUSE = Duration.ofMillis(200);
    static final Duration ROUND_PAUSE = Duration.ofSeconds(1);

    /** What to do after a failed attempt. */
    sealed interface Next {
        /** How long to wait before the next attempt. */
        Duration pause();
    }

    /** Try the same server again: retry {@code retry} of {@code retries}. */
    record Retry(int retry, int retries, Duration pause) implements Next {
    }

    /**
     * Move to the next server by weight; {@code roundFailed} when every server has now failed in a row, so the
     * pause is {@link #ROUND_PAUSE}.
     */
    record MoveOn(boolean roundFailed, Duration pause) implements Next {
    }

    /** What reaching a server's binlog means for the stream's events. */
    sealed interface Arrival {
    }

    /** The first server this run streams from. */
    record FirstStart(String reason) implements Arrival {
    }

    /** Another server than the last one streamed from. */
    record Moved(String from, String reason) implements Arrival {
    }

    /** The last server streamed from, after a start that asked to be announced. */
    record Restarted(String reason) implements Arrival {
    }

    /** The last server streamed from, again after a failure. */
    record Reconnected() implements Arrival {
    }

    /** Where to resume on a server. */
    sealed interface Resume {
    }

    /**
     * Resume after {@code position}; {@code fresh} when nothing was applied yet and it is the server's current
     * position.
     */
    record From(GtidSet position, boolean fresh) implements Resume {
    }

    /** The server's binlog lacks transactions the stream already applied: resuming there would skip them. */
    record Lacking(String reason) implements Resume {
    }

    private enum Target { TOP, SAME, AFTER }

    private final int connectRetries;
    private final Set<String> announcedSkips = new HashSet<>();
    private Target target = Target.TOP;
    private UpstreamUrl current;
    private int retriesUsed;
    private int failedInRow;
    /** Why the stream will start or move, or {@code null} once it streamed and nothing has failed since. */
    private String reason;
    private boolean announceRestart;
    private String lastStreamedFrom;

    /**
     * @param connectRetries further attempts on a failed server before moving on ({@code --upstream-connect-retries})
     * @param startReason    why the stream starts ({@code Gantry started})
     */
    FailoverPolicy(int connectRetries, String startReason) {
        if (connectRetries < 0) {
            throw new IllegalArgumentException("connect retries must be 0 or more, not " + connectRetries);
        }
        this.connectRetries = connectRetries;
        this.reason = Objects.requireNonNull(startReason, "startReason");
    }

    /**
     * Starts over from the highest-weight server not known to be down, forgetting failures, as
     * {@code START GANTRY REPLICATION} and a change of the server list do.
     *
     * @param announce whether streaming again from the server streamed from last is an event of its own (a start
     *                 by command), not just a reconnection
     */
    void restart(String why, boolean announce) {
        target = Target.TOP;
        retriesUsed = 0;
        failedInRow = 0;
        reason = Objects.requireNonNull(why, "why");
        announceRestart = announce;
    }

    /**
     * The server to try now, from the current list by weight ({@link #byWeight}). {@code knownDown} tells which
     * addresses the health loop has marked down; when every server is, the first is tried all the same.
     */
    UpstreamUrl next(List<UpstreamUrl> order, Predicate<String> knownDown) {
        if (order.isEmpty()) {
            throw new IllegalArgumentException("the CDC server list is empty");
        }
        current = switch (target) {
            case TOP -> order.stream().filter(u -> !knownDown.test(u.address())).findFirst().orElse(order.get(0));
            case SAME -> find(order, current);
            case AFTER -> after(order, current);
        };
        return current;
    }

    /** The server {@link #next} gave reached its binlog: failures are forgotten; returns what that means. */
    Arrival streaming() {
        String previous = lastStreamedFrom;
        String why = reason;
        boolean announce = announceRestart;
        lastStreamedFrom = current.address();
        retriesUsed = 0;
        failedInRow = 0;
        reason = null;
        announceRestart = false;
        announcedSkips.clear();
        if (previous == null) {
            return new FirstStart(why);
        }
        if (!previous.equals(current.address())) {
            return new Moved(previous, why);
        }
        return announce ? new Restarted(why) : new Reconnected();
    }

    /**
     * The attempt on the server {@link #next} gave failed.
     *
     * @param failure   what went wrong, in words
     * @param retryable false when retrying cannot help (the server lacks applied transactions)
     */
    Next failed(List<UpstreamUrl> order, String failure, boolean retryable) {
        if (retryable && retriesUsed < connectRetries) {
            retriesUsed++;
            target = Target.SAME;
            return new Retry(retriesUsed, connectRetries, RETRY_PAUSE);
        }
        String why = current.address() + " failed: " + failure;
        reason = reason == null ? why : reason + "; then " + why;
        target = Target.AFTER;
        retriesUsed = 0;
        failedInRow++;
        if (failedInRow >= order.size()) {
            failedInRow = 0;
            return new MoveOn(true, ROUND_PAUSE);
        }
        return new MoveOn(false, Duration.ZERO);
    }

    /** Whether a skip of {@code server} is to be reported: once until the stream streams again. */
    boolean firstSkipOf(UpstreamUrl server) {
        return announcedSkips.add(server.address());
    }

    /**
     * Where to resume on a server whose binlog holds {@code serverHas} and whose current position is
     * {@code serverCurrent}: after the applied position when there is one and the server holds all of it, else
     * (nothing applied yet) at the server's current position.
     */
    static Resume resume(String server, Optional<GtidSet> applied, GtidSet serverHas, GtidSet serverCurrent) {
        if (applied.isEmpty()) {
            return new From(serverCurrent, true);
        }
        GtidSet position = applied.get();
        boolean holdsAll = serverHas instanceof MariaDbGtidSet has && position instanceof MariaDbGtidSet done
                ? has.containsPerServer(done) : serverHas.contains(position);
        if (!holdsAll) {
            return new Lacking(server + " lacks transactions the change stream already applied (it has " + serverHas
                    + ", applied " + position + "); not resuming from it");
        }
        return new From(position, false);
    }

    /** The servers by weight, heaviest first; list order breaks ties. */
    static List<UpstreamUrl> byWeight(List<UpstreamUrl> servers) {
        List<UpstreamUrl> sorted = new ArrayList<>(servers);
        sorted.sort(Comparator.comparingInt(UpstreamUrl::weight).reversed()); // stable: list order breaks ties
        return sorted;
    }

    /** The server after {@code server} (matched by address) in {@code order}, wrapping; the first if it is gone. */
    static UpstreamUrl after(List<UpstreamUrl> order, UpstreamUrl server) {
        for (int i = 0; i < order.size(); i++) {
            if (order.get(i).address().equals(server.address())) {
                return order.get((i + 1) % order.size());
            }
        }
        return order.get(0);
    }

    /** The server of {@code order} with this address (its weight may have changed), else the first. */
    private static UpstreamUrl find(List<UpstreamUrl> order, UpstreamUrl server) {
        return order.stream().filter(u -> u.address().equals(server.address())).findFirst().orElse(order.get(0));
    }
}
