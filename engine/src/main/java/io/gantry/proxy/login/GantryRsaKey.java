package io.gantry.proxy.login;

import io.gantry.wire.CachingSha2Password;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;

/**
 * The RSA key pair clients use to send a password for {@code caching_sha2_password} full authentication over a
 * connection without TLS. Made fresh at every start and kept only in memory, as a server does without a key file.
 */
public final class GantryRsaKey {

    private final RSAPrivateKey privateKey;
    private final String publicKeyPem;

    private GantryRsaKey(KeyPair pair) {
        this.privateKey = (RSAPrivateKey) pair.getPrivate();
        this.publicKeyPem = CachingSha2Password.formatPublicKey((RSAPublicKey) pair.getPublic());
    }

    public static GantryRsaKey generate() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            return new GantryRsaKey(generator.generateKeyPair());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM cannot make RSA keys", e);
        }
    }

    RSAPrivateKey privateKey() {
        return privateKey;
    }

    String publicKeyPem() {
        return publicKeyPem;
    }
}
