package io.gantry.proxy.execution;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.session.ClientWriter;
import io.gantry.proxy.session.ProxyMetrics;
import io.gantry.proxy.session.SessionContext;
import io.gantry.route.RouteTarget;
import io.gantry.topology.Role;
import io.gantry.topology.Upstreams;
import io.gantry.wire.OkPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.PacketFrameEncoder;
import io.gantry.wire.ServerStatus;
import io.gantry.wire.ResponseFraming;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.function.Supplier;

/**
 * Sends a client's command to a backend and streams the response back packet by packet, never decoding rows. The
 * packets of one read burst leave in one buffer and one write; while the client cannot keep up, the backend is not
 * read (back-pressure), and while a server waits for LOCAL INFILE contents, the client's packets go straight to it.
 */
public final class ResponseForwarder {

    /** Looks at (and may rewrite) each response packet before it goes to the client; returns what to send. */
    public interface ResponseRewriter {
        Packet rewrite(Packet response, ResponseFraming framing);

        ResponseRewriter NONE = (response, framing) -> response;
    }

    /**
     * What a command does instead of its answer when the server refuses it as read-only before anything else
     * ({@link ReadOnlyRefusal}: it certainly did not run): the command is then the fallback's to run again.
     */
    @FunctionalInterface
    public interface ReadOnlyFallback {
        void refusedAsReadOnly();
    }

    /**
     * What a statement of a transaction Gantry can replay does instead of failing when its connection is lost before
     * any of its answer reached the client: the transaction is replayed on the new primary, and the statement runs
     * there after it.
     */
    @FunctionalInterface
    public interface LostFallback {
        void lostBeforeAnswer(BackendConnection connection, BackendFailure failure);
    }

    /** Response packets up to this size are copied into the burst's buffer; larger ones are written as slices. */
    private static final int BATCH_COPY_LIMIT = 8 * 1024;

    private final SessionContext session;
    private final SessionBackends backends;
    private final ClientWriter client;
    private final ByteBufAllocator alloc;
    /** Which server is the primary: only its read-only refusal sends a write to wait for the next one. */
    private final Upstreams upstreams;
    /** The proxy's metrics as they are now (they start after the listener, so they are read at each answer). */
    private final Supplier<ProxyMetrics> metrics;
    /** The listener of the last completed command, for the next one. */
    private Forwarding idle;
    private final Runnable commandDone;
    /** Response packets of the current read burst, framed, not yet written. */
    private ByteBuf batch;
    private BackendConnection throttledBackend;
    private BackendConnection awaitingClientData;

    /** @param alloc the client channel's allocator, for the buffer a read burst is framed into */
    public ResponseForwarder(SessionContext session, SessionBackends backends, ClientWriter client,
                             ByteBufAllocator alloc, Upstreams upstreams, Supplier<ProxyMetrics> metrics) {
        this.session = session;
        this.backends = backends;
        this.client = client;
        this.alloc = alloc;
        this.upstreams = upstreams;
        this.metrics = metrics;
        this.commandDone = session::commandDone;
    }

    /**
     * Sends the client's command and streams the response back; the command ends once {@code after} is done.
     *
     * @param after what to do once the response is complete (record a setting, note held state)
     */
    public void forward(Packet command, BackendConnection connection, AfterResponse after,
                 ResponseRewriter rewriter) {
        forward(command, connection, after, rewriter, null);
    }

    /**
     * As {@link #forward(Packet, BackendConnection, AfterResponse, ResponseRewriter)}, but when the server refuses
     * the command as read-only before anything else ({@link ReadOnlyRefusal}: it certainly did not run), the client
     * is not told: {@code onReadOnly} runs instead, and the command is its to run again or to answer.
     *
     * @param onReadOnly null to forward every answer
     */
    public void forward(Packet command, BackendConnection connection, AfterResponse after,
                 ResponseRewriter rewriter, ReadOnlyFallback onReadOnly) {
        forward(command, connection, after, rewriter, onReadOnly, null);
    }

