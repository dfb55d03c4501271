package io.gantry.wire;

import static io.gantry.wire.NativePasswordTest.concat;
import static io.gantry.wire.NativePasswordTest.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mysql.cj.protocol.ExportControlled;
import com.mysql.cj.protocol.Security;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import javax.crypto.Cipher;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class CachingSha2PasswordTest {

    private static final byte[] SEED = "ABCDEFGHIJKLMNOPQRST".getBytes(StandardCharsets.US_ASCII);
    private static KeyPair keys;

    @BeforeAll
    static void generateKeys() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        keys = generator.generateKeyPair();
    }

    @Test
    void markersAndNamesMatchTheProtocol() {
        assertThat(CachingSha2Password.REQUEST_PUBLIC_KEY).isEqualTo((byte) 0x02);
        assertThat(CachingSha2Password.FAST_AUTH_SUCCESS).isEqualTo((byte) 0x03);
        assertThat(CachingSha2Password.PERFORM_FULL_AUTHENTICATION).isEqualTo((byte) 0x04);
        assertThat(CachingSha2Password.PLUGIN_NAME).isEqualTo("caching_sha2_password");
    }

    @Test
    void scrambleFollowsTheFormula() throws Exception {
        byte[] password = utf8("pässword-123");
        MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
        byte[] stage1 = sha256.digest(password);
        byte[] stage2 = sha256.digest(stage1);
        byte[] mask = sha256.digest(concat(stage2, SEED));
        byte[] expected = new byte[32];
        for (int i = 0; i < 32; i++) {
            expected[i] = (byte) (stage1[i] ^ mask[i]);
        }
        assertThat(CachingSha2Password.scramble(password, SEED)).isEqualTo(expected);
        assertThat(CachingSha2Password.cacheEntry(password)).isEqualTo(stage2);
    }

    @Test
    void scrambleAgreesWithConnectorJ() throws Exception {
        byte[] password = utf8("correct horse battery staple");
        assertThat(CachingSha2Password.scramble(password, SEED)).isEqualTo(Security.scrambleCachingSha2(password, SEED));
        assertThat(CachingSha2Password.scramble(new byte[0], SEED)).isEmpty();
    }

    @Test
    void fastAuthReplyIsVerifiedAgainstTheCacheEntry() {
        byte[] entry = CachingSha2Password.cacheEntry(utf8("right"));
        assertThat(CachingSha2Password.verify(CachingSha2Password.scramble(utf8("right"), SEED), SEED, entry)).isTrue();
        assertThat(CachingSha2Password.verify(CachingSha2Password.scramble(utf8("wrong"), SEED), SEED, entry)).isFalse();
        assertThat(CachingSha2Password.verify(new byte[0], SEED, entry)).isFalse();
    }

    @Test
    void plaintextForRsaIsPasswordWithNulXoredWithTheRepeatedSeed() {
        byte[] password = utf8("a-password-longer-than-the-twenty-byte-seed");
        byte[] xored = CachingSha2Password.xorWithSeed(password, SEED);
        assertThat(xored).hasSize(password.length + 1);
        for (int i = 0; i < xored.length; i++) {
            byte plain = i < password.length ? password[i] : 0;
            assertThat(xored[i]).isEqualTo((byte) (plain ^ SEED[i % SEED.length]));
        }
    }

    @Test
    void encryptedPasswordDecryptsWithAnIndependentOaepCipher() throws Exception {
        RSAPublicKey publicKey = CachingSha2Password.parsePublicKey(
                CachingSha2Password.formatPublicKey((RSAPublicKey) keys.getPublic()));
        assertThat(publicKey).isEqualTo(keys.getPublic());
        byte[] password = utf8("full-auth-secret");
        byte[] encrypted = CachingSha2Password.encryptPassword(password, SEED, publicKey);
        assertThat(encrypted).hasSize(256);

        Cipher cipher = Cipher.getInstance("RSA/ECB/OAEPWithSHA-1AndMGF1Padding");
        cipher.init(Cipher.DECRYPT_MODE, keys.getPrivate());
        assertThat(cipher.doFinal(encrypted)).isEqualTo(CachingSha2Password.xorWithSeed(password, SEED));
        assertThat(CachingSha2Password.decryptPassword(encrypted, SEED, (RSAPrivateKey) keys.getPrivate()))
                .isEqualTo(password);
    }

    @Test
    void proxyDecryptsWhatConnectorJEncrypts() throws Exception {
        byte[] password = utf8("from-a-real-driver");
        byte[] encrypted = ExportControlled.encryptWithRSAPublicKey(CachingSha2Password.xorWithSeed(password, SEED),
                ExportControlled.decodeRSAPublicKey(CachingSha2Password.formatPublicKey((RSAPublicKey) keys.getPublic())),
                CachingSha2Password.RSA_TRANSFORMATION);
        assertThat(CachingSha2Password.decryptPassword(encrypted, SEED, (RSAPrivateKey) keys.getPrivate()))
                .isEqualTo(password);
    }

    @Test
    void garbageKeysAndCiphertextsAreRefused() {
        assertThatThrownBy(() -> CachingSha2Password.parsePublicKey("-----BEGIN PUBLIC KEY-----\nnot base64!\n"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PEM RSA public key");
        assertThatThrownBy(() -> CachingSha2Password.decryptPassword(new byte[256], SEED, (RSAPrivateKey) keys.getPrivate()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not decrypt");
    }
}
