package io.gantry.proxy;

import static io.gantry.proxy.SessionContext.LOG;

import io.gantry.admin.AdminResult;
import io.gantry.route.StatementKind;
import io.gantry.topology.Role;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * COM_QUERY: the session's {@code gantry_...} settings are answered by {@link GantrySettingsCommand}, Gantry's own
 * admin SQL by the admin handler, a KILL of a Gantry session by {@link KillCommand};
 * everything else is routed and forwarded, with {@code CONNECTION_ID()} read as the Gantry session's id.
 */
final class QueryCommand {

    private final SessionContext session;
    private final SessionBackends backends;
    private final SessionRouting routing;
    private final ResponseForwarder forwarder;
    private final KillCommand kill;
    private final AdminCommand admin;
    private final GantrySettingsCommand settings;

    QueryCommand(SessionContext session, SessionBackends backends, SessionRouting routing,
                 ResponseForwarder forwarder) {
        this.session = session;
        this.backends = backends;
        this.routing = routing;
        this.forwarder = forwarder;
        this.kill = new KillCommand(session, backends);
        this.admin = new AdminCommand(session);
        this.settings = new GantrySettingsCommand(session, routing);
    }

    Reply run(Packet packet) {
        ByteBuf payload = packet.payload();
        // Routing only needs keywords; ISO-8859-1 maps every byte to one char and cannot fail to decode.
        String sql = payload.toString(payload.readerIndex() + 1, payload.readableBytes() - 1,
                StandardCharsets.ISO_8859_1);
        Reply ownSetting = settings.run(sql);
        if (ownSetting != null) {
            packet.release();
            return ownSetting;
        }
        Optional<CompletionStage<AdminResult>> adminReply = session.proxy.adminHandler()
                .handle(sql, session.user, session.sqlMode());
        if (adminReply.isPresent()) {
            packet.release();
            return admin.answer(adminReply.get());
        }
        SessionIdentitySql.KillText killText = SessionIdentitySql.inspectKill(sql, session.sqlMode());
        if (killText instanceof SessionIdentitySql.KillText.Single single) {
            packet.release();
            return kill.run(single.kill());
        }
        if (killText instanceof SessionIdentitySql.KillText.Refused refused) {
            // Never forwarded: the server would take a Gantry session id for one of its thread ids.
            packet.release();
            return Reply.error(refused.error());
        }
        Packet command = packet;
        String withId = SessionIdentitySql.withSessionId(sql, session.id);
        if (!withId.equals(sql)) {
            // CONNECTION_ID() is the Gantry session's id, whichever backend runs the statement.
            command = new Packet(0, session.queryPayload(withId));
            packet.release();
        }
        return runQuery(command, sql, withId, true);
    }

    /**
     * Routes and runs a COM_QUERY.
     *
     * @param sql the client's text; {@code withId} the text as sent (with the session id in place of
     *        {@code CONNECTION_ID()})
     * @param mayGoElsewhere whether a plain read may be routed again when its replica turns out unreachable
     */
    private Reply runQuery(Packet command, String sql, String withId, boolean mayGoElsewhere) {
        SessionRouting.Routed routed = routing.route(withId, true);
        if (routed.refused()) {
            command.release();
            return routed.refusal();
        }
        byte[] stateCommand = routed.statement().kind() == StatementKind.SESSION_STATE
                ? ByteBufUtil.getBytes(command.payload()) : null;
        SessionBackends.AfterResponse after = backends.afterStatement(routed.statement(), withId, stateCommand);
        ResponseForwarder.ResponseRewriter rewriter = withId == sql ? ResponseForwarder.ResponseRewriter.NONE
                : connectionIdColumns(sql, withId);
        // A read that would open a new connection to a replica loses nothing if that replica is gone: obtain()
        // marks it down and the read is routed again, once, instead of ending the session.
        boolean fresh = mayGoElsewhere && routed.statement().kind() == StatementKind.READ
                && routed.server().role() == Role.REPLICA && !backends.isConnectedTo(routed.server());
        Runnable elsewhere = fresh ? () -> {
            LOG.info("session {}: {} cannot be reached; routing the read again", session.id,
                    routed.server().address());
            session.finish(runQuery(command, sql, withId, false));
        } : null;
        backends.run(command, routed.server(), connection -> forwarder.forward(command, connection, after, rewriter),
                elsewhere);
        return Reply.LATER;
    }

    /** Column definitions named and typed as direct for {@code CONNECTION_ID()} (see {@link ConnectionIdColumns}). */
    private ResponseForwarder.ResponseRewriter connectionIdColumns(String original, String rewritten) {
        ConnectionIdColumns columns = ConnectionIdColumns.of(original, rewritten, session.noBackslashEscapes());
        return (response, framing) -> {
            ResponseFraming.PacketKind kind = framing.lastPacketKind();
            ByteBuf payload = columns.rewrite(response.payload(), kind == ResponseFraming.PacketKind.COLUMN_COUNT,
                    kind == ResponseFraming.PacketKind.COLUMN_DEFINITION, session.ctx.alloc());
            return payload == response.payload() ? response : new Packet(response.sequenceId(), payload);
        };
    }
}
