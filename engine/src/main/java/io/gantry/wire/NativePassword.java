package io.gantry.wire;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Objects;

/**
 * The {@code mysql_native_password} scramble, and the arithmetic that lets a proxy holding only
 * the stored hash check a client and then log in to backends with other seeds.
 *
 * <pre>
 *   stage1     = SHA1(password)
 *   storedHash = SHA1(stage1)                      (mysql.user: '*' + upper-case hex)
 *   reply      = stage1 XOR SHA1(seed + storedHash)
 * </pre>
 *
 * Given a client's {@code reply} to {@code seed} and the account's {@code storedHash}, the
 * proxy recovers {@code stage1 = reply XOR SHA1(seed + storedHash)}; it is genuine if
 * {@code SHA1(stage1) == storedHash}. With {@code stage1} it can answer any other seed
 * ({@link #scrambleFromStage1}) without ever knowing the password.
 *
 * <p>An empty password has an empty stored hash and an empty reply.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_authentication_methods_native_password_authentication.html">Native Authentication</a>
 */
public final class NativePassword {

    /** The plugin's name as it appears in handshake packets. */
    public static final String PLUGIN_NAME = "mysql_native_password";
    /** Length of the seed the server sends, and of every SHA-1 value here. */
    public static final int SEED_LENGTH = 20;

    private NativePassword() {
    }

    /** The reply a client sends for {@code password} and {@code seed}; empty if the password is empty. */
    public static byte[] scramble(byte[] password, byte[] seed) {
        Objects.requireNonNull(seed, "seed");
        if (password.length == 0) {
            return new byte[0];
        }
        return scrambleFromStage1(sha1(password), seed);
    }

    /** {@code SHA1(SHA1(password))}: what mysql.user stores (as hex after '*'); empty for an empty password. */
    public static byte[] storedHash(byte[] password) {
        return password.length == 0 ? new byte[0] : sha1(sha1(password));
    }

    /**
     * Parses a mysql.user {@code authentication_string} such as
     * {@code *2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19}; the empty string is the empty password.
     *
     * @throws IllegalArgumentException if it is neither empty nor '*' and 40 hex digits
     */
    public static byte[] parseStoredHash(String authenticationString) {
        if (authenticationString.isEmpty()) {
            return new byte[0];
        }
        if (authenticationString.length() != 41 || authenticationString.charAt(0) != '*') {
            throw new IllegalArgumentException("a mysql_native_password hash is '*' and 40 hex digits, was "
                    + authenticationString.length() + " characters");
        }
        return HexFormat.of().parseHex(authenticationString, 1, 41);
    }

    /** Formats a stored hash as mysql.user does: '*' and upper-case hex (empty stays empty). */
    public static String formatStoredHash(byte[] storedHash) {
        return storedHash.length == 0 ? "" : "*" + HexFormat.of().formatHex(storedHash).toUpperCase(Locale.ROOT);
    }

    /** {@code reply XOR SHA1(seed + storedHash)}: the client's SHA1(password), if the reply is genuine. */
    public static byte[] recoverStage1(byte[] reply, byte[] seed, byte[] storedHash) {
        if (reply.length != SEED_LENGTH || storedHash.length != SEED_LENGTH) {
            throw new IllegalArgumentException("reply and stored hash must be 20 bytes, were "
                    + reply.length + " and " + storedHash.length);
        }
        return xor(reply, sha1(seed, storedHash));
    }

    /**
     * True if {@code reply} proves knowledge of the password behind {@code storedHash} for
     * {@code seed}. Compares in constant time. An empty stored hash accepts only an empty reply.
     */
    public static boolean verify(byte[] reply, byte[] seed, byte[] storedHash) {
        if (storedHash.length == 0 || reply.length == 0) {
            return storedHash.length == 0 && reply.length == 0;
        }
        if (reply.length != SEED_LENGTH || storedHash.length != SEED_LENGTH) {
            return false;
        }
        return MessageDigest.isEqual(sha1(recoverStage1(reply, seed, storedHash)), storedHash);
    }

    /** The reply for {@code seed} computed from {@code stage1 = SHA1(password)}. */
    public static byte[] scrambleFromStage1(byte[] stage1, byte[] seed) {
        if (stage1.length != SEED_LENGTH) {
            throw new IllegalArgumentException("stage1 must be 20 bytes, was " + stage1.length);
        }
        return xor(stage1, sha1(seed, sha1(stage1)));
    }

    private static byte[] sha1(byte[]... parts) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-1");
            for (byte[] part : parts) {
                digest.update(part);
            }
            return digest.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform provides SHA-1", e);
        }
    }

    static byte[] xor(byte[] a, byte[] b) {
        byte[] out = new byte[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = (byte) (a[i] ^ b[i]);
        }
        return out;
    }
}
