package io.gantry.console.pools;

/**
 * One row of {@code SHOW GANTRY POOLS}, as the engine wrote it: one server and account.
 *
 * @param serverConnections the sessions' connections open to the server (every account, in use and idle)
 * @param cap               the most the sessions may hold there at once ("" until known)
 * @param waiting           sessions waiting for room under the cap now
 * @param idle              pooled connections of the account
 * @param reuseRatio        of the connections the account's sessions needed, the share taken from the pool
 * @param waitP99Millis     the 99th percentile of the wait for room, over about the last two minutes
 */
public record Pool(String server, String user, String serverConnections, String cap, String waiting, String idle,
                   String created, String reused, String reuseRatio, String closedIdle, String waited,
                   String waitP99Millis) {
}
