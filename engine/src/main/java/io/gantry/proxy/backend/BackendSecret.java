package io.gantry.proxy.backend;

import io.gantry.wire.NativePassword;
import java.util.Arrays;
import java.util.Optional;

/**
 * What a client session holds to log in to backends as the client's own account, kept only in the session's
 * memory and cleared when it ends: either the password itself (from a {@code caching_sha2_password} full
 * authentication), or, for {@code mysql_native_password}, SHA1(password) recovered from the client's scramble and
 * the account's stored hash — enough to answer any server's scramble without ever knowing the password.
 */
public sealed interface BackendSecret {

    /** The answer to a server's {@code mysql_native_password} scramble. */
    byte[] nativeScramble(byte[] seed);

    /** The password in clear, when the client sent it (needed for {@code caching_sha2_password} backends). */
    Optional<byte[]> plaintext();

    /** True for an account without a password. */
    boolean isEmpty();

    /** Overwrites the secret's bytes (the session that held it ended). */
    void clear();

    /** Whether {@link #clear} was called: the secret answers nothing any more. */
    boolean isCleared();

    /**
     * A digest of the secret (SHA-256, over its kind and bytes): what tells a pooled connection logged in with this
     * secret from one logged in with another, without keeping the secret itself beside the pool.
     */
    byte[] digest();

    private static byte[] digest(char kind, byte[] bytes) {
        try {
            java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
            sha.update((byte) kind);
            return sha.digest(bytes);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /**
     * The secret by value, for a session that moves to another Gantry process over the owner-only hand-over socket
     * ({@link #of(Kept)} makes it again there).
     *
     * @param plaintext whether {@code bytes} is the password itself, else SHA1(password)
     */
    record Kept(boolean plaintext, byte[] bytes) {
    }

    /** A copy of the secret by value ({@link Kept}). */
    Kept kept();

    /** The secret {@link #kept} in another process. */
    static BackendSecret of(Kept kept) {
        return kept.plaintext() ? password(kept.bytes()) : nativeStage1(kept.bytes());
    }

    static BackendSecret password(byte[] password) {
        return new Password(password.clone());
    }

    static BackendSecret nativeStage1(byte[] stage1) {
        return new NativeStage1(stage1.clone());
    }

    /** A password in clear. */
    final class Password implements BackendSecret {
        private final byte[] bytes;
        private volatile boolean cleared;

        private Password(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public byte[] nativeScramble(byte[] seed) {
            return bytes.length == 0 ? new byte[0] : NativePassword.scramble(bytes, seed);
        }

        @Override
        public Optional<byte[]> plaintext() {
            return Optional.of(bytes.clone());
        }

        @Override
        public boolean isEmpty() {
            return bytes.length == 0;
        }

        @Override
        public void clear() {
            Arrays.fill(bytes, (byte) 0);
            cleared = true;
        }

        @Override
        public boolean isCleared() {
            return cleared;
        }

        @Override
        public byte[] digest() {
            return BackendSecret.digest('P', bytes);
        }

        @Override
        public Kept kept() {
            return new Kept(true, bytes.clone());
        }

        @Override
        public String toString() {
            return "BackendSecret.Password[redacted]";
        }
    }

    /** SHA1(password), from a verified {@code mysql_native_password} reply. */
    final class NativeStage1 implements BackendSecret {
        private final byte[] stage1;
        private volatile boolean cleared;

        private NativeStage1(byte[] stage1) {
            this.stage1 = stage1;
        }

        @Override
        public byte[] nativeScramble(byte[] seed) {
            return NativePassword.scrambleFromStage1(stage1, seed);
        }

        @Override
        public Optional<byte[]> plaintext() {
            return Optional.empty();
        }

        @Override
        public boolean isEmpty() {
            return false;
        }

        @Override
        public void clear() {
            Arrays.fill(stage1, (byte) 0);
            cleared = true;
        }

        @Override
        public boolean isCleared() {
            return cleared;
        }

        @Override
        public byte[] digest() {
            return BackendSecret.digest('S', stage1);
        }

        @Override
        public Kept kept() {
            return new Kept(false, stage1.clone());
        }

        @Override
        public String toString() {
            return "BackendSecret.NativeStage1[redacted]";
        }
    }
}
