/**
 * Gantry's admin API: what an operator can ask of and do to a running engine, typed, and the doors it is reached
 * through.
 *
 * <ul>
 *   <li>{@link io.gantry.admin.AdminOperations}: the typed operations (queries on the {@code gantry} tables, the
 *       status, weights and lists, the change stream's commands, the live servers, health history, the
 *       timeline), implemented over the engine by {@link io.gantry.admin.AdminService}. Refusals are
 *       {@link io.gantry.admin.AdminException}s with a {@link io.gantry.admin.AdminResult.Failure kind}.</li>
 *   <li>{@link io.gantry.admin.AdminResult}: what a statement answers, typed rows, done or failed, with no wire
 *       types in it: the proxy port turns it into MySQL packets, the admin socket into JSON.</li>
 *   <li>{@link io.gantry.admin.AdminStatements#parse(String)} turns COM_QUERY text into an
 *       {@link io.gantry.admin.AdminStatement}, or nothing for an ordinary statement. It is pure logic (no Netty,
 *       no JDBC) and cheap for the common case: text without the word {@code gantry} is rejected by one scan that
 *       allocates nothing.</li>
 *   <li>{@link io.gantry.admin.AdminSqlRunner}: the admin SQL ({@code SHOW GANTRY STATUS}, {@code ALTER GANTRY
 *       ...}, {@code STOP|START GANTRY REPLICATION}, queries on the {@code gantry} tables) as operations, the same
 *       on the proxy port (through the {@link io.gantry.admin.AdminSql} seam, which the proxy asks about every
 *       COM_QUERY) and on the admin socket.</li>
 * </ul>
 *
 * <p>The proxy reads only {@link io.gantry.admin.AdminSql} and {@link io.gantry.admin.AdminResult} of this package;
 * nothing else but the composition root reads it, and it reads neither the proxy nor the wire protocol.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query.html">COM_QUERY</a>
 */
package io.gantry.admin;
