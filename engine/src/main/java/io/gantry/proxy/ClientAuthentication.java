package io.gantry.proxy;

import io.gantry.wire.AuthMoreData;
import io.gantry.wire.AuthSwitchRequest;
import io.gantry.wire.CachingSha2Password;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.NativePassword;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;

/**
 * The authentication exchange with one client, as a small state machine that returns what to send (it never
 * touches a channel). Supports {@code mysql_native_password} and {@code caching_sha2_password}: the fast path when
 * the account is in the cache, otherwise full authentication — the password in clear over TLS, or RSA-encrypted
 * with Gantry's key without TLS. As with MySQL, the cache starts empty, and an account enters it after a successful
 * full authentication.
 *
 * <p>First stage of client identity: the only account accepted is Gantry's service account, whose password
 * Gantry knows; so no client gains privileges it would not have directly.
 */
final class ClientAuthentication {

    /**
     * What to do after a step: the packets to send (payloads, in order) and whether the exchange is over; a denial
     * carries the error for the client and, for the log only, the reason (the client is not told which check
     * failed).
     */
    record Step(List<byte[]> packets, Outcome outcome, ErrPacket error, String reason) {
        static Step send(byte[] packet) {
            return new Step(List.of(packet), Outcome.CONTINUE, null, "");
        }

        static Step accept(byte[]... before) {
            return new Step(List.of(before), Outcome.ACCEPT, null, "");
        }
    }

    enum Outcome { CONTINUE, ACCEPT, DENY }

    private enum State { START, AWAIT_SWITCH_REPLY, AWAIT_FULL_AUTH, DONE }

    private final String serviceUser;
    private final byte[] servicePassword;
    private final byte[] seed;
    private final boolean tls;
    private final GantryRsaKey rsaKey;
    private final CachingSha2Cache cache;
    private final String clientHost;
    private State state = State.START;
    private String plugin = "";
    private String user = "";

    ClientAuthentication(String serviceUser, String servicePassword, byte[] seed, boolean tls, GantryRsaKey rsaKey,
                         CachingSha2Cache cache, String clientHost) {
        this.serviceUser = serviceUser;
        this.servicePassword = servicePassword.getBytes(StandardCharsets.UTF_8);
        this.seed = seed.clone();
        this.tls = tls;
        this.rsaKey = rsaKey;
        this.cache = cache;
        this.clientHost = clientHost;
    }

    /** The first answer, from the handshake response. */
    Step onHandshakeResponse(String userName, String pluginName, byte[] authResponse) {
        this.user = userName;
        String requested = pluginName.isEmpty() ? NativePassword.PLUGIN_NAME : pluginName;
        if (!requested.equals(NativePassword.PLUGIN_NAME) && !requested.equals(CachingSha2Password.PLUGIN_NAME)) {
            // An unknown plugin (e.g. client_ed25519): ask for mysql_native_password with the same seed.
            plugin = NativePassword.PLUGIN_NAME;
            state = State.AWAIT_SWITCH_REPLY;
            return Step.send(authSwitch(plugin));
        }
        plugin = requested;
        return verify(authResponse);
    }

    /** A later packet from the client (auth switch reply, public key request, full authentication). */
    Step onClientPacket(byte[] data) {
        return switch (state) {
            case AWAIT_SWITCH_REPLY -> verify(data);
            case AWAIT_FULL_AUTH -> fullAuthentication(data);
            case START, DONE -> deny("unexpected authentication packet");
        };
    }

    /** The plugin the exchange ended with, for logs. */
    String plugin() {
        return plugin;
    }

    private Step verify(byte[] reply) {
        if (!user.equals(serviceUser)) {
            return deny("only the service account may log in through Gantry for now");
        }
        if (plugin.equals(NativePassword.PLUGIN_NAME)) {
            byte[] expected = servicePassword.length == 0 ? new byte[0] : NativePassword.scramble(servicePassword, seed);
            return MessageDigest.isEqual(expected, reply) ? done() : deny("wrong password");
        }
        // caching_sha2_password: an empty reply means an empty password; otherwise the fast path needs the cache.
        if (reply.length == 0) {
            return servicePassword.length == 0 ? done() : deny("wrong password");
        }
        if (cache.contains(user)) {
            byte[] expected = CachingSha2Password.scramble(servicePassword, seed);
            if (MessageDigest.isEqual(expected, reply)) {
                return done(moreData(CachingSha2Password.FAST_AUTH_SUCCESS));
            }
            return deny("wrong password");
        }
        state = State.AWAIT_FULL_AUTH;
        return Step.send(moreData(CachingSha2Password.PERFORM_FULL_AUTHENTICATION));
    }

    private Step fullAuthentication(byte[] data) {
        byte[] password;
        if (tls) {
            password = stripTrailingNul(data);
        } else if (data.length == 1 && data[0] == CachingSha2Password.REQUEST_PUBLIC_KEY) {
            byte[] pem = rsaKey.publicKeyPem().getBytes(StandardCharsets.US_ASCII);
            return Step.send(encode(new AuthMoreData(pem)));
        } else {
            try {
                password = CachingSha2Password.decryptPassword(data, seed, rsaKey.privateKey());
            } catch (IllegalArgumentException e) {
                return deny("the RSA-encrypted password could not be read");
            }
        }
        if (!MessageDigest.isEqual(password, servicePassword)) {
            return deny("wrong password");
        }
        cache.add(user);
        return done();
    }

    private Step done(byte[]... before) {
        state = State.DONE;
        return Step.accept(before);
    }

    private Step deny(String why) {
        state = State.DONE;
        return new Step(List.of(), Outcome.DENY, ErrPacket.of(1045, "28000", "Access denied for user '" + user
                + "'@'" + clientHost + "' (using password: YES)"), why);
    }

    private byte[] authSwitch(String pluginName) {
        // The seed travels NUL-terminated in an auth switch request.
        return encode(new AuthSwitchRequest(pluginName, Arrays.copyOf(seed, seed.length + 1)));
    }

    private static byte[] moreData(byte status) {
        return encode(new AuthMoreData(new byte[] {status}));
    }

    private static byte[] encode(AuthMoreData packet) {
        ByteBuf out = Unpooled.buffer();
        packet.encode(out);
        return bytes(out);
    }

    private static byte[] encode(AuthSwitchRequest packet) {
        ByteBuf out = Unpooled.buffer();
        packet.encode(out);
        return bytes(out);
    }

    private static byte[] bytes(ByteBuf buffer) {
        byte[] bytes = new byte[buffer.readableBytes()];
        buffer.readBytes(bytes);
        return bytes;
    }

    private static byte[] stripTrailingNul(byte[] data) {
        int length = data.length;
        while (length > 0 && data[length - 1] == 0) {
            length--;
        }
        return Arrays.copyOf(data, length);
    }
}
