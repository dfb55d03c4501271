package io.gantry.proxy.login;

import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_ATTRS;
import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_WITH_DB;
import static io.gantry.wire.CapabilityFlags.CLIENT_DEPRECATE_EOF;
import static io.gantry.wire.CapabilityFlags.CLIENT_FOUND_ROWS;
import static io.gantry.wire.CapabilityFlags.CLIENT_IGNORE_SPACE;
import static io.gantry.wire.CapabilityFlags.CLIENT_INTERACTIVE;
import static io.gantry.wire.CapabilityFlags.CLIENT_LOCAL_FILES;
import static io.gantry.wire.CapabilityFlags.CLIENT_LONG_FLAG;
import static io.gantry.wire.CapabilityFlags.CLIENT_LONG_PASSWORD;
import static io.gantry.wire.CapabilityFlags.CLIENT_MULTI_RESULTS;
import static io.gantry.wire.CapabilityFlags.CLIENT_MULTI_STATEMENTS;
import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_PS_MULTI_RESULTS;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static io.gantry.wire.CapabilityFlags.CLIENT_SESSION_TRACK;
import static io.gantry.wire.CapabilityFlags.CLIENT_SSL;
import static io.gantry.wire.CapabilityFlags.CLIENT_TRANSACTIONS;
import static io.gantry.wire.CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA;


