package io.gantry.consistency;

import static io.gantry.consistency.Operation.ABSENT;
import static io.gantry.consistency.Operation.read;
import static io.gantry.consistency.Operation.write;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.consistency.Violation.Rule;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HistoryCheckerTest {

    private static final long MS = 1_000_000;
    private final HistoryChecker checker = new HistoryChecker(Duration.ofMillis(250));

    private static Operation failedWrite(String session, int key, long version, long from, long to, int code) {
        return write(session, key, version, from, to).withOutcome(Operation.Outcome.FAILED, code, "refused");
    }

    @Test
    void aCleanHistoryHasNoViolations() {
        HistoryChecker.Report report = checker.check(List.of(
                write("a", 1, 1, 0, 10 * MS),
                read("a", 1, 1, 11 * MS, 12 * MS),
                read("b", 1, ABSENT, 5 * MS, 6 * MS), // concurrent with the write: absent is fine
                write("b", 1, 2, 20 * MS, 30 * MS),
                read("a", 1, 2, 31 * MS, 32 * MS),
                read("b", 1, 2, 31 * MS, 33 * MS),
                read("c", 1, 1, 31 * MS, 34 * MS))); // another session, no bound: may lag
        assertThat(report.violations()).isEmpty();
        assertThat(report.operations()).isEqualTo(7);
        assertThat(report.reads()).isEqualTo(5);
        assertThat(report.writes()).isEqualTo(2);
    }

    @Test
    void aReadThatMissesItsSessionsCompletedWriteBreaksReadYourWrites() {
        HistoryChecker.Report report = checker.check(List.of(
                write("a", 7, 3, 0, 10 * MS),
                read("a", 7, ABSENT, 11 * MS, 12 * MS)));
        assertThat(report.countByRule()).containsExactlyEntriesOf(Map.of(Rule.READ_YOUR_WRITES, 1));
        assertThat(report.describe(5)).contains("k=7", "saw 0", "write of 3");
    }

    @Test
    void aReadConcurrentWithItsOwnWriteOrOfAnotherKeyIsNotBound() {
        HistoryChecker.Report report = checker.check(List.of(
                write("a", 7, 3, 0, 10 * MS),
                read("a", 7, ABSENT, 9 * MS, 12 * MS), // invoked before the write completed
                read("a", 8, ABSENT, 11 * MS, 12 * MS)));
        assertThat(report.violations()).isEmpty();
    }

    @Test
    void aFailedWriteBindsNoRead() {
        HistoryChecker.Report report = checker.check(List.of(
                failedWrite("a", 7, 3, 0, 10 * MS, 1205),
                read("a", 7, ABSENT, 11 * MS, 12 * MS)));
        assertThat(report.violations()).isEmpty();
    }

    @Test
    void aReadOlderThanTheSessionsEarlierReadBreaksMonotonicReads() {
        HistoryChecker.Report report = checker.check(List.of(
                write("w", 1, 5, 0, MS),
                write("w", 1, 6, 2 * MS, 3 * MS),
                read("r", 1, 6, 4 * MS, 5 * MS),
                read("r", 1, 5, 6 * MS, 7 * MS)));
        assertThat(report.countByRule()).containsExactlyEntriesOf(Map.of(Rule.MONOTONIC_READS, 1));
    }

    @Test
    void monotonicReadsAreKeptPerSessionAndPerKey() {
        HistoryChecker.Report report = checker.check(List.of(
                write("w", 1, 5, 0, MS),
                write("w", 1, 6, 2 * MS, 3 * MS),
                write("w", 2, 7, 2 * MS, 3 * MS),
                read("r", 1, 6, 4 * MS, 5 * MS),
                read("q", 1, 5, 6 * MS, 7 * MS), // another session
                read("r", 2, ABSENT, 6 * MS, 7 * MS), // another key
                read("r", 1, 6, 4 * MS + 1, 5 * MS + 1))); // overlapping reads do not bind each other
        assertThat(report.violations()).isEmpty();
    }

    @Test
    void aBoundedReadThatMissesAnOldEnoughWriteBreaksTheStalenessBound() {
        long bound = 1000;
        HistoryChecker.Report report = checker.check(List.of(
                write("w", 1, 5, 0, 10 * MS),
                write("w", 1, 6, 20 * MS, 30 * MS),
                // invoked 1250 ms + 1 ns after version 5 was acknowledged: must see at least 5
                read("r", 1, ABSENT, 10 * MS + 1250 * MS + 1, 1300 * MS).withBound(bound),
                // invoked exactly at the limit for version 6: may still miss it, but not 5
                read("r2", 1, 5, 30 * MS + 1250 * MS, 1300 * MS).withBound(bound)));
        assertThat(report.countByRule()).containsExactlyEntriesOf(Map.of(Rule.STALENESS_BOUND, 1));
        assertThat(report.violations().get(0).operations().get(0).session()).isEqualTo("r");
    }

    @Test
    void anUnboundedReadMayBeAsStaleAsItLikes() {
        HistoryChecker.Report report = checker.check(List.of(
                write("w", 1, 5, 0, 10 * MS),
                read("r", 1, ABSENT, 60_000 * MS, 60_001 * MS)));
        assertThat(report.violations()).isEmpty();
    }

    @Test
    void aReadOfAVersionNeverWrittenOrWrittenLaterIsAnUnknownValue() {
        HistoryChecker.Report report = checker.check(List.of(
                read("r", 1, 9, 0, MS),
                read("r", 2, 4, 0, MS),
                write("w", 2, 4, 5 * MS, 6 * MS),
                failedWrite("w", 3, 10, 0, MS, 1205),
                read("q", 3, 10, 2 * MS, 3 * MS)));
        assertThat(report.countByRule()).containsExactlyEntriesOf(Map.of(Rule.UNKNOWN_VALUE, 3));
    }

    @Test
    void aWriteWithAnUnknownOutcomeMayBeSeenButBindsNothing() {
        Operation unknown = write("a", 1, 4, 0, MS).withOutcome(Operation.Outcome.UNKNOWN, 0, "connection reset");
        HistoryChecker.Report report = checker.check(List.of(
                unknown,
                read("a#2", 1, ABSENT, 2 * MS, 3 * MS),
                read("b", 1, 4, 2 * MS, 3 * MS)));
        assertThat(report.violations()).isEmpty();
    }

    @Test
    void aWriteRefusedAsReadOnlyIsAWriteOnAReplicaUnlessExpected() {
        History history = new History();
        long now = System.nanoTime();
        history.record(failedWrite("a", 1, 1, now, now + MS, HistoryChecker.ER_OPTION_PREVENTS_STATEMENT));
        history.record(failedWrite("a", 1, 2, now + 10 * MS, now + 11 * MS,
                HistoryChecker.ER_OPTION_PREVENTS_STATEMENT));
        history.expectReadOnlyRefusals(now + 5 * MS, now + 20 * MS, "promotion");
        HistoryChecker.Report report = checker.check(history);
        assertThat(report.countByRule()).containsExactlyEntriesOf(Map.of(Rule.WRITE_ON_REPLICA, 1));
        assertThat(report.violations().get(0).operations().get(0).version()).isEqualTo(1);
    }

    @Test
    void aReplicaBinlogEntryThePrimaryLacksIsAWriteOnAReplica() {
        assertThat(HistoryChecker.checkReplicaBinlogs("0-1-10,0-2-3",
                Map.of("replica1", "0-1-10,0-2-3", "replica2", "0-1-9"))).isEmpty();
        List<Violation> errant = HistoryChecker.checkReplicaBinlogs("0-1-10",
                Map.of("replica1", "0-1-10,0-3-11"));
        assertThat(errant).hasSize(1);
        assertThat(errant.get(0).rule()).isEqualTo(Rule.WRITE_ON_REPLICA);
        assertThat(errant.get(0).message()).contains("0-3-11");
        assertThat(HistoryChecker.checkReplicaBinlogs("0-1-10", Map.of("replica1", "0-1-12"))).hasSize(1);
    }
}
