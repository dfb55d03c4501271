package io.gantry.proxy.backend;

import static io.gantry.wire.CapabilityFlags.CLIENT_COMPRESS;
import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_ATTRS;
import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_WITH_DB;
import static io.gantry.wire.CapabilityFlags.CLIENT_DEPRECATE_EOF;
import static io.gantry.wire.CapabilityFlags.CLIENT_MULTI_RESULTS;
import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;
import static io.gantry.wire.CapabilityFlags.CLIENT_OPTIONAL_RESULTSET_METADATA;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_QUERY_ATTRIBUTES;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static io.gantry.wire.CapabilityFlags.CLIENT_SESSION_TRACK;
import static io.gantry.wire.CapabilityFlags.CLIENT_SSL;
import static io.gantry.wire.CapabilityFlags.CLIENT_ZSTD_COMPRESSION_ALGORITHM;
import static io.gantry.wire.CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA;

import io.gantry.proxy.transport.ChannelBuffers;
import io.gantry.topology.ServerTls;
import io.gantry.topology.TlsTrust;
import io.gantry.topology.UpstreamServer;
import io.gantry.wire.AuthMoreData;
import io.gantry.wire.AuthSwitchRequest;
import io.gantry.wire.CachingSha2Password;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.HandshakeResponse41;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.NativePassword;
import io.gantry.wire.SslRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.ssl.SslHandler;
import java.security.interfaces.RSAPublicKey;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The login of a backend connection as the client's account, as a conversation without a channel (as
 * {@code ClientAuthentication} is for the client side): each packet from the server goes in, and a {@link Step} says
 * what to send next, whether to start TLS, or how the login ended. {@link BackendConnection} carries the steps out.
 *
 * <p>TLS follows the server URL's {@link ServerTls}: after the greeting, when TLS is wanted and the server offers
 * it, an SSLRequest, the TLS handshake, then the HandshakeResponse41 encrypted with the next sequence id; a server
 * without TLS is refused when the mode requires it. {@code caching_sha2_password} full authentication sends the
 * password as is over TLS, and RSA-encrypted with the server's key without TLS only when the URL allows asking for
 * that key ({@code get-server-public-key=true}).
 */
public final class BackendAuthentication {

    /** What the connection does next. */
    public sealed interface Step {
        /** Send this packet, then wait for the server's next one. */
        record Send(int sequenceId, byte[] payload) implements Step {
        }

        /** Send this SSLRequest in plain text, run the TLS handshake with {@code handler}, then {@link #afterTls}. */
        record StartTls(int sequenceId, byte[] sslRequest, SslHandler handler) implements Step {
        }

        /** Nothing to send: the server's next packet follows (the OK after a fast authentication). */
        record Wait() implements Step {
        }

        /** The server accepted the login; the connection is ready for commands. */
        record LoggedIn() implements Step {
        }

        /** The login failed, for this reason. */
        record Failed(BackendFailure failure) implements Step {
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(BackendConnection.class);
    /** Servers already reported as lacking extended metadata: said once per server, not per connection. */
    private static final Set<String> WITHOUT_EXTENDED_METADATA = ConcurrentHashMap.newKeySet();

    /**
     * Capabilities that change what a client sees on the wire but that the proxy does not support on the path
     * client-to-backend: never asked of a backend.
     */
    private static final int NEVER_TO_BACKEND = CLIENT_SSL | CLIENT_COMPRESS | CLIENT_ZSTD_COMPRESSION_ALGORITHM
            | CLIENT_OPTIONAL_RESULTSET_METADATA | CLIENT_QUERY_ATTRIBUTES;

    /**
     * MariaDB extended capabilities asked of a backend when the client negotiated them: only extended metadata (see
     * {@code ServerGreetings#FORWARDABLE_MARIADB}).
     */
    private static final int MARIADB_TO_BACKEND = MARIADB_CLIENT_EXTENDED_METADATA;

    /** Capabilities whose absence on the backend would make its responses differ from what the client expects. */
    private static final int MUST_MATCH = CLIENT_PROTOCOL_41 | CLIENT_DEPRECATE_EOF | CLIENT_SESSION_TRACK
            | CLIENT_MULTI_RESULTS;

    private static final Step WAIT = new Step.Wait();
    private static final Step LOGGED_IN = new Step.LoggedIn();

    private final UpstreamServer server;
    private final String address;
    private final BackendLogin login;
    private HandshakeV10 greeting;
    private int capabilities;
    private int mariaDbCapabilities;
    private boolean addExtendedMetadata;
    private byte[] seed;
    private String authPlugin = "";
    /** The plugin the handshake response answers with, chosen at the greeting. */
    private String responsePlugin;
    private int nextSequenceId;
    private boolean encrypted;

    BackendAuthentication(UpstreamServer server, BackendLogin login) {
        this.server = server;
        this.address = server.address();
        this.login = login;
    }

    /** The server's greeting, once it came (null before, or when it sent an error instead). */
    public HandshakeV10 greeting() {
        return greeting;
    }

    /** The capabilities in effect on the connection. */
    int capabilities() {
        return capabilities;
    }

