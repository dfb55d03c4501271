package io.gantry.proxy;

import io.gantry.route.RoutingConfig;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * How the proxy runs.
 *
 * @param listen               address and port clients connect to
 * @param routing              read/write split settings
 * @param maxClientConnections client sessions at once; the excess is refused with MySQL error 1040
 * @param connectTimeout       bound on connecting and logging in to a backend ({@code --upstream-connect-timeout})
 * @param connectionRetention  how long an idle replica connection is kept for the next statement under
 *                             statement balance ({@code --connection-retention-ms}, default 256 ms)
 * @param maxPacketSize        largest packet accepted from a client or backend, after reassembly; larger closes
 *                             the session with an error (default 64 MiB, MySQL 8.4's {@code max_allowed_packet})
 */
public record ProxyConfig(InetSocketAddress listen, RoutingConfig routing, int maxClientConnections,
                          Duration connectTimeout, Duration connectionRetention, int maxPacketSize) {

    /** Default for {@link #maxPacketSize}. */
    public static final int DEFAULT_MAX_PACKET_SIZE = 64 * 1024 * 1024;

    public ProxyConfig {
        if (maxClientConnections < 1) {
            throw new IllegalArgumentException("--max-client-connections must be at least 1, not " + maxClientConnections);
        }
        if (connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new IllegalArgumentException("--upstream-connect-timeout must be positive, not " + connectTimeout);
        }
        if (connectionRetention.isNegative()) {
            throw new IllegalArgumentException("--connection-retention-ms must not be negative");
        }
    }
}
