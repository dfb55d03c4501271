package io.gantry.cdc;

import java.io.IOException;

/**
 * A consumer of the change stream: told of every transaction the stream applies, and of every change of the stream's
 * state. The change sink ({@link JsonlSink}) is one; the query caches are others. Register with
 * {@link CdcStream#addListener(ChangeListener)} before the stream starts.
 *
 * <h2>What the stream promises</h2>
 * <ul>
 *   <li><b>Every transaction once, in order.</b> {@link #onTransaction} comes once for each transaction the stream
 *       applies, in the order the transactions committed on the stream's server, and never twice for one GTID, across
 *       reconnects and failover too. Transactions that touched none of the selected tables ({@code --cdc-tables})
 *       come as well, without changes, so a listener sees the position advance. The one gap is a snapshot: it is
 *       announced by {@link CdcStream.State#SNAPSHOTTING}, after which the position jumps to the snapshot's and the
 *       transactions in between are never delivered.
 *   <li><b>One call at a time.</b> No two calls to listeners overlap, and listeners are called in the order they
 *       were added. The calls come from the stream's threads, {@code gantry-cdc} (transactions, most state changes,
 *       and a checkpoint when a session ends) and {@code gantry-cdc-flush} (a checkpoint every 100 ms:
 *       {@link #makeDurable()}, then {@link #positionSaved()}), and from the thread that stops or closes the stream.
 *       A listener needs no lock for state that only these calls touch; state it shares with other threads (a
 *       cache's lookups) it guards itself.
 *   <li><b>Durable before saved.</b> The applied position is saved in the Authority only after every listener's
 *       {@link #makeDurable()} has returned; {@link #positionSaved()} follows the save.
 * </ul>
 *
 * <h2>What a listener may do</h2>
 * <ul>
 *   <li><b>Return quickly.</b> The stream holds its applied position during every call: a slow listener delays the
 *       others, the saving of the position and the reading of the binlog. Update memory or buffer; never wait on
 *       the network or another thread. The sink only buffers in {@link #onTransaction} and writes and fsyncs in
 *       {@link #makeDurable()}.
 *   <li><b>Not call back into the stream's commands</b> ({@code stopReplication}, {@code startReplication},
 *       {@code changeServers}, {@code close}) from a call; reading {@code status()} is fine.
 *   <li><b>Throw only for its own failure.</b> What happens then depends on how it was added. The change sink is
 *       <em>required</em>: its exception stops the stream for good (nothing more is applied or saved, and a restart
 *       resumes from the saved position), since a line it lost could never be written later. Any other listener is
 *       isolated: its exception is logged, the listener goes on receiving later calls, and the stream and the other
 *       listeners carry on as if nothing happened. A listener that cannot stay right after missing a transaction
 *       (a cache that may have missed an eviction) must put itself right, for example drop its entries, rather
 *       than count on the stream to stop.
 * </ul>
 */
public interface ChangeListener {

    /** A transaction the stream applied; its position already includes it. */
    void onTransaction(AppliedTransaction transaction);

    /** The stream's state or server changed; not called again for the same state and server. */
    default void onStateChange(StateChange change) {
    }

    /**
     * Makes everything received so far durable; when this returns, the stream may save a position that includes it.
     * A listener that keeps nothing on disk does nothing.
     */
    default void makeDurable() throws IOException {
    }

    /** The position covering everything received so far was saved; the sink may rotate its file now. */
    default void positionSaved() throws IOException {
    }
}
