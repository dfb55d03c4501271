package io.gantry.wire;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;
import javax.crypto.Cipher;

/**
 * The {@code caching_sha2_password} plugin: the fast-path scramble, the one-byte markers of the
 * exchange, and RSA encryption of the password for full authentication without TLS.
 *
 * <pre>
 *   reply = SHA256(password) XOR SHA256(SHA256(SHA256(password)) + seed)
 * </pre>
 *
 * The server answers a reply with {@link AuthMoreData} {@link #FAST_AUTH_SUCCESS} (then OK) if
 * its cache holds {@code SHA256(SHA256(password))}, or {@link #PERFORM_FULL_AUTHENTICATION}. Then
 * the client sends the password with a NUL over TLS, or, in clear text, asks for the server's key
 * with {@link #REQUEST_PUBLIC_KEY} and sends {@code RSA((password + NUL) XOR seed)} with OAEP
 * padding (servers since 8.0.5).
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_caching_sha2_authentication_exchanges.html">caching_sha2_password information</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_packets_protocol_auth_more_data.html">Protocol::AuthMoreData</a>
 */
public final class CachingSha2Password {

    /** The plugin's name as it appears in handshake packets. */
    public static final String PLUGIN_NAME = "caching_sha2_password";
    /** Client to server: "send me your RSA public key". */
    public static final byte REQUEST_PUBLIC_KEY = 0x02;
    /** Server to client (in AuthMoreData): the scramble matched the cache; OK follows. */
    public static final byte FAST_AUTH_SUCCESS = 0x03;
    /** Server to client (in AuthMoreData): send the password itself. */
    public static final byte PERFORM_FULL_AUTHENTICATION = 0x04;
    /** RSA padding used by MySQL 8.0.5 and later for the encrypted password. */
    public static final String RSA_TRANSFORMATION = "RSA/ECB/OAEPWithSHA-1AndMGF1Padding";

    private static final int DIGEST_LENGTH = 32;

    private CachingSha2Password() {
    }

    /** The fast-path reply for {@code password} and {@code seed}; empty if the password is empty. */
    public static byte[] scramble(byte[] password, byte[] seed) {
        Objects.requireNonNull(seed, "seed");
        if (password.length == 0) {
            return new byte[0];
        }
        byte[] stage1 = sha256(password);
        return NativePassword.xor(stage1, sha256(sha256(stage1), seed));
    }

    /** {@code SHA256(SHA256(password))}: what the server keeps in its cache for fast auth. */
    public static byte[] cacheEntry(byte[] password) {
        return sha256(sha256(password));
    }

    /**
     * Checks a fast-path reply against a cache entry ({@link #cacheEntry}), in constant time.
     * An empty reply never matches here: the empty password needs no fast auth.
     */
    public static boolean verify(byte[] reply, byte[] seed, byte[] cacheEntry) {
        if (reply.length != DIGEST_LENGTH || cacheEntry.length != DIGEST_LENGTH) {
            return false;
        }
        byte[] stage1 = NativePassword.xor(reply, sha256(cacheEntry, seed));
        return MessageDigest.isEqual(sha256(stage1), cacheEntry);
    }

    /** {@code (password + NUL) XOR seed}, the seed repeated as needed: the RSA plaintext. */
    public static byte[] xorWithSeed(byte[] password, byte[] seed) {
        if (seed.length == 0) {
            throw new IllegalArgumentException("seed must not be empty");
        }
        byte[] withNul = Arrays.copyOf(password, password.length + 1);
        for (int i = 0; i < withNul.length; i++) {
            withNul[i] ^= seed[i % seed.length];
        }
        return withNul;
    }

    /**
     * Encrypts the password for full authentication over a clear-text connection.
     *
     * @throws IllegalArgumentException if the key is too small for the password
     */
    public static byte[] encryptPassword(byte[] password, byte[] seed, RSAPublicKey serverKey) {
        try {
            Cipher cipher = Cipher.getInstance(RSA_TRANSFORMATION);
            cipher.init(Cipher.ENCRYPT_MODE, serverKey);
            return cipher.doFinal(xorWithSeed(password, seed));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot RSA-encrypt the password with a "
                    + serverKey.getModulus().bitLength() + "-bit key: " + e.getMessage(), e);
        }
    }

    /**
     * The server side of {@link #encryptPassword}: recovers the password (without its NUL) from a
     * client's encrypted reply, for a proxy that offers its own RSA key.
     *
     * @throws IllegalArgumentException if the data does not decrypt with {@code privateKey}
     */
    public static byte[] decryptPassword(byte[] encrypted, byte[] seed, RSAPrivateKey privateKey) {
        if (seed.length == 0) {
            throw new IllegalArgumentException("seed must not be empty");
        }
        byte[] plain;
        try {
            Cipher cipher = Cipher.getInstance(RSA_TRANSFORMATION);
            cipher.init(Cipher.DECRYPT_MODE, privateKey);
            plain = cipher.doFinal(encrypted);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("encrypted password does not decrypt with the proxy's RSA key: "
                    + e.getMessage(), e);
        }
        for (int i = 0; i < plain.length; i++) {
            plain[i] ^= seed[i % seed.length];
        }
        int length = plain.length;
        if (length > 0 && plain[length - 1] == 0) {
            length--;
        }
        return Arrays.copyOf(plain, length);
    }

    /**
     * Parses the PEM public key a server sends ({@code -----BEGIN PUBLIC KEY-----}, X.509
     * SubjectPublicKeyInfo), as found in its {@link AuthMoreData}.
     *
     * @throws IllegalArgumentException if the text is not such a key
     */
    public static RSAPublicKey parsePublicKey(String pem) {
        String base64 = pem.replace("-----BEGIN PUBLIC KEY-----", "")
                .replace("-----END PUBLIC KEY-----", "")
                .replaceAll("\\s", "");
        try {
            byte[] der = Base64.getDecoder().decode(base64);
            return (RSAPublicKey) KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(der));
        } catch (IllegalArgumentException | GeneralSecurityException | ClassCastException e) {
            throw new IllegalArgumentException("not a PEM RSA public key (-----BEGIN PUBLIC KEY-----): "
                    + e.getMessage(), e);
        }
    }

    /** Parses the PEM public key from the raw bytes of an {@link AuthMoreData}. */
    public static RSAPublicKey parsePublicKey(byte[] pem) {
        return parsePublicKey(new String(pem, StandardCharsets.US_ASCII));
    }

    /** Formats a public key as PEM, as a server sends it. */
    public static String formatPublicKey(RSAPublicKey key) {
        String base64 = Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(key.getEncoded());
        return "-----BEGIN PUBLIC KEY-----\n" + base64 + "\n-----END PUBLIC KEY-----\n";
    }

    private static byte[] sha256(byte[]... parts) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            for (byte[] part : parts) {
                digest.update(part);
            }
            return digest.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform provides SHA-256", e);
        }
    }
}
