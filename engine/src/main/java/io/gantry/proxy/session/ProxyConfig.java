package io.gantry.proxy.session;

import io.gantry.digest.DigestSettings;
import io.gantry.proxy.backend.BackendPool;
import io.gantry.proxy.login.LoginLimits;
import io.gantry.proxy.transport.SocketTransport;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.RoutingConfig;
import io.gantry.wire.CachingSha2Password;
import io.gantry.wire.NativePassword;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

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
 * @param tls                  certificate and key offered to clients, or empty for no TLS
 * @param defaultAuthPlugin    the authentication plugin the greeting proposes ({@code mysql_native_password} or
 *                             {@code caching_sha2_password}); clients may answer with either
 * @param connectRetries       how many more times Gantry's own connection attempts (validation now, CDC later) are
 *                             tried after a server did not answer ({@code --upstream-connect-retries}, default 3);
 *                             a session's failed connection is not retried: it marks the server down at once
 * @param login                what a peer may hold before it has logged in, and login throttling
 * @param readGuarantees       the read guarantees every session starts with (each may change its own)
 * @param eventLoopThreads     the I/O threads that carry every session and its backend connections
 *                             ({@code --event-loop-threads}, default one per core, as HAProxy's {@code nbthread})
 * @param socketTransport      the Netty transport of the client and backend sockets ({@code --socket-transport},
 *                             default {@link SocketTransport#best}); it must be available here
 * @param pool                 connection multiplexing: whether sessions share idle backend connections, and how
 *                             long and how many of them the pools keep
 * @param failover             how health checks are bounded and how long statements wait for a primary
 * @param digests              how statements are measured: the digests' rows at most, the slow-statement log
 */
public record ProxyConfig(InetSocketAddress listen, RoutingConfig routing, int maxClientConnections,
                          Duration connectTimeout, Duration connectionRetention, int maxPacketSize,
                          Optional<TlsFiles> tls, String defaultAuthPlugin, int connectRetries,
                          LoginLimits login, ReadGuarantees readGuarantees, int eventLoopThreads,
                          SocketTransport socketTransport, BackendPool.Settings pool, FailoverSettings failover,
                          DigestSettings digests) {

    /** The most {@link #eventLoopThreads} accepted. */
    public static final int MAX_EVENT_LOOP_THREADS = 256;

    /** Default for {@link #maxPacketSize}. */
    public static final int DEFAULT_MAX_PACKET_SIZE = 64 * 1024 * 1024;

    /**
     * A PEM certificate chain and its private key (PKCS#8 PEM, {@code -----BEGIN PRIVATE KEY-----}).
     *
     * @param certificate {@code --tls-cert}
     * @param key         {@code --tls-key}
     */
    public record TlsFiles(Path certificate, Path key) {
    }

    public ProxyConfig {
        if (maxClientConnections < 1) {
            throw new IllegalArgumentException("--max-client-connections must be at least 1, not " + maxClientConnections);
        }
        if (connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new IllegalArgumentException("--upstream-connect-timeout must be positive, not "
                    + connectTimeout.toMillis() + " ms");
        }
        if (connectionRetention.isNegative()) {
            throw new IllegalArgumentException("--connection-retention-ms must not be negative");
        }
        if (connectRetries < 0 || connectRetries > 100) {
            throw new IllegalArgumentException("--upstream-connect-retries must be between 0 and 100, not "
                    + connectRetries);
        }
        if (eventLoopThreads < 1 || eventLoopThreads > MAX_EVENT_LOOP_THREADS) {
            throw new IllegalArgumentException("--event-loop-threads must be between 1 and " + MAX_EVENT_LOOP_THREADS
                    + ", not " + eventLoopThreads);
        }
        socketTransport.requireAvailable();
        if (!defaultAuthPlugin.equals(NativePassword.PLUGIN_NAME)
                && !defaultAuthPlugin.equals(CachingSha2Password.PLUGIN_NAME)) {
            throw new IllegalArgumentException("--default-auth-plugin must be mysql_native_password or "
                    + "caching_sha2_password, not '" + defaultAuthPlugin + "'");
        }
    }

    /** The defaults of {@code gantry run}, listening on {@code listen}. */
    public static ProxyConfig defaults(InetSocketAddress listen) {
        return new ProxyConfig(listen, RoutingConfig.DEFAULTS, 1000, Duration.ofSeconds(5), Duration.ofMillis(256),
                DEFAULT_MAX_PACKET_SIZE, Optional.empty(), NativePassword.PLUGIN_NAME, 3, LoginLimits.DEFAULTS,
                ReadGuarantees.DEFAULTS, Runtime.getRuntime().availableProcessors(), SocketTransport.best(),
                BackendPool.Settings.DEFAULTS, FailoverSettings.DEFAULTS, DigestSettings.DEFAULTS);
    }

    public ProxyConfig withRouting(RoutingConfig value) {
        return new ProxyConfig(listen, value, maxClientConnections, connectTimeout, connectionRetention,
                maxPacketSize, tls, defaultAuthPlugin, connectRetries, login, readGuarantees, eventLoopThreads,
                socketTransport, pool, failover, digests);
    }

    public ProxyConfig withMaxClientConnections(int value) {
        return new ProxyConfig(listen, routing, value, connectTimeout, connectionRetention, maxPacketSize, tls,
                defaultAuthPlugin, connectRetries, login, readGuarantees, eventLoopThreads,
                socketTransport, pool, failover, digests);
    }

    public ProxyConfig withConnectTimeout(Duration value) {
        return new ProxyConfig(listen, routing, maxClientConnections, value, connectionRetention, maxPacketSize, tls,
                defaultAuthPlugin, connectRetries, login, readGuarantees, eventLoopThreads,
                socketTransport, pool, failover, digests);
    }

    public ProxyConfig withConnectionRetention(Duration value) {
        return new ProxyConfig(listen, routing, maxClientConnections, connectTimeout, value, maxPacketSize, tls,
                defaultAuthPlugin, connectRetries, login, readGuarantees, eventLoopThreads,
                socketTransport, pool, failover, digests);
    }

    public ProxyConfig withMaxPacketSize(int value) {
        return new ProxyConfig(listen, routing, maxClientConnections, connectTimeout, connectionRetention, value, tls,
                defaultAuthPlugin, connectRetries, login, readGuarantees, eventLoopThreads,
                socketTransport, pool, failover, digests);
    }

    public ProxyConfig withTls(TlsFiles value) {
        return new ProxyConfig(listen, routing, maxClientConnections, connectTimeout, connectionRetention,
                maxPacketSize, Optional.ofNullable(value), defaultAuthPlugin, connectRetries, login, readGuarantees,
                eventLoopThreads, socketTransport, pool, failover, digests);
    }

    public ProxyConfig withConnectRetries(int value) {
        return new ProxyConfig(listen, routing, maxClientConnections, connectTimeout, connectionRetention,
                maxPacketSize, tls, defaultAuthPlugin, value, login, readGuarantees, eventLoopThreads,
                socketTransport, pool, failover, digests);
    }

    public ProxyConfig withDefaultAuthPlugin(String value) {
        return new ProxyConfig(listen, routing, maxClientConnections, connectTimeout, connectionRetention,
                maxPacketSize, tls, value, connectRetries, login, readGuarantees, eventLoopThreads,
                socketTransport, pool, failover, digests);
    }

    public ProxyConfig withReadGuarantees(ReadGuarantees value) {
        return new ProxyConfig(listen, routing, maxClientConnections, connectTimeout, connectionRetention,
                maxPacketSize, tls, defaultAuthPlugin, connectRetries, login, value, eventLoopThreads,
                socketTransport, pool, failover, digests);
    }

    public ProxyConfig withEventLoopThreads(int value) {
        return new ProxyConfig(listen, routing, maxClientConnections, connectTimeout, connectionRetention,
                maxPacketSize, tls, defaultAuthPlugin, connectRetries, login, readGuarantees, value,
                socketTransport, pool, failover, digests);
    }

    public ProxyConfig withSocketTransport(SocketTransport value) {
        return new ProxyConfig(listen, routing, maxClientConnections, connectTimeout, connectionRetention,
                maxPacketSize, tls, defaultAuthPlugin, connectRetries, login, readGuarantees,
                eventLoopThreads, value, pool, failover, digests);
    }

    public ProxyConfig withPool(BackendPool.Settings value) {
        return new ProxyConfig(listen, routing, maxClientConnections, connectTimeout, connectionRetention,
                maxPacketSize, tls, defaultAuthPlugin, connectRetries, login, readGuarantees, eventLoopThreads,
                socketTransport, value, failover, digests);
    }

    public ProxyConfig withFailover(FailoverSettings value) {
        return new ProxyConfig(listen, routing, maxClientConnections, connectTimeout, connectionRetention,
                maxPacketSize, tls, defaultAuthPlugin, connectRetries, login, readGuarantees, eventLoopThreads,
                socketTransport, pool, value, digests);
    }

    public ProxyConfig withLogin(LoginLimits value) {
        return new ProxyConfig(listen, routing, maxClientConnections, connectTimeout, connectionRetention,
                maxPacketSize, tls, defaultAuthPlugin, connectRetries, value, readGuarantees, eventLoopThreads,
                socketTransport, pool, failover, digests);
    }

    public ProxyConfig withDigests(DigestSettings value) {
        return new ProxyConfig(listen, routing, maxClientConnections, connectTimeout, connectionRetention,
                maxPacketSize, tls, defaultAuthPlugin, connectRetries, login, readGuarantees, eventLoopThreads,
                socketTransport, pool, failover, value);
    }
}
