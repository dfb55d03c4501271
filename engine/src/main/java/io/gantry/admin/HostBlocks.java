package io.gantry.admin;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The hosts the proxy's login gate refuses now, and lifting those blocks: what {@code SHOW GANTRY BLOCKED HOSTS} and
 * {@code FLUSH GANTRY HOST[S]} reach. The proxy implements it; the admin is told of it once the proxy listens (the
 * admin statements are made before the proxy, which answers them).
 */
public interface HostBlocks {

    /** Before the proxy listens: nothing is blocked and nothing can be lifted. */
    HostBlocks NONE = new HostBlocks() {
        @Override
        public List<BlockedHost> blockedHosts() {
            return List.of();
        }

        @Override
        public boolean unblock(String host) {
            return false;
        }

        @Override
        public int unblockAll() {
            return 0;
        }
    };

    /**
     * A host refused now.
     *
     * @param reason   the failures that blocked it, in words
     * @param failures how many failed handshakes in a row blocked it
     * @param since    when it was blocked
     * @param left     how long it stays blocked unless lifted
     */
    record BlockedHost(String host, String reason, int failures, Instant since, Duration left) {
    }

    /** The hosts refused now, the longest blocked first. */
    List<BlockedHost> blockedHosts();

    /** Lifts the block of {@code host} and forgets its failures; returns whether it was blocked. */
    boolean unblock(String host);

    /** Lifts every block and forgets every failure; returns how many hosts were blocked. */
    int unblockAll();
}
