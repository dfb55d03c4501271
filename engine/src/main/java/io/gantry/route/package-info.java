/**
 * Per-statement routing: the primary or which replica, and why.
 *
 * <p>{@link io.gantry.route.StatementClassifier} turns COM_QUERY text into a
 * {@link io.gantry.route.StatementClass}; {@link io.gantry.route.Router} turns that, the session's
 * {@link io.gantry.route.SessionRouteState}, the {@link io.gantry.route.RoutingConfig} and the replica candidates into
 * a {@link io.gantry.route.RouteDecision} that carries its {@link io.gantry.route.RouteReason}. The package is pure
 * logic: no Netty, no JDBC, no other engine package.
 *
 * <p>Decisions a reader of the manual (docs/routing-and-guarantees.md) should know:
 * <ul>
 *   <li>Session pinning (user variables set, temporary tables, table locks, named locks, {@code LOAD DATA LOCAL},
 *       a multi-statement text mixing session state with other statements) lasts until the client disconnects;
 *       the list is on {@link io.gantry.route.SessionRouteState}.</li>
 *   <li>Session-state statements ({@code SET NAMES}, {@code SET sql_mode}, {@code USE}, {@code SET autocommit},
 *       {@code SET TRANSACTION}, {@code SET ROLE}) do not pin; the proxy replays them on every backend.</li>
 *   <li>Reads of user variables, {@code LAST_INSERT_ID()}, {@code CONNECTION_ID()}, system variables
 *       ({@code @@...}) and server status ({@code SHOW STATUS/VARIABLES/PROCESSLIST/...}) go to the primary
 *       without pinning. {@code SHOW WARNINGS}, {@code FOUND_ROWS()}, {@code ROW_COUNT()} go to the server that ran
 *       the previous statement.</li>
 *   <li>A read-only transaction runs entirely on the server its {@code START TRANSACTION READ ONLY} was sent to,
 *       writes included (rejected there as in any read-only transaction). With autocommit off everything goes to
 *       the primary.</li>
 *   <li>{@code DO} is a write; a {@code SELECT} calling a stored function that writes needs the
 *       {@code READWRITE} hint.</li>
 *   <li>Unknown, empty or garbage text goes to the primary.</li>
 * </ul>
 */
package io.gantry.route;
