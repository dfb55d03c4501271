package io.gantry.admin;

import java.util.List;

/**
 * The proxy's pools of shared backend connections as {@code SHOW GANTRY POOLS} shows them. The proxy implements it;
 * the admin is told of it once the proxy listens.
 */
public interface PoolFigures {

    /** Before the proxy listens: no pool. */
    PoolFigures NONE = List::of;

    /**
     * One server and account.
     *
     * @param serverConnections the session connections open to the server now, of every account (in use and idle)
     * @param cap        the most the sessions may have open to the server at once (0: none known yet)
     * @param waiting    sessions waiting for one of them to free, of every account
     * @param idle       pooled connections of this account waiting for a session now
     * @param created    connections opened for sessions of this account since the start
     * @param reused     times a session of this account took a pooled connection instead of opening one
     * @param closedIdle pooled connections closed for being idle too long or one too many
     * @param waited     sessions that had to wait for a connection to the server since the start, of every account
     * @param waitP99Millis the 99th percentile of how long a new connection to the server waited for room under the
     *                   cap, over about the last two minutes (0 when there was room), of every account
     */
    record Pool(String server, String user, int serverConnections, int cap, int waiting, long idle, long created,
                long reused, long closedIdle, long waited, double waitP99Millis) {

        /** Of the connections sessions needed, the share that came from the pool. */
        public double reuseRatio() {
            long needed = created + reused;
            return needed == 0 ? 0 : (double) reused / needed;
        }
    }

    List<Pool> pools();
}
