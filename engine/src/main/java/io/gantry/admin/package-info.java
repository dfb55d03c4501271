/**
 * Gantry's own SQL surface: the statements it answers itself instead of sending them to a server
 * ({@code SHOW GANTRY STATUS}, {@code ALTER GANTRY ...}, {@code STOP|START GANTRY REPLICATION},
 * queries on the {@code gantry} tables), and the admin socket.
 *
 * <p>{@link io.gantry.admin.AdminStatements#parse(String)} turns COM_QUERY text into an
 * {@link io.gantry.admin.AdminStatement}, or nothing for an ordinary statement. It is pure logic
 * (no Netty, no JDBC) and cheap for the common case: text without the word {@code gantry} is
 * rejected by one scan that allocates nothing.
 *
 * <p>This package reads the others; nothing reads it.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query.html">COM_QUERY</a>
 */
package io.gantry.admin;
