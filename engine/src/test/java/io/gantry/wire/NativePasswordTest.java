package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mysql.cj.protocol.Security;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.junit.jupiter.api.Test;

class NativePasswordTest {

    private static final byte[] SEED = "0123456789abcdefghij".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OTHER_SEED = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};

    @Test
    void storedHashMatchesPublishedPasswordFunctionOutputs() {
        // MySQL 5.7 Reference Manual, PASSWORD(): PASSWORD('mypass') = '*6C8989366EAF75BB670AD8EA7A7FC1176A95CEF4'.
        assertThat(NativePassword.formatStoredHash(NativePassword.storedHash(utf8("mypass"))))
                .isEqualTo("*6C8989366EAF75BB670AD8EA7A7FC1176A95CEF4");
        // The widely published hash of the literal password "password".
        assertThat(NativePassword.formatStoredHash(NativePassword.storedHash(utf8("password"))))
                .isEqualTo("*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19");
        assertThat(NativePassword.storedHash(new byte[0])).isEmpty();
    }

    @Test
    void scrambleFollowsTheFormula() throws Exception {
        byte[] password = utf8("s3cr3t-pässword");
        byte[] stage1 = sha1(password);
        byte[] mask = sha1(concat(SEED, sha1(stage1)));
        byte[] expected = new byte[20];
        for (int i = 0; i < 20; i++) {
            expected[i] = (byte) (stage1[i] ^ mask[i]);
        }
        assertThat(NativePassword.scramble(password, SEED)).isEqualTo(expected);
    }

    @Test
    void scrambleAgreesWithConnectorJ() {
        byte[] password = utf8("correct horse battery staple");
        assertThat(NativePassword.scramble(password, SEED)).isEqualTo(Security.scramble411(password, SEED));
        assertThat(NativePassword.scramble(password, OTHER_SEED)).isEqualTo(Security.scramble411(password, OTHER_SEED));
    }

    @Test
    void proxyChecksAClientWithTheStoredHashAndAnswersABackendsOtherSeed() {
        byte[] password = utf8("app-pass");
        byte[] stored = NativePassword.parseStoredHash(NativePassword.formatStoredHash(NativePassword.storedHash(password)));
        byte[] clientReply = NativePassword.scramble(password, SEED);

        assertThat(NativePassword.verify(clientReply, SEED, stored)).isTrue();
        byte[] stage1 = NativePassword.recoverStage1(clientReply, SEED, stored);
        assertThat(stage1).isEqualTo(sha1(password));
        assertThat(NativePassword.scrambleFromStage1(stage1, OTHER_SEED))
                .isEqualTo(NativePassword.scramble(password, OTHER_SEED));
    }

    @Test
    void wrongPasswordsTamperedRepliesAndOtherSeedsAreRejected() {
        byte[] stored = NativePassword.storedHash(utf8("right"));
        assertThat(NativePassword.verify(NativePassword.scramble(utf8("wrong"), SEED), SEED, stored)).isFalse();
        byte[] reply = NativePassword.scramble(utf8("right"), SEED);
        assertThat(NativePassword.verify(reply, OTHER_SEED, stored)).isFalse();
        reply[7] ^= 1;
        assertThat(NativePassword.verify(reply, SEED, stored)).isFalse();
        assertThat(NativePassword.verify(new byte[5], SEED, stored)).isFalse();
    }

    @Test
    void emptyPasswordHasAnEmptyReplyAndOnlyMatchesAnEmptyHash() {
        assertThat(NativePassword.scramble(new byte[0], SEED)).isEmpty();
        assertThat(NativePassword.verify(new byte[0], SEED, new byte[0])).isTrue();
        assertThat(NativePassword.verify(new byte[0], SEED, NativePassword.storedHash(utf8("x")))).isFalse();
        assertThat(NativePassword.verify(NativePassword.scramble(utf8("x"), SEED), SEED, new byte[0])).isFalse();
        assertThat(NativePassword.parseStoredHash("")).isEmpty();
    }

    @Test
    void malformedStoredHashesAreRefused() {
        assertThatThrownBy(() -> NativePassword.parseStoredHash("2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("40 hex digits");
        assertThatThrownBy(() -> NativePassword.parseStoredHash("*ZZ70C0C06DEE42FD1618BB99005ADCA2EC9D1E19"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> NativePassword.recoverStage1(new byte[3], SEED, new byte[20]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("20 bytes");
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static byte[] sha1(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-1").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