import io.gantry.proxy.backend.BackendConnection;
import io.gantry.topology.UpstreamServer;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.GreetingTemplate;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.NativePassword;
import io.gantry.wire.ServerStatus;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The greeting Gantry shows clients: the primary's, as if the client had connected to it directly.
 *
 * <p>From the primary's own greeting Gantry takes the version string (MariaDB's begins with {@code 5.5.5-}, which
 * MariaDB drivers look for), the capabilities Gantry can forward ({@link #FORWARDABLE}), the MariaDB extended
 * capabilities Gantry can forward ({@link #FORWARDABLE_MARIADB}) and the default collation id. Gantry's own are the
 * connection id, the seed, the auth plugin, CLIENT_SSL (offered when Gantry has a TLS certificate, whatever the
 * primary does) and the status flags.
 *
 * <p>Greetings are recorded per server as Gantry sees them: from every backend connection it opens (client
 * sessions' and its own greeting probes at start and when the primary changes). Clients get the greeting of the
 * current primary; while the primary is unknown, or has not greeted Gantry yet, the last primary greeting shown.
 * Thread-safe.
 */
public final class ServerGreetings implements BackendConnection.GreetingObserver {

    /**
     * What Gantry offers clients, and asks of backends when it logs in for them: everything here is forwarded to
     * backends unchanged.
     */
    public static final int OFFERED = CLIENT_LONG_PASSWORD | CLIENT_FOUND_ROWS | CLIENT_LONG_FLAG
            | CLIENT_CONNECT_WITH_DB | CLIENT_LOCAL_FILES | CLIENT_IGNORE_SPACE | CLIENT_PROTOCOL_41
            | CLIENT_INTERACTIVE | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION | CLIENT_MULTI_STATEMENTS
            | CLIENT_MULTI_RESULTS | CLIENT_PS_MULTI_RESULTS | CLIENT_PLUGIN_AUTH | CLIENT_CONNECT_ATTRS
            | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | CLIENT_SESSION_TRACK | CLIENT_DEPRECATE_EOF;

    /** Capabilities taken from the primary: those Gantry handles. */
    static final int FORWARDABLE = OFFERED;

    /** What Gantry's own client authentication needs, offered whatever the primary says. */
    static final int ALWAYS_OFFERED = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH;

    /**
     * MariaDB extended capabilities Gantry offers when the primary does. Only extended metadata: it adds one field to
     * each column definition and nothing else, so forwarded responses stay framed as before. Not progress reports
     * (the response framer lets them pass, but relaying them was never tested), not bulk operations
     * (Gantry does not route COM_STMT_BULK_EXECUTE), not metadata caching (an execute may then omit its column
     * definitions, and Gantry may execute on another server than the one that answered the prepare), not bulk unit
     * results (bulk only).
     */
    static final int FORWARDABLE_MARIADB = MARIADB_CLIENT_EXTENDED_METADATA;

    private static final int UTF8MB4_GENERAL_CI = 45;

    private final Map<String, HandshakeV10> byServer = new ConcurrentHashMap<>();
    private final HandshakeV10 fallback;
    private volatile HandshakeV10 lastShown;
    private volatile HandshakeV10 latestAny;
    private volatile PreparedGreeting prepared;

    /**
     * @param fallbackVersion the version string shown until any server has greeted Gantry
     */
    public ServerGreetings(String fallbackVersion) {
        this.fallback = new HandshakeV10(fallbackVersion, 0, new byte[20], FORWARDABLE, UTF8MB4_GENERAL_CI,
                ServerStatus.SERVER_STATUS_AUTOCOMMIT, 0, "");
    }

    @Override
    public void greeted(UpstreamServer server, HandshakeV10 greeting) {
        byServer.put(server.address(), greeting);
        latestAny = greeting;
    }

    /** True if {@code server} has greeted Gantry at least once. */
    boolean knows(UpstreamServer server) {
        return byServer.containsKey(server.address());
    }

    /**
     * The greeting to mirror now: the primary's latest; else the primary's last mirrored; else (no primary has
     * greeted yet) the latest greeting of any server; else the fallback.
     */
    public HandshakeV10 source(Optional<UpstreamServer> primary) {
        HandshakeV10 latest = primary.map(p -> byServer.get(p.address())).orElse(null);
        if (latest != null) {
            lastShown = latest;
            return latest;
        }
        HandshakeV10 shown = lastShown;
        if (shown != null) {
            return shown;
        }
        HandshakeV10 any = latestAny;
        return any != null ? any : fallback;
    }

    /**
     * The client greeting as a template ({@link GreetingTemplate}): made again only when the greeting it mirrors, the
     * TLS offer or the auth plugin changes, so a login copies bytes instead of building and encoding a greeting.
     */
    public GreetingTemplate templateForClient(Optional<UpstreamServer> primary, boolean tls, String authPlugin) {
        HandshakeV10 source = source(primary);
        PreparedGreeting prepared = this.prepared;
        if (prepared != null && prepared.source() == source && prepared.tls() == tls
                && prepared.authPlugin().equals(authPlugin)) {
            return prepared.template();
        }
        GreetingTemplate template = new GreetingTemplate(mirror(source, 0, new byte[NativePassword.SEED_LENGTH], tls,
                authPlugin));
        this.prepared = new PreparedGreeting(source, tls, authPlugin, template);
        return template;
    }

    /** The last template made, and what it was made from. */
    private record PreparedGreeting(HandshakeV10 source, boolean tls, String authPlugin, GreetingTemplate template) {
    }

    /**
     * A client greeting that mirrors {@code primary}'s: its version string, collation id, the capabilities Gantry can
     * forward and, when the primary is MariaDB (CLIENT_MYSQL clear), the extended capabilities Gantry can forward.
     */
    static HandshakeV10 mirror(HandshakeV10 primary, long connectionId, byte[] seed, boolean tls, String authPlugin) {
        int capabilities = (primary.capabilities() & FORWARDABLE) | ALWAYS_OFFERED | (tls ? CLIENT_SSL : 0);
        int mariaDb = CapabilityFlags.has(capabilities, CLIENT_MYSQL)
                ? 0
                : primary.mariaDbCapabilities() & FORWARDABLE_MARIADB;
        return new HandshakeV10(primary.serverVersion(), connectionId, seed, capabilities, primary.characterSet(),
                ServerStatus.SERVER_STATUS_AUTOCOMMIT, mariaDb, authPlugin);
    }
}
