package io.gantry.proxy.command;

import io.gantry.proxy.execution.ResponseForwarder.ResponseRewriter;
import io.gantry.proxy.session.ClientWriter;
import io.gantry.proxy.session.LoginDoor;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionRegistry;
import io.gantry.route.QueryText;
import io.gantry.route.StatementKind;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.CommandType;
import io.gantry.wire.Packet;
import io.gantry.wire.ServerVersion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The answers Gantry corrects in passing, made in one place for a statement sent as text (COM_QUERY: text rows) and
 * for a prepared one (COM_STMT_PREPARE's column definitions; COM_STMT_EXECUTE's and COM_STMT_FETCH's binary rows): a
 * direct connection answers both forms alike, so both are corrected alike. The corrections: the columns of values
 * written into the text, named and typed as the client wrote them ({@link SessionValueColumns}); Gantry session ids
 * in a process list ({@link ProcesslistIds}); the {@code Ssl_*} status rows of the client's own connection
 * ({@link SslStatusRows}). A statement whose text has none of their words costs one bit test each and gets
 * {@link ResponseRewriter#NONE}.
 */
public final class AnswerCorrections {

    private final SessionContext session;
    private final SessionRegistry sessions;
    private final LoginDoor login;
    private final Upstreams upstreams;
    private final ClientWriter client;
    private final ByteBufAllocator alloc;

    /**
     * @param login  whose greetings say whether the servers are MariaDB's
     * @param client the client's connection, whose TLS the {@code Ssl_*} rows describe
     */
    public AnswerCorrections(SessionContext session, SessionRegistry sessions, LoginDoor login, Upstreams upstreams,
                             ClientWriter client, ByteBufAllocator alloc) {
        this.session = session;
        this.sessions = sessions;
        this.login = login;
        this.upstreams = upstreams;
        this.client = client;
        this.alloc = alloc;
    }

    /**
     * Whether the answers to {@code asked}, sent as {@code sent}, may need a correction: what a prepared statement
     * notes once, so that its executions build nothing when none can.
     */
    static boolean mayCorrect(QueryText asked, QueryText sent) {
        return sent != asked || asked.mentions(QueryText.Word.PROCESSLIST) || asked.mentions(QueryText.Word.STATUS);
    }

    /**
     * What the answer to a statement needs before it goes to the client.
     *
     * @param asked  the client's text
     * @param sent   the text as sent, with values written in; {@code asked} itself when it is the same text
     * @param kind   what the statement was routed as: only a read's rows are corrected
     * @param server where it runs
     */
    ResponseRewriter of(QueryText asked, QueryText sent, StatementKind kind, UpstreamServer server) {
        ResponseRewriter rewriter = columnsOf(asked, sent);
        if (kind != StatementKind.READ) {
            return rewriter;
        }
        int mariaDbCapabilities = session.client().mariaDbCapabilities();
        if (asked.mentions(QueryText.Word.PROCESSLIST)) {
            String address = server.address();
            rewriter = then(rewriter, new ProcesslistIds(() -> sessions.sessionsByThreadOn(address),
                    mariaDbCapabilities, alloc));
        }
        if (asked.mentions(QueryText.Word.STATUS)) {
            rewriter = then(rewriter, SslStatusRows.of(client.tls(), mariaDb(), mariaDbCapabilities, alloc));
        }
        return rewriter;
    }

    /** Whether the servers are MariaDB's, as the greeting Gantry mirrors from them says. */
    private boolean mariaDb() {
        return ServerVersion.parse(login.greetings().source(upstreams.primary()).serverVersion()).mariaDb();
    }

    /**
     * Column definitions named and typed as direct for the calls written in (see {@link SessionValueColumns}): for
     * an answer with rows, and for COM_STMT_PREPARE's, which describes the columns of the executions to come.
     */
    ResponseRewriter columnsOf(QueryText asked, QueryText sent) {
        if (sent == asked) {
            return ResponseRewriter.NONE;
        }
        SessionValueColumns columns = SessionValueColumns.of(asked.sql(), sent.sql(), session.noBackslashEscapes(),
                mariaDb());
        return (response, framing) -> {
            boolean binary = framing.command() != CommandType.COM_QUERY;
            ByteBuf payload = columns.rewrite(response.payload(), framing.lastPacketKind(), binary, alloc);
            return payload == response.payload() ? response : new Packet(response.sequenceId(), payload);
        };
    }

    /** {@code first}, then {@code second}. */
    static ResponseRewriter then(ResponseRewriter first, ResponseRewriter second) {
        if (first == ResponseRewriter.NONE) {
            return second;
        }
        if (second == ResponseRewriter.NONE) {
            return first;
        }
        return (response, framing) -> second.rewrite(first.rewrite(response, framing), framing);
    }
}
