package io.gantry.proxy.command;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.admin.AdminResult;
import io.gantry.proxy.digest.SessionDigest;
import io.gantry.proxy.session.ClientWriter;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.Packet;
import io.gantry.wire.TextResultSet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Gantry's own SQL on the proxy port: the result is computed off the event loop and written back on it, as MySQL
 * packets (rows as a text result set, done as OK, a failure as ERR).
 */
public final class AdminCommand {

    private final SessionContext session;
    private final ClientWriter client;
    private final SessionDigest digest;
    /** The session's event loop: the answer is written there, whichever thread ran the statement. */
    private final EventLoop loop;
    private final ByteBufAllocator alloc;

    AdminCommand(SessionContext session, ClientWriter client, SessionDigest digest, EventLoop loop,
                 ByteBufAllocator alloc) {
        this.session = session;
        this.client = client;
        this.digest = digest;
        this.loop = loop;
        this.alloc = alloc;
    }

    Reply answer(CompletionStage<AdminResult> reply) {
        session.markRunning();
        reply.whenComplete((answer, failure) -> loop.execute(() -> {
            if (failure != null) {
                LOG.atError().addKeyValue("session", session.id())
                        .log("session {}: admin statement failed: {}", session.id(), failure.toString(), failure);
                Reply error = Reply.error(SessionErrors.adminStatementFailed(failure));
                digest.answeredByGantry(error, 0);
                session.finish(error);
            } else {
                Reply written = write(answer);
                digest.answeredByGantry(written, answer instanceof AdminResult.Rows rows ? rows.text().size() : 0);
                session.finish(written);
            }
        }));
        return Reply.LATER;
    }

    private Reply write(AdminResult result) {
        if (session.isClosed()) {
            return Reply.LATER;
        }
        if (result instanceof AdminResult.Rows rows) {
            List<ColumnDefinition> columns = rows.columns().stream()
                    .map(column -> ColumnDefinition.text("gantry", "", column.name())).toList();
            int sequence = 1;
            for (ByteBuf payload : TextResultSet.encode(columns, rows.text(), session.client().capabilities(),
                    session.client().mariaDbCapabilities(), session.localStatus(), alloc)) {
                client.write(new Packet(sequence++ & 0xFF, payload));
            }
            client.flush();
            return Reply.DONE;
        }
        if (result instanceof AdminResult.Done done) {
            // No info text: mysql-connector-j misreads an OK's info unless it is empty, and the message is logged.
            LOG.atInfo().addKeyValue("session", session.id())
                    .log("session {}: admin statement done: {}", session.id(), done.message());
            client.write(session.okPacket(1, done.affectedRows(), 0));
            client.flush();
            return Reply.DONE;
        }
        return Reply.error(SessionErrors.adminStatementRefused((AdminResult.Failed) result));
    }
}
