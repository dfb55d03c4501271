package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.gtid.MariaDbGtid;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The listener seam without servers: {@link AppliedPosition} applying transactions through {@link ChangeListeners}
 * to recording listeners, some of which throw.
 */
class ChangeListenersTest {

    private static final Instant AT = Instant.parse("2026-12-01T03:04:05Z");

    private final List<String> calls = new ArrayList<>();
    private final TestClock clock = new TestClock(AT);
    private final ChangeListeners listeners = new ChangeListeners(clock);
    private final AppliedPosition position = new AppliedPosition((gtids, server) -> calls.add("saved " + gtids),
            listeners, Optional.of("0-1-0"), List.of());

    /** A listener that writes each call into {@link #calls} under its name, and throws where it is told to. */
    private final class Recording implements ChangeListener {
        private final String name;
        private final List<AppliedTransaction> received = new ArrayList<>();
        private final List<StateChange> states = new ArrayList<>();
        private String throwOnGtid;
        private boolean throwOnDurable;

        Recording(String name) {
            this.name = name;
        }

        @Override
        public void onTransaction(AppliedTransaction transaction) {
            calls.add(name + " " + transaction.gtid());
            if (transaction.gtid().toString().equals(throwOnGtid)) {
                throw new IllegalStateException(name + " broke on " + throwOnGtid);
            }
            received.add(transaction);
        }

        @Override
        public void onStateChange(StateChange change) {
            calls.add(name + " " + change.state().displayName());
            states.add(change);
            if (throwOnGtid != null) {
                throw new IllegalStateException(name + " broke on a state change");
            }
        }

        @Override
        public void makeDurable() throws IOException {
            calls.add(name + " durable");
            if (throwOnDurable) {
                throw new IOException("No space left on device");
            }
        }

        @Override
        public void positionSaved() {
            calls.add(name + " saw the save");
        }

