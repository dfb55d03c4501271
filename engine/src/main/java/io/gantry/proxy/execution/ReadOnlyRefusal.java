package io.gantry.proxy.execution;

import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server's refusal of a statement because it is read-only: {@code 1290} naming {@code --read-only} or
 * {@code --super-read-only} (1290 also refuses for other options, {@code --secure-file-priv} for one), or
 * {@code 1836} ({@code ER_READ_ONLY_MODE}). From the server Gantry takes for the primary it means the primary moved:
 * the health loop is asked to look at once. The statement it refuses did not run.
 */
public final class ReadOnlyRefusal {

    private static final Logger LOG = LoggerFactory.getLogger(ReadOnlyRefusal.class);

    private static final int OPTION_PREVENTS_STATEMENT = 1290;
    private static final int READ_ONLY_MODE = 1836;

    private ReadOnlyRefusal() {
    }

    /** Whether {@code errPayload} (an ERR packet) refuses for read-only. */
    public static boolean is(ByteBuf errPayload) {
        int at = errPayload.readerIndex();
        if (errPayload.readableBytes() < 3) {
            return false;
        }
        int code = errPayload.getUnsignedShortLE(at + 1);
        if (code == READ_ONLY_MODE) {
            return true;
        }
        if (code != OPTION_PREVENTS_STATEMENT) {
            return false;
        }
        String message = errPayload.toString(at + 3, errPayload.readableBytes() - 3, StandardCharsets.ISO_8859_1)
                .toLowerCase(Locale.ROOT);
        return message.contains("read-only") || message.contains("read_only");
    }

    /**
     * Whether the ERR packet is a read-only refusal by the server taken for the primary; when it is, every server
     * is checked again now.
     *
     * @param sentToThePrimary the statement was routed to {@code server} as the primary: its refusal counts even if
     *                         the primary moved while the statement was on its way (another session's refusal
     *                         may have made the health loop find the new one first); the statement still did not run
     */
    static boolean fromPrimary(Upstreams upstreams, UpstreamServer server, ByteBuf errPayload, long session,
                               boolean sentToThePrimary) {
        if (!(sentToThePrimary || upstreams.isPrimary(server)) || !is(errPayload)) {
            return false;
        }
        LOG.atInfo().addKeyValue("session", session).addKeyValue("server", server.address())
                .log("session {}: the primary {} refused a statement as read-only; checking every server now",
                        session, server.address());
        upstreams.requestCheck("the primary " + server.address() + " refused a statement as read-only");
        return true;
    }
}
