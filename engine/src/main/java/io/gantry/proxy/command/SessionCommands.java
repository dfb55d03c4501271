package io.gantry.proxy.command;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.execution.AfterResponse;
import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.proxy.execution.SessionBackends;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.Packet;
import io.netty.buffer.ByteBufUtil;
import java.util.Optional;

/**
 * The commands about the session rather than a statement: COM_PING, COM_RESET_CONNECTION, and the commands that
 * belong to the session or are best answered by the primary (COM_INIT_DB, COM_SET_OPTION, COM_FIELD_LIST,
 * COM_STATISTICS).
 */
public final class SessionCommands {

    private final SessionContext session;
    private final SessionBackends backends;
    private final ResponseForwarder forwarder;
    /** Where the primary is: the commands that are not a statement run there. */
    private final Upstreams upstreams;

    public SessionCommands(SessionContext session, SessionBackends backends, ResponseForwarder forwarder,
                           Upstreams upstreams) {
        this.session = session;
        this.backends = backends;
        this.forwarder = forwarder;
        this.upstreams = upstreams;
    }

    /**
     * COM_PING is answered here, unless a backend connection holds state that replay cannot rebuild: then the
     * ping goes to that connection, so its server's idle clock restarts as it would for a direct client.
     */
    public Reply ping(Packet packet) {
        BackendConnection holder = backends.holding(false);
        if (holder == null) {
            packet.release();
            return Reply.OK;
        }
        backends.run(packet, holder.server(), connection -> forwarder.forward(packet, connection,
                AfterResponse.NOTHING_MORE, ResponseForwarder.ResponseRewriter.NONE));
        return Reply.LATER;
    }

    /**
     * Runs a command on the primary.
     *
     * @param sessionState whether the command changes the session (COM_INIT_DB, COM_SET_OPTION): then it is
     *                     recorded for replay on the session's other backends
     */
    public Reply onPrimary(Packet packet, boolean sessionState) {
        Optional<UpstreamServer> primary = upstreams.primary();
        if (primary.isEmpty()) {
            packet.release();
            return Reply.error(SessionErrors.noPrimary("command", upstreams.noPrimaryReason()));
        }
        AfterResponse after = sessionState
                ? backends.afterStatement(null, null, ByteBufUtil.getBytes(packet.payload()))
                : AfterResponse.NOTHING_MORE;
        backends.run(packet, primary.get(), connection -> forwarder.forward(packet, connection, after,
                ResponseForwarder.ResponseRewriter.NONE));
        return Reply.LATER;
    }

    /** Resets every backend of the session: the primary's answer goes to the client, the rest are closed. */
    public Reply resetConnection(Packet packet) {
        Optional<UpstreamServer> primary = upstreams.primary();
        if (primary.isEmpty()) {
            backends.closeAll();
        } else {
            backends.closeAllBut(session.serverId(primary.get()));
        }
        session.prepared().clear();
        session.reset();
        if (primary.isEmpty()) {
            return onPrimary(packet, false);
        }
        // The reset drops transactions, user variables, temporary tables and locks on the server.
        backends.run(packet, primary.get(), connection -> forwarder.forward(packet, connection,
                (c, framing, done) -> {
                    if (framing.failed()) {
                        done.run();
                        return;
                    }
                    backends.serverReset(c);
                    done.run();
                }, ResponseForwarder.ResponseRewriter.NONE));
        return Reply.LATER;
    }
}
