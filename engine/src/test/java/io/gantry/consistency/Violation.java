package io.gantry.consistency;

import java.util.List;

/**
 * One broken guarantee found in a history: the rule, what was expected, and the operations that show it.
 *
 * @param rule       which guarantee
 * @param message    what was expected and what happened
 * @param operations the read (or write) at fault first, then what it is compared with; may be empty for topology
 *                   findings
 */
public record Violation(Rule rule, String message, List<Operation> operations) {

    /** The guarantees {@link HistoryChecker} checks. */
    public enum Rule {
        /** A session's read of k, invoked after its own write of version w to k completed, saw less than w. */
        READ_YOUR_WRITES,
        /** A session's read of k saw less than an earlier read of k by the same session. */
        MONOTONIC_READS,
        /** A read under a staleness bound B, invoked at t, missed a write acknowledged before t - B - interval. */
        STALENESS_BOUND,
        /** A read saw a version nobody had (yet) tried to write to that key. */
        UNKNOWN_VALUE,
        /** A write reached a replica (refused as read-only), or a replica holds a transaction the primary lacks. */
        WRITE_ON_REPLICA
    }

    public Violation {
        operations = List.copyOf(operations);
    }

    public String describe(long originNanos) {
        StringBuilder out = new StringBuilder(rule.name()).append(": ").append(message);
        for (Operation operation : operations) {
            out.append("\n    ").append(operation.describe(originNanos));
        }
        return out.toString();
    }
}
