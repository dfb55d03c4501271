package io.gantry.proxy.execution;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.proxy.session.SessionContext;
import io.gantry.route.SessionConsistency;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementKind;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import java.time.Clock;
import java.util.List;

/**
 * What each completed statement means for a session's read guarantees: the GTIDs its commits produced, what it read
 * or wrote where, and whether the primary's position must be sampled before a replica may serve the session again.
 */
final class ConsistencyRecorder {

    private final SessionContext session;
    private final Upstreams upstreams;
    private final Clock clock;
    /** Asks the position sampler for a sample soon (whichever sampler the proxy runs by then). */
    private final Runnable nudgeSampler;

    ConsistencyRecorder(SessionContext session, Upstreams upstreams, Clock clock, Runnable nudgeSampler) {
        this.session = session;
        this.upstreams = upstreams;
        this.clock = clock;
        this.nudgeSampler = nudgeSampler;
    }

    /**
     * A statement of the session's completed on {@code server}: what it read, or wrote on the primary, becomes part
     * of what the session's next reads must not be older than (see {@link SessionConsistency}).
     *
     * @param statement the statement's class, or null for a command that is not a statement (an execute whose
     *                  class is unknown, a fetch): taken as a write on the primary and a read elsewhere
     */
    void completedOn(UpstreamServer server, StatementClass statement) {
        // The GTIDs the command's commits produced (BEGIN too commits an open transaction): a replica serves the
        // session again once it has applied exactly them, with no need to wait for a sample of the primary.
        GtidSet committed = committedGtids(session.tracking().takeOwnGtids());
        if (committed != null) {
            session.consistency().committed(committed);
        }
        StatementKind kind = statement == null ? null : statement.kind();
        if (kind == StatementKind.SESSION_STATE || kind == StatementKind.TRANSACTION_BEGIN
                || kind == StatementKind.TRANSACTION_SAVEPOINT) {
            return; // no data read or written
        }
        boolean onPrimary = upstreams.isPrimary(server);
        boolean wrote = onPrimary && (kind == null || kind == StatementKind.WRITE
                || kind == StatementKind.TRANSACTION_END);
        if (!wrote || committed == null) {
            // A write whose GTID was not reported (tracking unavailable, or nothing reached the binlog) waits for
            // a sample taken after it, which holds it if it committed.
            session.consistency().completed(session.serverId(server), clock.millis(), wrote);
        }
        if (onPrimary) {
            // Until a sample settles it, no replica may serve the session. A read on a replica needs no sample to
            // go on reading there: the session asks for one only if it is kept from moving (SessionRouting).
            nudgeSampler.run();
        }
    }

    /** The reported GTIDs as one set (MySQL's are {@code uuid:n}, MariaDB's {@code domain-server-seq}), or null. */
    private GtidSet committedGtids(List<String> reported) {
        if (reported == null) {
            return null;
        }
        GtidSet committed = null;
        for (String text : reported) {
            try {
                GtidSet one = GtidSet.parse(text, text.indexOf(':') >= 0 ? Flavour.MYSQL : Flavour.MARIADB);
                committed = committed == null || committed.flavour() != one.flavour() ? one : committed.union(one);
            } catch (IllegalArgumentException unreadable) {
                LOG.debug("session {}: unreadable GTID '{}' reported by a server: {}", session.id(), text,
                        unreadable.getMessage());
            }
        }
        return committed;
    }
}