    /** The MariaDB extended capabilities in effect on the connection (0 with MySQL). */
    int mariaDbCapabilities() {
        return mariaDbCapabilities;
    }

    /**
     * The client negotiated extended metadata but this backend does not offer it: its column definitions get the
     * empty extended-metadata field the client expects (its JSON columns then look as they would on a server
     * without extended metadata: plain text).
     */
    boolean addExtendedMetadata() {
        return addExtendedMetadata;
    }

    /** Whether the login (and everything after it) runs over TLS. */
    public boolean encrypted() {
        return encrypted;
    }

    /** The server's first packet: its greeting, or an error sent instead ("Too many connections", "Host blocked"). */
    public Step onGreeting(ByteBuf payload, int sequenceId) {
        if (payload.isReadable() && (payload.getByte(payload.readerIndex()) & 0xFF) == ErrPacket.HEADER) {
            return new Step.Failed(new BackendFailure(address, ErrPacket.decode(payload)));
        }
        greeting = HandshakeV10.decode(payload);
        // Session tracking is asked for whatever the client negotiated: Gantry reads the session's own GTIDs from it
        // (SessionTracking), and shows the client OK packets in the form it negotiated.
        int wanted = (login.capabilities() | CLIENT_SESSION_TRACK) & ~NEVER_TO_BACKEND;
        int missing = login.capabilities() & ~NEVER_TO_BACKEND & MUST_MATCH & ~greeting.capabilities();
        if (missing != 0) {
            return failed(address + " lacks protocol capabilities the client negotiated (0x"
                    + Integer.toHexString(missing) + "); it is too old for Gantry");
        }
        capabilities = (wanted & greeting.capabilities()) | CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION
                | CLIENT_PLUGIN_AUTH;
        if (login.database().isEmpty()) {
            capabilities &= ~CLIENT_CONNECT_WITH_DB;
        } else {
            capabilities |= CLIENT_CONNECT_WITH_DB;
        }
        capabilities &= ~CLIENT_CONNECT_ATTRS;
        // The extended word is sent only with CLIENT_MYSQL clear, i.e. to a MariaDB server that cleared it too.
        mariaDbCapabilities = CapabilityFlags.has(capabilities, CLIENT_MYSQL)
                ? 0
                : login.mariaDbCapabilities() & MARIADB_TO_BACKEND & greeting.mariaDbCapabilities();
        addExtendedMetadata = CapabilityFlags.has(login.mariaDbCapabilities(), MARIADB_CLIENT_EXTENDED_METADATA)
                && !CapabilityFlags.has(mariaDbCapabilities, MARIADB_CLIENT_EXTENDED_METADATA);
        if (addExtendedMetadata && WITHOUT_EXTENDED_METADATA.add(address)) {
            LOG.atWarn().addKeyValue("server", address)
                    .log("backend {}: no extended column metadata (MariaDB 10.5+ only) though the client negotiated "
                            + "it; its column definitions are forwarded with an empty extended-metadata field", address);
        }
        seed = greeting.authPluginData();
        authPlugin = greeting.authPluginName().isEmpty() ? NativePassword.PLUGIN_NAME : greeting.authPluginName();
        responsePlugin = supported(authPlugin) ? authPlugin : NativePassword.PLUGIN_NAME;
        if (responsePlugin.equals(CachingSha2Password.PLUGIN_NAME) && login.secret().plaintext().isEmpty()) {
            // Without the password itself only a native scramble can be made; a server whose account needs
            // caching_sha2_password will ask for it with an auth switch, answered below with a clear error.
            responsePlugin = NativePassword.PLUGIN_NAME;
        }
        ServerTls tls = server.url().tls();
        boolean offered = CapabilityFlags.has(greeting.capabilities(), CLIENT_SSL);
        if (tls.mode().required() && !offered) {
            return failed(address + " does not offer TLS, but its URL asks for ssl-mode=" + tls.mode()
                    + "; turn TLS on at the server or change the URL");
        }
        nextSequenceId = sequenceId + 1;
        return tls.mode().attempts() && offered ? startTls(tls) : handshakeResponse();
    }

    /**
     * SSLRequest, then the TLS handshake; the HandshakeResponse41 follows over TLS with the next sequence id (see
     * {@link #afterTls}).
     */
    private Step startTls(ServerTls tls) {
        SslHandler handler;
        try {
            handler = TlsTrust.backendHandler(tls, server.url().host(), server.url().port(), ChannelBuffers.ALLOCATOR);
        } catch (TlsTrust.TlsConfigurationException e) {
            return new Step.Failed(new BackendFailure(address, "TLS to " + address + ": " + e.getMessage(), e));
        }
        capabilities |= CLIENT_SSL;
        ByteBuf request = Unpooled.buffer(SslRequest.PAYLOAD_LENGTH);
        new SslRequest(capabilities, 1L << 30, login.collationId(), mariaDbCapabilities).encode(request);
        int sequenceId = nextSequenceId++;
        return new Step.StartTls(sequenceId, bytes(request), handler);
    }

    /** The TLS handshake succeeded: the handshake response follows, encrypted. */
    public Step afterTls() {
        encrypted = true;
        return handshakeResponse();
    }

