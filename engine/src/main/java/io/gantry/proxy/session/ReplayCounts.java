package io.gantry.proxy.session;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Transaction replays and how they ended, for {@code SHOW GANTRY STATUS} and the metrics. Updated by every session's
 * event loop; no locks.
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
        /** Its COMMIT was sent and never answered: whether it committed is not known, and the session ended. */
        COMMIT_UNKNOWN,
        /** No new primary within {@code --transaction-replay-timeout-ms}, or the replay's connection failed. */
        FAILED;

        /** Its row in {@code SHOW GANTRY STATUS}: {@code Transaction_replays_checksum_mismatch}. */
        public String statusRow() {
            return "Transaction_replays_" + name().toLowerCase(Locale.ROOT);
        }
    }

    private final Map<Outcome, LongAdder> counts = new EnumMap<>(Outcome.class);

    public ReplayCounts() {
        for (Outcome outcome : Outcome.values()) {
            counts.put(outcome, new LongAdder());
        }
    }

    public void ended(Outcome outcome) {
        counts.get(outcome).increment();
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