        List<String> gtids() {
            return received.stream().map(t -> t.gtid().toString()).toList();
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private void apply(long sequence) {
        position.apply(new MariaDbGtid(0, 1, sequence), new ChangeTransaction("0-1-" + sequence, "db1:3306", AT,
                List.of()));
    }

    private void recover() {
        position.recover(Flavour.MARIADB, false);
        position.checkpoint();
        calls.clear();
    }

    @Test
    void everyListenerGetsEveryTransactionOnceInOrderWithItsPosition() {
        Recording first = new Recording("first");
        Recording second = new Recording("second");
        listeners.add(first, false);
        listeners.add(second, false);
        recover();

        apply(1);
        apply(2);
        apply(2);
        apply(1);
        apply(3);

        assertThat(calls).containsExactly("first 0-1-1", "second 0-1-1", "first 0-1-2", "second 0-1-2",
                "first 0-1-3", "second 0-1-3");
        assertThat(first.received).extracting(t -> t.position().toString()).containsExactly("0-1-1", "0-1-2",
                "0-1-3");
        assertThat(second.received).isEqualTo(first.received);
        assertThat(position.text()).isEqualTo("0-1-3");
        assertThat(position.counts()).isEqualTo(new AppliedPosition.Counts(0, 3));
    }

    @Test
    void anIsolatedListenerThatThrowsNeitherStopsTheStreamNorKeepsChangesFromTheOthers() {
        Recording flaky = new Recording("flaky");
        Recording steady = new Recording("steady");
        listeners.add(flaky, false);
        listeners.add(steady, false);
        recover();
        flaky.throwOnGtid = "0-1-2";
        flaky.throwOnDurable = true;

        apply(1);
        apply(2);
        apply(3);
        listeners.stateChanged(new StateChange(CdcStream.State.RETRYING, Optional.of("db1:3306"), "reset", AT));
        position.checkpoint();

        assertThat(steady.gtids()).containsExactly("0-1-1", "0-1-2", "0-1-3");
        assertThat(flaky.gtids()).as("it goes on receiving after its failure").containsExactly("0-1-1", "0-1-3");
        assertThat(steady.states).extracting(StateChange::state).containsExactly(CdcStream.State.RETRYING);
        assertThat(position.text()).isEqualTo("0-1-3");
        assertThat(calls).containsSubsequence("flaky durable", "steady durable", "saved 0-1-3", "flaky saw the save",
                "steady saw the save");
    }

    @Test
    void aRequiredListenerThatThrowsKeepsTheTransactionOutOfThePosition() {
        Recording sink = new Recording("sink");
        Recording cache = new Recording("cache");
        listeners.add(sink, true);
        listeners.add(cache, false);
        recover();
        sink.throwOnGtid = "0-1-2";
        apply(1);

        assertThatThrownBy(() -> apply(2))
                .isInstanceOf(ChangeListeners.RequiredListenerFailed.class)
                .hasMessage("sink failed on transaction 0-1-2: sink broke on 0-1-2");

        assertThat(cache.gtids()).as("not handed on past the sink").containsExactly("0-1-1");
        assertThat(position.text()).isEqualTo("0-1-1");
        assertThat(position.counts().transactions()).isEqualTo(1);
    }

    @Test
    void savesThePositionOnlyAfterEveryListenerIsDurable() {
        Recording sink = new Recording("sink");
        Recording cache = new Recording("cache");
        listeners.add(sink, true);
        listeners.add(cache, false);
        recover();
        apply(1);
        apply(2);
        calls.clear();

        position.checkpoint();
        position.checkpoint();

        assertThat(calls).as("once: nothing moved in between").containsExactly("sink durable", "cache durable",
                "saved 0-1-2", "sink saw the save", "cache saw the save");
    }

    @Test
    void aRequiredListenerThatCannotBeDurableKeepsThePositionUnsaved() {
        Recording sink = new Recording("sink");
        listeners.add(sink, true);
        recover();
        apply(1);
        sink.throwOnDurable = true;

        assertThatThrownBy(position::checkpoint)
                .isInstanceOf(ChangeListeners.RequiredListenerFailed.class)
                .hasMessageContaining("sink failed on making its changes durable: No space left on device");
        assertThat(calls).doesNotContain("saved 0-1-1");
    }

    @Test
    void tellsOfEachStateChangeOnceInOrderEvenWhenAListenerThrows() {
        Recording flaky = new Recording("flaky");
        Recording steady = new Recording("steady");
        listeners.add(flaky, false);
        listeners.add(steady, false);
        flaky.throwOnGtid = "never";

        listeners.stateChanged(new StateChange(CdcStream.State.STREAMING, Optional.of("db1:3306"), "started", AT));
        listeners.stateChanged(new StateChange(CdcStream.State.STREAMING, Optional.of("db1:3306"), "again", AT));
        listeners.stateChanged(new StateChange(CdcStream.State.STREAMING, Optional.of("db2:3306"), "moved", AT));
        listeners.stateChanged(new StateChange(CdcStream.State.STOPPED, Optional.empty(), "STOP", AT));

        assertThat(steady.states).extracting(StateChange::reason).containsExactly("started", "moved", "STOP");
        assertThat(flaky.states).isEqualTo(steady.states);
    }

    @Test
    void recoversThePositionFromTheSavedOneAndTheSinksTransactions() {
        AppliedPosition recovered = new AppliedPosition((gtids, server) -> calls.add("saved " + gtids), listeners,
                Optional.of("0-1-5"), List.of("0-1-6", "0-1-7,1-2-3"));

        assertThat(recovered.text()).as("before the first server").isEqualTo("0-1-5");
        assertThat(recovered.recover(Flavour.MARIADB, false)).contains(GtidSet.parse("0-1-7,1-2-3",
                Flavour.MARIADB));
        recovered.checkpoint();
        assertThat(calls).as("the sink was ahead: the union is saved").containsExactly("saved 0-1-7,1-2-3");
        assertThatThrownBy(() -> recovered.recover(Flavour.MYSQL, false))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("MariaDB");
    }

    @Test
    void leavesThePositionToAPendingSnapshotOrTheServerWhenNothingIsKnown() {
        AppliedPosition fresh = new AppliedPosition((gtids, server) -> calls.add("saved " + gtids), listeners,
                Optional.empty(), List.of());

        assertThat(position.recover(Flavour.MARIADB, true)).as("snapshot pending").isEmpty();
        assertThat(fresh.known()).isFalse();
        assertThat(fresh.recover(Flavour.MARIADB, false)).isEmpty();
        fresh.startAt(GtidSet.parse("0-1-40", Flavour.MARIADB), "db1:3306");
        fresh.checkpoint();
        assertThat(calls).containsExactly("saved 0-1-40");
    }
}