    private Step handshakeResponse() {
        HandshakeResponse41 response = new HandshakeResponse41(capabilities, 1L << 30, login.collationId(),
                mariaDbCapabilities, login.user(), authResponse(responsePlugin, trimSeed(seed)), login.database(),
                responsePlugin, Map.of(), 0);
        ByteBuf out = Unpooled.buffer();
        response.encode(out);
        return new Step.Send(nextSequenceId, bytes(out));
    }

    /** A packet of the authentication exchange after the handshake response. */
    public Step onPacket(ByteBuf payload, int sequenceId) {
        int header = payload.getByte(payload.readerIndex()) & 0xFF;
        switch (header) {
            case 0x00 -> {
                return LOGGED_IN;
            }
            case ErrPacket.HEADER -> {
                return new Step.Failed(new BackendFailure(address, ErrPacket.decode(payload)));
            }
            case AuthSwitchRequest.HEADER -> {
                AuthSwitchRequest request = AuthSwitchRequest.decode(payload);
                if (!supported(request.pluginName())) {
                    return failed(address + " asks for the authentication plugin '" + request.pluginName()
                            + "', which Gantry does not support");
                }
                if (request.pluginName().equals(CachingSha2Password.PLUGIN_NAME)
                        && login.secret().plaintext().isEmpty() && !login.secret().isEmpty()) {
                    return new Step.Failed(new BackendFailure(address, ErrPacket.of(1045, "28000", "the account '"
                            + login.user() + "' uses caching_sha2_password on " + address + ", but its client "
                            + "logged in to Gantry with mysql_native_password, which does not reveal the password "
                            + "Gantry needs for it; connect with caching_sha2_password")));
                }
                authPlugin = request.pluginName();
                seed = request.seed();
                return new Step.Send(sequenceId + 1, authResponse(authPlugin, trimSeed(seed)));
            }
            case AuthMoreData.HEADER -> {
                return onAuthMoreData(AuthMoreData.decode(payload), sequenceId);
            }
            default -> {
                return failed("unexpected packet 0x" + Integer.toHexString(header) + " from " + address
                        + " during login");
            }
        }
    }

    private Step onAuthMoreData(AuthMoreData more, int sequenceId) {
        if (!CachingSha2Password.PLUGIN_NAME.equals(authPlugin)) {
            return failed("unexpected auth-more-data from " + address + " for plugin " + authPlugin);
        }
        if (more.isFastAuthSuccess()) {
            return WAIT; // the OK follows
        }
        if (more.isPerformFullAuthentication()) {
            if (encrypted) {
                // Over TLS the password goes as is, NUL-terminated, as every MySQL client sends it.
                byte[] password = login.secret().plaintext().orElseThrow();
                byte[] data = Arrays.copyOf(password, password.length + 1);
                Arrays.fill(password, (byte) 0);
                return new Step.Send(sequenceId + 1, data);
            }
            if (!server.url().tls().getServerPublicKey()) {
                // Without TLS nothing proves that a key the server sends is its own: a man in the middle could
                // hand out its own key and read the password. Only the URL can allow the risk.
                return new Step.Failed(new BackendFailure(address, ErrPacket.of(1045, "28000", address + " asks "
                        + "for a caching_sha2_password full authentication of '" + login.user() + "' on a "
                        + "connection without TLS; Gantry would have to ask the server for its RSA public key, "
                        + "which the server's URL does not allow (use TLS: ssl-mode=REQUIRED or stricter, or "
                        + "accept the risk with get-server-public-key=true)")));
            }
            // Without TLS the password travels RSA-encrypted with the server's public key; ask for it.
            return new Step.Send(sequenceId + 1, new byte[] {CachingSha2Password.REQUEST_PUBLIC_KEY});
        }
        RSAPublicKey key = CachingSha2Password.parsePublicKey(more.data());
        return new Step.Send(sequenceId + 1, CachingSha2Password.encryptPassword(
                login.secret().plaintext().orElseThrow(), trimSeed(seed), key));
    }

    private Step failed(String message) {
        return new Step.Failed(new BackendFailure(address, message, null));
    }

    private byte[] authResponse(String plugin, byte[] scrambleSeed) {
        if (login.secret().isEmpty()) {
            return new byte[0];
        }
        return CachingSha2Password.PLUGIN_NAME.equals(plugin)
                ? CachingSha2Password.scramble(login.secret().plaintext().orElseThrow(), scrambleSeed)
                : login.secret().nativeScramble(scrambleSeed);
    }

    private static boolean supported(String plugin) {
        return NativePassword.PLUGIN_NAME.equals(plugin) || CachingSha2Password.PLUGIN_NAME.equals(plugin);
    }

    /** Servers send the 20-byte seed followed by a NUL in auth-switch and greeting; scrambles use 20 bytes. */
    private static byte[] trimSeed(byte[] raw) {
        return raw.length > 20 ? Arrays.copyOf(raw, 20) : raw;
    }

    private static byte[] bytes(ByteBuf buffer) {
        byte[] bytes = new byte[buffer.readableBytes()];
        buffer.readBytes(bytes);
        return bytes;
    }
}
