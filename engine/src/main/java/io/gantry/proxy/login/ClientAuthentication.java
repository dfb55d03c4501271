package io.gantry.proxy.login;

import io.gantry.proxy.backend.BackendSecret;
import io.gantry.topology.AccountLookup.AccountEntry;
import io.gantry.wire.AuthMoreData;
import io.gantry.wire.AuthSwitchRequest;
import io.gantry.wire.CachingSha2Password;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.NativePassword;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The authentication exchange with one client, as a small state machine that returns what to send (it never
 * touches a channel or a database). Every client logs in as its own account, which must exist on the primary:
 * <ul>
 * <li>{@code mysql_native_password}: the client's scramble is checked against the account's stored hash (looked up
 *     by the caller when the machine asks for it), and SHA1(password) is recovered from it to answer each backend's
 *     scramble; the password itself is never known.</li>
 * <li>{@code caching_sha2_password}: always a full authentication — the password in clear over TLS, or
 *     RSA-encrypted with Gantry's key — because the backends need the password itself; the primary's own login
 *     then checks it. A client that offers {@code mysql_native_password} for an account that uses
 *     {@code caching_sha2_password} is switched to it.</li>
 * <li>Any other plugin: refused with an error naming the plugin.</li>
 * </ul>
 * The result is a {@link BackendSecret} held only by the session.
 */
public final class ClientAuthentication {

    public enum Outcome {
        /** Send the packets and wait for the client. */
        CONTINUE,
        /** Look up the account's entries and call {@link #onAccounts}. */
        LOOKUP,
        /** The client is in; log in to a backend with {@link Step#secret()} to confirm. */
        ACCEPT,
        /** Refused. */
        DENY
    }

    /**
     * What to do after a step. A denial carries the error for the client and, for the log only, the reason (the
     * client is not told which check failed).
     */
    public record Step(List<byte[]> packets, Outcome outcome, ErrPacket error, String reason, BackendSecret secret) {
        static Step send(byte[] packet) {
            return new Step(List.of(packet), Outcome.CONTINUE, null, "", null);
        }

        static Step lookup() {
            return new Step(List.of(), Outcome.LOOKUP, null, "", null);
        }

        static Step accept(BackendSecret secret, byte[]... before) {
            return new Step(List.of(before), Outcome.ACCEPT, null, "", secret);
        }
    }

    private enum State { START, AWAIT_SWITCH_REPLY, AWAIT_ACCOUNTS, AWAIT_FULL_AUTH, DONE }

    private final byte[] seed;
    private final boolean tls;
    private final GantryRsaKey rsaKey;
    private final String clientHost;
    private final boolean mariaDb;
    private State state = State.START;
    private String plugin = "";
    private String user = "";
    private byte[] nativeReply = new byte[0];

    /** @param mariaDb whether the servers are MariaDB's, whose errors Gantry words as they do */
    public ClientAuthentication(byte[] seed, boolean tls, GantryRsaKey rsaKey, String clientHost, boolean mariaDb) {
        this.seed = seed.clone();
        this.tls = tls;
        this.rsaKey = rsaKey;
        this.clientHost = clientHost;
        this.mariaDb = mariaDb;
    }

    /** The first answer, from the handshake response or COM_CHANGE_USER. */
    public Step onHandshakeResponse(String userName, String pluginName, byte[] authResponse) {
        this.user = userName;
        String requested = pluginName.isEmpty() ? NativePassword.PLUGIN_NAME : pluginName;
        if (requested.equals(CachingSha2Password.PLUGIN_NAME)) {
            plugin = requested;
            return fullAuthenticationOrEmpty(authResponse);
        }
        if (!requested.equals(NativePassword.PLUGIN_NAME)) {
            // An unknown plugin (e.g. client_ed25519): ask for mysql_native_password with the same seed.
            plugin = NativePassword.PLUGIN_NAME;
            state = State.AWAIT_SWITCH_REPLY;
            return Step.send(authSwitch(plugin));
        }
        plugin = requested;
        nativeReply = authResponse.clone();
        state = State.AWAIT_ACCOUNTS;
        return Step.lookup();
    }

    /** A later packet from the client (auth switch reply, public key request, full authentication). */
    public Step onClientPacket(byte[] data) {
        return switch (state) {
            case AWAIT_SWITCH_REPLY -> {
                if (plugin.equals(CachingSha2Password.PLUGIN_NAME)) {
                    yield fullAuthenticationOrEmpty(data);
                }
                nativeReply = data.clone();
                state = State.AWAIT_ACCOUNTS;
                yield Step.lookup();
            }
            case AWAIT_FULL_AUTH -> fullAuthentication(data);
            case START, AWAIT_ACCOUNTS, DONE -> deny("unexpected authentication packet");
        };
    }

    /** The account's entries on the primary, after a {@link Outcome#LOOKUP}. */
    public Step onAccounts(List<AccountEntry> entries) {
        if (entries.isEmpty()) {
            return deny("no such account on the primary");
        }
        NativeMatch match = nativeMatch(entries);
        if (match != null && match.entry().locked()) {
            // Refused here, not by the server's login: a pooled connection of the account would let it in.
            state = State.DONE;
            return new Step(List.of(), Outcome.DENY, accountLocked(), "the account is locked", null);
        }
        if (match != null) {
            return done(match.secret());
        }
        if (entries.stream().noneMatch(ClientAuthentication::isNative)) {
            String other = entries.get(0).plugin();
            if (CachingSha2Password.PLUGIN_NAME.equals(other)) {
                plugin = other;
                state = State.AWAIT_SWITCH_REPLY;
                return Step.send(authSwitch(plugin));
            }
            state = State.DONE;
            return new Step(List.of(), Outcome.DENY, ErrPacket.of(1045, "28000", "Access denied for user '" + user
                    + "'@'" + clientHost + "': the account uses the authentication plugin '" + other + "', which "
                    + "Gantry cannot pass on to the servers; give accounts that connect through Gantry "
                    + "mysql_native_password or caching_sha2_password"), "plugin " + other, null);
        }
        return deny("wrong password");
    }

