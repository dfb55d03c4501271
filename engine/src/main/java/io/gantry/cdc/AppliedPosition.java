package io.gantry.cdc;

import io.gantry.gtid.Flavour;
import io.gantry.gtid.Gtid;
import io.gantry.gtid.GtidSet;
import java.io.IOException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The change stream's applied position, the GTID set of every transaction handed to the listeners, and the order in
 * which it becomes durable: a transaction goes to every listener before the position includes it, and a checkpoint
 * makes the listeners durable (the sink writes and fsyncs) before the position is saved. The saved position can
 * therefore be behind what the sink holds, never ahead of it, and at start the position is the saved one plus the
 * transactions the sink's recovery found.
 *
 * <p>Thread safe: its monitor serializes applying (the stream thread), checkpoints (the flush thread) and state
 * changes, and every listener call is made under it, which is how calls to listeners never overlap.
 */
final class AppliedPosition {

    /** Where the position is saved: the stream's row in the Authority. */
    interface Store {
        void save(String gtidSet, String server);
    }

    /** Work that must happen inside a checkpoint, between saving the old position and taking the new one. */
    interface Commit {
        void run() throws IOException;
    }

    /** Row changes and transactions applied since the stream started. */
    record Counts(long rows, long transactions) {
    }

    private final Store store;
    private final ChangeListeners listeners;
    private final String savedText;
    private final List<String> sinkGtids;

    private GtidSet position;
    private String server = "";
    private boolean dirty;
    private long rows;
    private long transactions;

    /**
     * @param saved     the saved position's text, if one was saved
     * @param sinkGtids the GTIDs of the transactions the sink's recovery found, which may be ahead of {@code saved}
     */
    AppliedPosition(Store store, ChangeListeners listeners, Optional<String> saved, List<String> sinkGtids) {
        this.store = Objects.requireNonNull(store, "store");
        this.listeners = Objects.requireNonNull(listeners, "listeners");
        this.savedText = saved.orElse(null);
        this.sinkGtids = List.copyOf(sinkGtids);
    }

    /** Whether anything is known to resume from: a saved position or transactions in the sink. */
    boolean known() {
        return savedText != null || !sinkGtids.isEmpty();
    }

    /** The position as text; before the first connection, the saved text (empty when none was saved). */
    synchronized String text() {
        return position != null ? position.toString() : savedText == null ? "" : savedText;
    }

    /** The position, once the first server's flavour has fixed it. */
    synchronized Optional<GtidSet> current() {
        return Optional.ofNullable(position);
    }

    synchronized Counts counts() {
        return new Counts(rows, transactions);
    }

    /**
     * The position on a server of {@code flavour}, worked out at the first connection from the saved text and the
     * sink's GTIDs (and saved again when the sink was ahead). Empty when there is neither, or when a snapshot is
     * pending: the snapshot then sets it.
     *
     * @throws IllegalStateException when the position is of the other flavour
     * @throws IllegalArgumentException when the saved text or a GTID of the sink is not of this flavour's form
     */
    synchronized Optional<GtidSet> recover(Flavour flavour, boolean snapshotPending) {
        if (position != null) {
            if (position.flavour() != flavour) {
                throw new IllegalStateException("the change stream's position " + position + " is "
                        + position.flavour().displayName() + ", but this server is " + flavour.displayName());
            }
            return Optional.of(position);
        }
        if (snapshotPending || !known()) {
            return Optional.empty();
        }
        GtidSet recovered = savedText == null ? GtidSet.empty(flavour) : GtidSet.parse(savedText, flavour);
        for (String gtids : sinkGtids) {
            recovered = recovered.union(GtidSet.parse(gtids, flavour));
        }
        position = recovered;
        dirty = !sinkGtids.isEmpty(); // the sink may be ahead of the saved position: save the union
        return Optional.of(position);
    }

    /** Starts the position at a server's current one, when nothing was saved and no snapshot set it. */
    synchronized void startAt(GtidSet start, String from) {
        if (position != null) {
            throw new IllegalStateException("the position is already " + position);
        }
        position = start;
        server = from;
        dirty = true;
    }

    /**
     * Applies a committed transaction: hands it to every listener, then adds it to the position. A transaction
     * already in the position is never applied again.
     *
     * @throws ChangeListeners.RequiredListenerFailed when the sink failed; the position is left as it was
     */
    synchronized void apply(Gtid gtid, ChangeTransaction transaction) {
        if (position.containsTransaction(gtid)) {
            return;
        }
        AppliedTransaction applied = new AppliedTransaction(gtid, transaction, position.with(gtid));
        listeners.transaction(applied);
        position = applied.position();
        server = transaction.server();
        rows += transaction.changes().size();
        transactions++;
        dirty = true;
    }

    /**
     * Saves the position if it moved: the listeners make what they were given durable first, and hear of the save
     * after it.
     *
     * @throws ChangeListeners.RequiredListenerFailed when the sink failed, before anything was saved
     * @throws RuntimeException                       when the position could not be saved
     */
    synchronized void checkpoint() {
        if (!dirty) {
            return;
        }
        listeners.makeDurable();
        store.save(position.toString(), server);
        dirty = false;
        listeners.positionSaved();
    }

    /**
     * Moves the position to a snapshot's: checkpoints what was applied before, runs {@code commit} (which makes the
     * snapshot's rows part of the sink), then saves the snapshot's position.
     */
    synchronized void resetTo(GtidSet snapshot, String from, Commit commit) throws IOException {
        checkpoint();
        commit.run();
        position = snapshot;
        server = from;
        store.save(position.toString(), server);
        dirty = false;
    }

    /** Tells the listeners of a change of the stream's state. */
    synchronized void announce(StateChange change) {
        listeners.stateChanged(change);
    }
}
