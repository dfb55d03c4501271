package io.gantry.consistency;

import io.gantry.consistency.Operation.Kind;
import io.gantry.consistency.Violation.Rule;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks a history of versioned writes and reads against Gantry's read guarantees.
 *
 * <p>The workload's contract, which makes the rules exact: every write of a key carries a version never used before,
 * and a key's stored version never goes down (writes store {@code GREATEST(v, new)}), so a key's stored version only
 * rises in commit order, and once a write of version w to k has committed, every later state of k holds at least w.
 * {@link Operation#ABSENT} (0) stands below every version.
 *
 * <p>Rules, for reads whose outcome is {@link Operation.Outcome#OK} (failed reads say nothing):
 * <ul>
 *   <li>{@link Rule#READ_YOUR_WRITES}: a read of k by session S invoked after a committed write of version w to k by
 *       S completed sees at least w.</li>
 *   <li>{@link Rule#MONOTONIC_READS}: a read of k by session S invoked after an earlier read of k by S completed
 *       sees at least what that read saw.</li>
 *   <li>{@link Rule#STALENESS_BOUND}: a read with a bound B &gt; 0 invoked at t sees at least every version of k
 *       whose write (any session) committed and completed before t - B - {@code sampleInterval}.</li>
 *   <li>{@link Rule#UNKNOWN_VALUE}: a read that sees version v of k has a write of v to k (committed, or with an
 *       unknown outcome) invoked before the read completed.</li>
 *   <li>{@link Rule#WRITE_ON_REPLICA}: no write is refused with MariaDB/MySQL error 1290 (the read-only option)
 *       outside a window the history expects it in; and, through {@link #checkReplicaBinlogs}, no replica's binlog
 *       state has a (domain, server) entry the primary lacks or is ahead of it.</li>
 * </ul>
 */
public final class HistoryChecker {

    /** ER_OPTION_PREVENTS_STATEMENT: "The MariaDB server is running with the --read-only option". */
    public static final int ER_OPTION_PREVENTS_STATEMENT = 1290;

    /** What a check found. */
    public record Report(int operations, int reads, int writes, int notOk, List<Violation> violations,
                         long originNanos) {

        public Map<Rule, Integer> countByRule() {
            Map<Rule, Integer> counts = new EnumMap<>(Rule.class);
            for (Violation violation : violations) {
                counts.merge(violation.rule(), 1, Integer::sum);
            }
            return counts;
        }

        public long count(Rule rule) {
            return violations.stream().filter(v -> v.rule() == rule).count();
        }

        public boolean clean() {
            return violations.isEmpty();
        }

        /** Operations that did not succeed, counted by kind, outcome and error code. */
        public Map<String, Integer> failures(List<Operation> operations) {
            Map<String, Integer> counts = new java.util.TreeMap<>();
            for (Operation operation : operations) {
                if (!operation.ok()) {
                    counts.merge(operation.kind() + " " + operation.outcome() + " " + operation.errorCode(), 1,
                            Integer::sum);
                }
            }
            return counts;
        }

        /** A summary and the first {@code limit} violations. */
        public String describe(int limit) {
            StringBuilder out = new StringBuilder();
            out.append(operations).append(" operations (").append(reads).append(" reads, ").append(writes)
                    .append(" writes, ").append(notOk).append(" failed or unknown), ").append(violations.size())
                    .append(" violations ").append(countByRule());
            for (int i = 0; i < Math.min(limit, violations.size()); i++) {
                out.append("\n  ").append(violations.get(i).describe(originNanos));
            }
            if (violations.size() > limit) {
                out.append("\n  ... and ").append(violations.size() - limit).append(" more");
            }
            return out.toString();
        }
    }

    private final Duration sampleInterval;

    /** @param sampleInterval the proxy's {@code --lag-sample-interval-ms}: the slack the staleness rule allows */
    public HistoryChecker(Duration sampleInterval) {
        this.sampleInterval = sampleInterval;
    }

    public Report check(History history) {
        return check(history.operations(), history.readOnlyWindows(), history.originNanos());
    }

    public Report check(List<Operation> operations) {
        long origin = operations.stream().mapToLong(Operation::invokedNanos).min().orElse(0);
        return check(operations, List.of(), origin);
    }

    public Report check(List<Operation> all, List<History.Window> readOnlyWindows, long originNanos) {
        List<Operation> operations = new ArrayList<>(all);
        operations.sort(Comparator.comparingLong(Operation::invokedNanos));
        List<Violation> violations = new ArrayList<>();
        int reads = 0;
        int writes = 0;
        int notOk = 0;
        for (Operation operation : operations) {
            if (operation.kind() == Kind.READ) {
                reads++;
            } else {
                writes++;
            }
            if (!operation.ok()) {
                notOk++;
            }
        }
        Map<Integer, CommittedWrites> committed = committedWrites(operations);
        Map<Integer, Map<Long, Operation>> attempted = attemptedWrites(operations);
        Map<String, List<Operation>> bySession = new LinkedHashMap<>();
        for (Operation operation : operations) {
            bySession.computeIfAbsent(operation.session(), s -> new ArrayList<>()).add(operation);
        }
        for (List<Operation> session : bySession.values()) {
            checkSession(session, violations);
        }
        for (Operation operation : operations) {
            if (operation.kind() == Kind.READ && operation.ok()) {
                checkStaleness(operation, committed.get(operation.key()), violations);
                checkKnownValue(operation, attempted.get(operation.key()), violations);
            }
            if (operation.kind() == Kind.WRITE && operation.outcome() == Operation.Outcome.FAILED
                    && operation.errorCode() == ER_OPTION_PREVENTS_STATEMENT
                    && readOnlyWindows.stream().noneMatch(w -> w.covers(operation.invokedNanos())
                    || w.covers(operation.completedNanos()))) {
                violations.add(new Violation(Rule.WRITE_ON_REPLICA,
                        "a write was sent to a read-only server outside any expected window",
                        List.of(operation)));
            }
        }
        return new Report(operations.size(), reads, writes, notOk, violations, originNanos);
    }

    /** Read-your-writes and monotonic reads: one session's operations, compared by time, not by list order. */
    private static void checkSession(List<Operation> session, List<Violation> violations) {
        // Per key, the operations of the session that bind its later reads, by completion time.
        Map<Integer, List<Operation>> ownWrites = new HashMap<>();
        Map<Integer, List<Operation>> ownReads = new HashMap<>();
        for (Operation operation : session) {
            if (!operation.ok()) {
                continue;
            }
            (operation.kind() == Kind.WRITE ? ownWrites : ownReads)
                    .computeIfAbsent(operation.key(), k -> new ArrayList<>()).add(operation);
        }
        for (Operation read : session) {
            if (read.kind() != Kind.READ || !read.ok()) {
                continue;
            }
            Operation write = highestBefore(ownWrites.get(read.key()), read.invokedNanos());
            if (write != null && read.version() < write.version()) {
                violations.add(new Violation(Rule.READ_YOUR_WRITES, "read of k=" + read.key() + " saw "
                        + read.version() + " after its session's write of " + write.version() + " completed",
                        List.of(read, write)));
            }
            Operation earlier = highestBefore(ownReads.get(read.key()), read.invokedNanos());
            if (earlier != null && read.version() < earlier.version()) {
                violations.add(new Violation(Rule.MONOTONIC_READS, "read of k=" + read.key() + " saw "
                        + read.version() + " after its session had read " + earlier.version(),
                        List.of(read, earlier)));
            }
        }
    }

    /** The operation of highest version among those completed strictly before {@code nanos}, or null. */
    private static Operation highestBefore(List<Operation> operations, long nanos) {
        if (operations == null) {
            return null;
        }
        Operation best = null;
        for (Operation operation : operations) {
            if (operation.completedNanos() < nanos && (best == null || operation.version() > best.version())) {
                best = operation;
            }
        }
        return best;
    }

    private void checkStaleness(Operation read, CommittedWrites writes, List<Violation> violations) {
        if (read.stalenessBoundMillis() <= 0 || writes == null) {
            return;
        }
        long cutoff = read.invokedNanos()
                - Duration.ofMillis(read.stalenessBoundMillis()).plus(sampleInterval).toNanos();
        Operation missed = writes.highestCompletedBefore(cutoff);
        if (missed != null && read.version() < missed.version()) {
            violations.add(new Violation(Rule.STALENESS_BOUND, "read of k=" + read.key() + " under a bound of "
                    + read.stalenessBoundMillis() + " ms saw " + read.version() + ", older than version "
                    + missed.version() + " acknowledged " + String.format("%.1f",
                    (read.invokedNanos() - missed.completedNanos()) / 1e6) + " ms before the read began",
                    List.of(read, missed)));
        }
    }

    private static void checkKnownValue(Operation read, Map<Long, Operation> writes, List<Violation> violations) {
        if (read.version() == Operation.ABSENT) {
            return;
        }
        Operation write = writes == null ? null : writes.get(read.version());
        if (write == null || write.invokedNanos() > read.completedNanos()) {
            violations.add(new Violation(Rule.UNKNOWN_VALUE, "read of k=" + read.key() + " saw version "
                    + read.version() + (write == null ? ", which no write of that key carried"
                    : ", written only after the read completed"), write == null ? List.of(read)
                    : List.of(read, write)));
        }
    }

    /** Per key, the committed writes sorted by completion, with the running highest version. */
    private static Map<Integer, CommittedWrites> committedWrites(List<Operation> operations) {
        Map<Integer, List<Operation>> byKey = new HashMap<>();
        for (Operation operation : operations) {
            if (operation.kind() == Kind.WRITE && operation.ok()) {
                byKey.computeIfAbsent(operation.key(), k -> new ArrayList<>()).add(operation);
            }
        }
        Map<Integer, CommittedWrites> out = new HashMap<>();
        byKey.forEach((key, list) -> out.put(key, new CommittedWrites(list)));
        return out;
    }

    private static Map<Integer, Map<Long, Operation>> attemptedWrites(List<Operation> operations) {
        Map<Integer, Map<Long, Operation>> out = new HashMap<>();
        for (Operation operation : operations) {
            if (operation.kind() == Kind.WRITE && operation.outcome() != Operation.Outcome.FAILED) {
                out.computeIfAbsent(operation.key(), k -> new HashMap<>()).put(operation.version(), operation);
            }
        }
        return out;
    }

    /** One key's committed writes by completion time, and for each prefix the write of highest version. */
    private static final class CommittedWrites {
        private final long[] completed;
        private final Operation[] highestSoFar;

        CommittedWrites(List<Operation> writes) {
            List<Operation> sorted = new ArrayList<>(writes);
            sorted.sort(Comparator.comparingLong(Operation::completedNanos));
            completed = new long[sorted.size()];
            highestSoFar = new Operation[sorted.size()];
            Operation best = null;
            for (int i = 0; i < sorted.size(); i++) {
                Operation write = sorted.get(i);
                if (best == null || write.version() > best.version()) {
                    best = write;
                }
                completed[i] = write.completedNanos();
                highestSoFar[i] = best;
            }
        }

        Operation highestCompletedBefore(long nanos) {
            // The first index whose completion is at or after nanos; everything before it completed strictly before.
            int low = 0;
            int high = completed.length;
            while (low < high) {
                int middle = (low + high) >>> 1;
                if (completed[middle] < nanos) {
                    low = middle + 1;
                } else {
                    high = middle;
                }
            }
            return low > 0 ? highestSoFar[low - 1] : null;
        }
    }

    /**
     * No write on a replica, from the servers' binary logs (MariaDB {@code @@gtid_binlog_state}, which keeps the
     * last GTID of every (domain, server id) pair): every replica's entry must be in the primary's state with a
     * sequence number at least as high. Run it once replication has caught up.
     *
     * @param replicaStates each replica's name and state
     */
    public static List<Violation> checkReplicaBinlogs(String primaryState, Map<String, String> replicaStates) {
        Map<String, Long> primary = binlogState(primaryState);
        List<Violation> violations = new ArrayList<>();
        replicaStates.forEach((name, state) -> {
            binlogState(state).forEach((domainServer, sequence) -> {
                Long held = primary.get(domainServer);
                if (held == null || held < sequence) {
                    violations.add(new Violation(Rule.WRITE_ON_REPLICA, name + " has binlogged " + domainServer
                            + "-" + sequence + ", which the primary (" + primaryState + ") does not have", List.of()));
                }
            });
        });
        return violations;
    }

    /** {@link #checkReplicaBinlogs(String, Map)} with each server's {@code @@GLOBAL.gtid_binlog_state} read now. */
    public static List<Violation> checkReplicaBinlogs(Topology topology) throws SQLException {
        Map<String, String> replicaStates = new LinkedHashMap<>();
        for (DatabaseServer replica : topology.replicas()) {
            replicaStates.put(replica.name(), binlogState(topology, replica));
        }
        return checkReplicaBinlogs(binlogState(topology, topology.primary()), replicaStates);
    }

    /**
     * The replicas whose answer to {@code checksumQuery} (one row, any columns) differs from the primary's, each
     * with both answers: run once replication has caught up, so that a write that went around replication shows.
     */
    public static List<String> dataDifferences(Topology topology, String checksumQuery) throws SQLException {
        String primary = checksum(topology, topology.primary(), checksumQuery);
        List<String> differences = new ArrayList<>();
        for (DatabaseServer replica : topology.replicas()) {
            String mine = checksum(topology, replica, checksumQuery);
            if (!mine.equals(primary)) {
                differences.add(replica.name() + " has " + mine + ", the primary " + primary);
            }
        }
        return differences;
    }

    private static String checksum(Topology topology, DatabaseServer server, String query) throws SQLException {
        try (Connection connection = topology.connectAsApp(server);
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(query)) {
            rows.next();
            StringBuilder out = new StringBuilder();
            for (int i = 1; i <= rows.getMetaData().getColumnCount(); i++) {
                out.append(i == 1 ? "" : "/").append(rows.getString(i));
            }
            return out.toString();
        }
    }

    private static String binlogState(Topology topology, DatabaseServer server) throws SQLException {
        try (Connection connection = topology.connectAsAdmin(server);
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT @@GLOBAL.gtid_binlog_state")) {
            rows.next();
            return rows.getString(1);
        }
    }

    /** {@code d-s-n,...} to "d-s" → n. */
    static Map<String, Long> binlogState(String state) {
        Map<String, Long> out = new HashMap<>();
        if (state == null || state.isBlank()) {
            return out;
        }
        for (String gtid : state.split(",")) {
            String text = gtid.trim();
            int last = text.lastIndexOf('-');
            if (last <= 0 || text.indexOf('-') == last) {
                throw new IllegalArgumentException("not a MariaDB GTID: '" + text + "' in '" + state + "'");
            }
            out.merge(text.substring(0, last), Long.parseLong(text.substring(last + 1)), Math::max);
        }
        return out;
    }
}
