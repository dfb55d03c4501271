package io.gantry.proxy.session;

import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.events.EngineEvent;
import io.gantry.events.EventPublisher;
import io.netty.channel.EventLoop;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Transaction replays and how they ended, for {@code SHOW GANTRY STATUS} and the metrics, and one timeline event per
 * loss of the primary with the counts of what its open transactions became ({@link EventKind#TRANSACTIONS_REPLAYED}).
 * Counted by every session's event loop without locks; the event's tally takes one, once per lost transaction.
 */
public final class ReplayCounts {

    /** How a transaction whose primary was lost ended. */
    public enum Outcome {
        /** Replayed on the new primary with every answer the same: the session went on. */
        REPLAYED,
        /** An answer of the replay differed from the one the client got: the session ended. */
        CHECKSUM_MISMATCH,
        /**
         * Its statements passed {@code --transaction-replay-max-bytes}, so it could not have been replayed: counted
         * when it passes, lost or not.
         */
        TOO_LARGE,
        /**
         * Its COMMIT was sent and never answered, and the new primary had it: it had committed, and the client got
         * the COMMIT's OK.
         */
        COMMIT_FOUND,
        /** Its COMMIT was sent and never answered: whether it committed could not be told, and the session ended. */
        COMMIT_UNKNOWN,
        /** Its ROLLBACK was sent and never answered: it is rolled back either way, and the client got the OK. */
        ROLLED_BACK,
        /** No new primary within {@code --transaction-replay-timeout-ms}, or the replay's connection failed. */
        FAILED;

        /** How the timeline event says it. */
        String inWords() {
            return switch (this) {
                case REPLAYED -> "replayed";
                case CHECKSUM_MISMATCH -> "ended (an answer differed)";
                case TOO_LARGE -> "too large to replay";
                case COMMIT_FOUND -> "committed before the loss (found on the new primary)";
                case COMMIT_UNKNOWN -> "ended (a COMMIT's outcome unknown)";
                case ROLLED_BACK -> "rolled back (its ROLLBACK was on its way)";
                case FAILED -> "ended (no primary in time, or the replay's connection failed)";
            };
        }

        /** Its row in {@code SHOW GANTRY STATUS}: {@code Transaction_replays_checksum_mismatch}. */
        public String statusRow() {
            return "Transaction_replays_" + name().toLowerCase(Locale.ROOT);
        }
    }

    private final Map<Outcome, LongAdder> counts = new EnumMap<>(Outcome.class);
    private final Clock clock;
    /** How long after the first outcome of a loss its event is published: every replay has ended by then. */
    private final Duration tallyWindow;
    private volatile EventPublisher events = EventPublisher.NONE;
    /** The outcomes of the loss being tallied, or null; and where the transactions went. */
    private Map<Outcome, Integer> tally;
    private String tallyServer;
    private Instant tallyStart;

    /** @param replayTimeout {@code --transaction-replay-timeout-ms}: a replay ends within it */
    public ReplayCounts(Clock clock, Duration replayTimeout) {
        this.clock = clock;
        this.tallyWindow = replayTimeout.plusSeconds(1);
        for (Outcome outcome : Outcome.values()) {
            counts.put(outcome, new LongAdder());
        }
    }

    /** Where the timeline events go, once the proxy runs. */
    public void setEvents(EventPublisher events) {
        this.events = events;
    }

    /** A transaction became too large to replay. */
    public void tooLarge() {
        counts.get(Outcome.TOO_LARGE).increment();
    }

    /**
     * A transaction open when the primary was lost ended so ({@code server}: where it was replayed, or the primary
     * that was lost); the first outcome of a loss starts its tally, published as one event {@link #tallyWindow}
     * later on {@code loop}.
     */
    public void ended(Outcome outcome, String server, EventLoop loop) {
        counts.get(outcome).increment();
        synchronized (this) {
            if (tally == null) {
                tally = new EnumMap<>(Outcome.class);
                tallyStart = clock.instant();
                loop.schedule(this::publishTally, tallyWindow.toMillis(), TimeUnit.MILLISECONDS);
            }
            tally.merge(outcome, 1, Integer::sum);
            if (outcome == Outcome.REPLAYED || tallyServer == null) {
                tallyServer = server;
            }
        }
    }

    private void publishTally() {
        Map<Outcome, Integer> outcomes;
        String server;
        Instant at;
        synchronized (this) {
            outcomes = tally;
            server = tallyServer;
            at = tallyStart;
            tally = null;
            tallyServer = null;
        }
        int total = outcomes.values().stream().mapToInt(Integer::intValue).sum();
        int replayed = outcomes.getOrDefault(Outcome.REPLAYED, 0);
        StringBuilder reason = new StringBuilder().append(total).append(total == 1 ? " transaction" : " transactions")
                .append(" open when the primary was lost: ").append(replayed).append(" replayed");
        outcomes.forEach((outcome, count) -> {
            if (outcome != Outcome.REPLAYED) {
                reason.append(", ").append(count).append(' ').append(outcome.inWords());
            }
        });
        events.publish(new EngineEvent.Timeline(new Event(0, at, server, EventKind.TRANSACTIONS_REPLAYED,
                reason.toString())));
    }

    /** The rows of {@code SHOW GANTRY STATUS}: the transactions lost with a primary, then by outcome. */
    public Map<String, String> status() {
        Map<String, String> rows = new LinkedHashMap<>();
        long total = 0;
        for (Map.Entry<Outcome, LongAdder> entry : counts.entrySet()) {
            total += entry.getKey() == Outcome.TOO_LARGE ? 0 : entry.getValue().sum();
        }
        rows.put("Transactions_lost_with_primary", Long.toString(total));
        for (Map.Entry<Outcome, LongAdder> entry : counts.entrySet()) {
            rows.put(entry.getKey().statusRow(), Long.toString(entry.getValue().sum()));
        }
        return rows;
    }
}
