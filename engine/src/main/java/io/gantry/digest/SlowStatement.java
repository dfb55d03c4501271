package io.gantry.digest;

import io.gantry.route.RouteReason;
import io.gantry.route.SqlMode;
import java.time.Instant;

/**
 * One statement slower than {@code --slow-statement-ms}, as its session saw it, for the {@link SlowStatementLog}. The
 * text is the client's, whole: the log's thread masks and cuts it, so the event loop does neither.
 *
 * @param started      when its command arrived
 * @param nanos        from its command's arrival to the end of its answer
 * @param shape        its digest shape
 * @param text         the text the client sent (a prepared statement's, for an execution; the whole text, for a
 *                     part of a multi-statement text); null for none
 * @param mode         the session's {@code sql_mode}, which says how the text's literals read
 * @param session      the Gantry session id
 * @param server       {@code host:port} of the server that answered it; null when Gantry or a cache did
 * @param reason       why it went where it ran; null when it was not routed
 * @param errorCode    the error it ended with, 0 for none
 */
public record SlowStatement(Instant started, long nanos, String shape, String text, SqlMode mode, String schema,
                            String account, long session, String server, RanOn ranOn, RouteReason reason,
                            int errorCode, long rowsSent, long rowsAffected) {
}