    /**
     * After a {@link Outcome#LOOKUP}, the login checked on entries Gantry kept from an earlier look-up: accepted when
     * an entry lets the client in that is neither locked nor has a password that expires; otherwise empty, and the
     * exchange waits for {@link #onAccounts} with the server's entries, since the kept ones may be older (a new
     * password, an account unlocked).
     */
    public Optional<Step> acceptKnown(List<AccountEntry> entries) {
        if (state != State.AWAIT_ACCOUNTS) {
            return Optional.empty();
        }
        NativeMatch match = nativeMatch(entries);
        if (match == null || match.entry().locked() || match.entry().passwordExpires()) {
            return Optional.empty();
        }
        return Optional.of(done(match.secret()));
    }

    /** The plugin the exchange ended with, for logs. */
    public String plugin() {
        return plugin;
    }

    /** A {@code mysql_native_password} entry the client's answer fits, and the secret for the backends' logins. */
    private record NativeMatch(AccountEntry entry, BackendSecret secret) {
    }

    /**
     * The entry of the account the client's answer fits: an unlocked one if any (the server picks one entry by the
     * connecting host, which is Gantry's for the backends, and judges the host itself at a new backend login), else
     * a locked one; null when none fits.
     */
    private NativeMatch nativeMatch(List<AccountEntry> entries) {
        NativeMatch locked = null;
        for (AccountEntry entry : entries) {
            BackendSecret secret = isNative(entry) ? secretIfFits(entry) : null;
            if (secret != null && !entry.locked()) {
                return new NativeMatch(entry, secret);
            }
            if (secret != null && locked == null) {
                locked = new NativeMatch(entry, secret);
            }
        }
        return locked;
    }

    /** The backends' secret when the client's answer fits this native entry's stored hash, else null. */
    private BackendSecret secretIfFits(AccountEntry entry) {
        String stored = entry.authenticationString() == null ? "" : entry.authenticationString();
        if (stored.isEmpty()) {
            return nativeReply.length == 0 ? BackendSecret.password(new byte[0]) : null;
        }
        byte[] hash;
        try {
            hash = NativePassword.parseStoredHash(stored);
        } catch (RuntimeException e) {
            return null;
        }
        return nativeReply.length > 0 && NativePassword.verify(nativeReply, seed, hash)
                ? BackendSecret.nativeStage1(NativePassword.recoverStage1(nativeReply, seed, hash)) : null;
    }

    /** The server's own error for a locked account (MariaDB's wording differs from MySQL's). */
    private ErrPacket accountLocked() {
        return mariaDb ? ErrPacket.of(4151, "HY000", "Access denied, this account is locked")
                : ErrPacket.of(3118, "HY000", "Access denied for user '" + user + "'@'" + clientHost
                        + "'. Account is locked.");
    }

    private static boolean isNative(AccountEntry entry) {
        return entry.plugin() == null || entry.plugin().isEmpty()
                || entry.plugin().equals(NativePassword.PLUGIN_NAME);
    }

    private Step fullAuthenticationOrEmpty(byte[] scramble) {
        if (scramble.length == 0) {
            // No password: the primary's login confirms the account really has none.
            return done(BackendSecret.password(new byte[0]));
        }
        state = State.AWAIT_FULL_AUTH;
        return Step.send(moreData(CachingSha2Password.PERFORM_FULL_AUTHENTICATION));
    }

    private Step fullAuthentication(byte[] data) {
        if (tls) {
            return done(BackendSecret.password(stripTrailingNul(data)));
        }
        if (data.length == 1 && data[0] == CachingSha2Password.REQUEST_PUBLIC_KEY) {
            byte[] pem = rsaKey.publicKeyPem().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            return Step.send(encode(new AuthMoreData(pem)));
        }
        try {
            return done(BackendSecret.password(CachingSha2Password.decryptPassword(data, seed, rsaKey.privateKey())));
        } catch (IllegalArgumentException e) {
            return deny("the RSA-encrypted password could not be read");
        }
    }

    private Step done(BackendSecret secret) {
        state = State.DONE;
        nativeReply = new byte[0];
        return Step.accept(secret);
    }

    private Step deny(String why) {
        state = State.DONE;
        return new Step(List.of(), Outcome.DENY, ErrPacket.of(1045, "28000", "Access denied for user '" + user
                + "'@'" + clientHost + "' (using password: YES)"), why, null);
    }

    private byte[] authSwitch(String pluginName) {
        // The seed travels NUL-terminated in an auth switch request.
        ByteBuf out = Unpooled.buffer();
        new AuthSwitchRequest(pluginName, Arrays.copyOf(seed, seed.length + 1)).encode(out);
        return bytes(out);
    }

    private static byte[] moreData(byte status) {
        return encode(new AuthMoreData(new byte[] {status}));
    }

    private static byte[] encode(AuthMoreData packet) {
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
