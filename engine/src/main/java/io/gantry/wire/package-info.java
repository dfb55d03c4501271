/**
 * The MySQL/MariaDB client/server protocol: framing, packet records, capability and status
 * flags, authentication scrambles and response framing.
 *
 * <p>This package knows nothing of routing or sessions and depends on nothing else in the engine.
 * It is used both towards clients (Gantry acts as the server) and towards backends (Gantry acts
 * as the client). Result rows are never decoded here: {@link io.gantry.wire.ResponseFraming}
 * only finds where a backend response ends so the proxy can forward packets untouched.
 *
 * <p>Strings are decoded and encoded as UTF-8 (the connection character set Gantry negotiates).
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/PAGE_PROTOCOL.html">Client/Server Protocol</a>
 */
package io.gantry.wire;