    /**
     * As {@link #forward(Packet, BackendConnection, AfterResponse, ResponseRewriter, ReadOnlyFallback)}, for a
     * statement the session's transaction log follows ({@code onLost} not null): the log gets the checksum of its
     * answer and whether a transaction is still open after it, and if the connection is lost before any of the answer
     * reached the client, {@code onLost} runs instead of the session's end.
     */
    public void forward(Packet command, BackendConnection connection, AfterResponse after,
                        ResponseRewriter rewriter, ReadOnlyFallback onReadOnly, LostFallback onLost) {
        Forwarding forwarding = idle;
        if (forwarding == null) {
            forwarding = new Forwarding();
        }
        idle = null;
        forwarding.begin(connection, after, rewriter, onReadOnly, onLost);
        connection.execute(command, forwarding);
    }

    /**
     * The listener of one command's response. A session runs one command at a time, so the listener of a completed
     * command serves the next one ({@link #idle}) instead of a new object per command; one whose command failed is not
     * reused, and a command that starts while another is still answered gets its own.
     */
    private final class Forwarding implements BackendConnection.ResponseListener {
        private BackendConnection connection;
        private AfterResponse after;
        private ResponseRewriter rewriter;
        private long sentAt;
        /** Runs instead of the answer when the server refuses the command as read-only first; null: forwarded. */
        private ReadOnlyFallback onReadOnly;
        private boolean answered;
        private boolean refusedAsReadOnly;
        /** Runs instead of the session's end when the connection is lost before the answer; null: not followed. */
        private LostFallback onLost;
        /** The checksum of the answer of a statement the transaction log follows; made on first use. */
        private AnswerChecksum checksum;

        void begin(BackendConnection connection, AfterResponse after, ResponseRewriter rewriter,
                   ReadOnlyFallback onReadOnly, LostFallback onLost) {
            this.connection = connection;
            this.after = after;
            this.rewriter = rewriter;
            this.onReadOnly = onReadOnly;
            this.onLost = onLost;
            this.sentAt = System.nanoTime();
            answered = false;
            refusedAsReadOnly = false;
            if (onLost != null) {
                if (checksum == null) {
                    checksum = new AnswerChecksum();
                }
                checksum.reset();
            }
        }

        @Override
        public void onPacket(Packet packet, ResponseFraming framing) {
            boolean firstPacket = !answered;
            answered = true;
            // A statement that may wait for the primary (onReadOnly) is a write routed to the primary.
            if (framing.lastPacketKind() == ResponseFraming.PacketKind.ERR
                    && ReadOnlyRefusal.fromPrimary(upstreams, connection.server(),
                    packet.payload(), session.id(), onReadOnly != null) && firstPacket && onReadOnly != null) {
                refusedAsReadOnly = true;
                packet.release();
                return;
            }
            if (firstPacket) {
                session.answerStarted();
            }
            if (onLost != null) {
                checksum.add(packet, framing);
            }
            Packet response = packet;
            if (framing.lastPacketKind() == ResponseFraming.PacketKind.OK) {
                long insertId = OkPacket.lastInsertIdOf(packet.payload());
                if (insertId != 0) {
                    backends.insertIdGenerated(connection, insertId);
                }
                response = session.tracking().onOk(packet, framing.serverStatus(), connection.capabilities(),
                        session.client().capabilities(), alloc);
            }
            writeToClient(rewriter.rewrite(response, framing));
            if (framing.awaitingClient()) {
                // LOCAL INFILE: the client now sends the file, ending with an empty packet.
                if (onLost != null) {
                    session.transactionLog().notReplayable("a LOAD DATA LOCAL INFILE ran in it");
                }
                awaitingClientData = connection;
                flushBatch();
            } else if (!client.isWritable()) {
                throttledBackend = connection;
                connection.setAutoRead(false);
                flushBatch();
            }
        }

