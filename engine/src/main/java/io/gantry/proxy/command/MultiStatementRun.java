package io.gantry.proxy.command;

import io.gantry.proxy.execution.AfterResponse;
import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.proxy.session.ClientWriter;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.gantry.wire.ServerStatus;
import java.util.List;

/**
 * A multi-statement text with {@code KILL}s among its statements ({@code KILL 7; SELECT SLEEP(0.05)}), run as the
 * server runs a multi-statement text: in order, each statement's result in turn, every result but the last flagged
 * {@code SERVER_MORE_RESULTS_EXISTS}, and nothing after the first error. Each KILL is Gantry's ({@link KillCommand}:
 * its number is a Gantry session id, never sent to a server as a thread id); the statements between KILLs go to a
 * server as one text, and its answer joins the client's response with its sequence ids moved on and, when more
 * follows, its last status flagged.
 */
final class MultiStatementRun {

    /** Runs a part's text as a statement of the session, its answer going through {@code stitch}. */
    @FunctionalInterface
    interface SqlRunner {
        Reply run(String sql, Stitch stitch);
    }

    private final SessionContext session;
    private final ClientWriter client;
    private final KillCommand kill;
    private final SqlRunner sql;
    private final List<SessionIdentitySql.Part> parts;
    private int index;
    /** The sequence id of the response's next packet. */
    private int nextSequence = 1;

    MultiStatementRun(SessionContext session, ClientWriter client, KillCommand kill, SqlRunner sql,
                      List<SessionIdentitySql.Part> parts) {
        this.session = session;
        this.client = client;
        this.kill = kill;
        this.sql = sql;
        this.parts = parts;
    }

    /** Runs the parts; the answer as {@link QueryCommand#run} returns one. */
    Reply start() {
        session.markRunning();
        runPart();
        return Reply.LATER;
    }

    private boolean more() {
        return index < parts.size() - 1;
    }

    private void runPart() {
        SessionIdentitySql.Part part = parts.get(index);
        if (part instanceof SessionIdentitySql.Part.KillPart killPart) {
            Reply now = kill.run(killPart.kill(), this::killed);
            if (now instanceof Reply.Error error) {
                killed(error.error());
            }
            return;
        }
        Reply refused = sql.run(((SessionIdentitySql.Part.SqlPart) part).sql(), new Stitch(nextSequence - 1, more()));
        if (refused instanceof Reply.Error error) {
            fail(error.error());
        }
    }

    private void killed(ErrPacket error) {
        if (error != null) {
            fail(error);
            return;
        }
        client.write(session.okPacket(nextSequence++, 0, more() ? ServerStatus.SERVER_MORE_RESULTS_EXISTS : 0));
        next();
    }

    private void next() {
        if (session.isClosed()) {
            return;
        }
        if (!more()) {
            client.flush();
            session.finish(Reply.DONE);
            return;
        }
        index++;
        runPart();
    }

    private void fail(ErrPacket error) {
        client.write(session.errorPacket(nextSequence, error));
        client.flush();
        session.finish(Reply.DONE);
    }

    /** What a part sent to a server does to its answer: sequence ids moved on, the last status flagged. */
    final class Stitch {
        private final int offset;
        private final boolean more;
        private int packets;

        private Stitch(int offset, boolean more) {
            this.offset = offset;
            this.more = more;
        }

        ResponseForwarder.ResponseRewriter rewriter(ResponseForwarder.ResponseRewriter inner) {
            return (response, framing) -> {
                Packet packet = inner.rewrite(response, framing);
                packets++;
                ResponseFraming.PacketKind kind = framing.lastPacketKind();
                if (more && framing.isComplete()
                        && (kind == ResponseFraming.PacketKind.OK || kind == ResponseFraming.PacketKind.EOF)) {
                    ServerStatus.markMoreResults(packet.payload());
                }
                return new Packet((packet.sequenceId() + offset) & 0xFF, packet.payload());
            };
        }

        /** After the part's own last step, the next part runs, unless the server answered with an error. */
        AfterResponse after(AfterResponse inner) {
            return (connection, framing, done) -> inner.run(connection, framing, () -> {
                nextSequence = offset + packets + 1;
                if (framing.failed() || !more) {
                    done.run();
                } else {
                    next();
                }
            });
        }
    }
}