        @Override
        public void onBatchEnd() {
            flushBatch();
        }

        @Override
        public void onComplete(ResponseFraming framing) {
            BackendConnection done = connection;
            AfterResponse then = after;
            flushBatch();
            metrics.get().answered(done.server().role() == Role.PRIMARY ? RouteTarget.PRIMARY
                    : RouteTarget.REPLICA, System.nanoTime() - sentAt);
            awaitingClientData = null;
            noteStatus(done, framing.serverStatus());
            backends.scheduleRetentionClose(done);
            ReadOnlyFallback readOnly = refusedAsReadOnly ? onReadOnly : null;
            if (onLost != null && readOnly != null) {
                session.transactionLog().unanswered(); // it did not run: it runs again after the replay
            } else if (onLost != null) {
                int status = framing.serverStatus();
                session.transactionLog().answered(checksum.value(), status == ResponseFraming.NO_STATUS
                        || ServerStatus.has(status, ServerStatus.SERVER_STATUS_IN_TRANS));
            }
            // Free for the next command before this one's last step, which may start it.
            connection = null;
            after = null;
            rewriter = null;
            onReadOnly = null;
            onLost = null;
            idle = this;
            if (readOnly != null) {
                readOnly.refusedAsReadOnly();
                return;
            }
            then.run(done, framing, commandDone);
        }

        @Override
        public void onFailure(BackendFailure failure) {
            if (onLost != null && !answered) {
                session.transactionLog().unanswered();
                onLost.lostBeforeAnswer(connection, failure);
                return;
            }
            if (onLost != null) {
                session.transactionLog().notReplayable("the connection was lost while its answer reached the client");
            }
            session.backendFailed(connection.server(), failure);
        }
    }

    /** Whether the client's packets now are LOCAL INFILE contents for a server rather than commands. */
    public boolean awaitsClientData() {
        return awaitingClientData != null;
    }

    /**
     * LOCAL INFILE contents on their way to the server. When the server falls behind, reading from the client
     * pauses until it catches up, so a large upload does not pile up in Gantry's memory.
     */
    public void forwardClientData(Packet packet) {
        BackendConnection backend = awaitingClientData;
        boolean last = packet.payload().readableBytes() == 0;
        backend.forwardFromClient(packet);
        if (last) {
            awaitingClientData = null;
        } else if (!backend.isWritable()) {
            client.readClient(false);
            backend.whenWritable(() -> client.readClient(true));
        }
    }

    /** The client can take more: the backend that was paused for it is read again. */
    public void clientWritable() {
        if (throttledBackend != null) {
            throttledBackend.setAutoRead(true);
            throttledBackend = null;
        }
    }

    /** Drops what was not written yet; the session is closing. */
    public void discard() {
        if (batch != null) {
            batch.release();
            batch = null;
        }
    }

    /**
     * Frames a response packet into the buffer of the current read burst: the packets of a burst (a whole small
     * result, typically) leave in one buffer and one write. Large packets go as they are, without a copy.
     */
    private void writeToClient(Packet response) {
        int length = response.payload().readableBytes();
        if (length > BATCH_COPY_LIMIT) {
            flushBatch();
            client.write(response);
            return;
        }
        if (batch == null) {
            batch = alloc.ioBuffer(Math.max(256, length + Packet.HEADER_SIZE));
        }
        PacketFrameEncoder.writeFramed(response, batch);
        response.release();
    }

    private void flushBatch() {
        if (batch != null) {
            ByteBuf out = batch;
            batch = null;
            client.writeFramed(out);
        }
        client.flush();
    }

    /** The server's status after a response: the session's transaction state and mode flags follow it. */
    private void noteStatus(BackendConnection connection, int status) {
        if (status == ResponseFraming.NO_STATUS) {
            return;
        }
        session.statusFrom(connection.server(), status);
    }
}
