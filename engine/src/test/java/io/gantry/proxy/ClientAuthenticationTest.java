package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.ClientAuthentication.Outcome;
import io.gantry.proxy.ClientAuthentication.Step;
import io.gantry.wire.AuthMoreData;
import io.gantry.wire.AuthSwitchRequest;
import io.gantry.wire.CachingSha2Password;
import io.gantry.wire.NativePassword;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ClientAuthenticationTest {

    private static final byte[] SEED = "abcdefghijklmnopqrst".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PASSWORD = "s3cret".getBytes(StandardCharsets.UTF_8);
    private static final GantryRsaKey RSA = GantryRsaKey.generate();

    private final CachingSha2Cache cache = new CachingSha2Cache();

    private ClientAuthentication exchange(boolean tls) {
        return new ClientAuthentication("app", "s3cret", SEED, tls, RSA, cache, "10.1.2.3");
    }

    @Test
    void nativePasswordAcceptsTheRightScrambleOnly() {
        assertThat(exchange(false).onHandshakeResponse("app", NativePassword.PLUGIN_NAME,
                NativePassword.scramble(PASSWORD, SEED)).outcome()).isEqualTo(Outcome.ACCEPT);
        Step wrong = exchange(false).onHandshakeResponse("app", NativePassword.PLUGIN_NAME,
                NativePassword.scramble("guess".getBytes(StandardCharsets.UTF_8), SEED));
        assertThat(wrong.outcome()).isEqualTo(Outcome.DENY);
        assertThat(wrong.error().errorCode()).isEqualTo(1045);
        assertThat(wrong.error().message()).isEqualTo("Access denied for user 'app'@'10.1.2.3' (using password: YES)");
        assertThat(wrong.reason()).isEqualTo("wrong password");
    }

    @Test
    void otherAccountsAreDeniedInTheFirstStage() {
        Step step = exchange(false).onHandshakeResponse("root", NativePassword.PLUGIN_NAME,
                NativePassword.scramble(PASSWORD, SEED));
        assertThat(step.outcome()).isEqualTo(Outcome.DENY);
        assertThat(step.reason()).contains("only the service account");
    }

    @Test
    void unknownPluginIsSwitchedToNativePassword() {
        ClientAuthentication auth = exchange(false);
        Step step = auth.onHandshakeResponse("app", "client_ed25519", new byte[32]);
        assertThat(step.outcome()).isEqualTo(Outcome.CONTINUE);
        AuthSwitchRequest request = AuthSwitchRequest.decode(Unpooled.wrappedBuffer(step.packets().get(0)));
        assertThat(request.pluginName()).isEqualTo(NativePassword.PLUGIN_NAME);
        assertThat(request.seed()).isEqualTo(SEED);
        assertThat(auth.onClientPacket(NativePassword.scramble(PASSWORD, SEED)).outcome()).isEqualTo(Outcome.ACCEPT);
    }

    @Test
    void cachingSha2FullAuthenticationOverTlsThenFastPath() {
        ClientAuthentication first = exchange(true);
        Step step = first.onHandshakeResponse("app", CachingSha2Password.PLUGIN_NAME,
                CachingSha2Password.scramble(PASSWORD, SEED));
        assertThat(step.outcome()).isEqualTo(Outcome.CONTINUE);
        assertThat(AuthMoreData.decode(Unpooled.wrappedBuffer(step.packets().get(0))).isPerformFullAuthentication())
                .isTrue();
        byte[] clear = Arrays.copyOf(PASSWORD, PASSWORD.length + 1);
        assertThat(first.onClientPacket(clear).outcome()).isEqualTo(Outcome.ACCEPT);

        Step fast = exchange(false).onHandshakeResponse("app", CachingSha2Password.PLUGIN_NAME,
                CachingSha2Password.scramble(PASSWORD, SEED));
        assertThat(fast.outcome()).isEqualTo(Outcome.ACCEPT);
        assertThat(AuthMoreData.decode(Unpooled.wrappedBuffer(fast.packets().get(0))).isFastAuthSuccess()).isTrue();
    }

    @Test
    void cachingSha2FullAuthenticationWithTheRsaKey() {
        ClientAuthentication auth = exchange(false);
        auth.onHandshakeResponse("app", CachingSha2Password.PLUGIN_NAME, CachingSha2Password.scramble(PASSWORD, SEED));
        Step keyStep = auth.onClientPacket(new byte[] {CachingSha2Password.REQUEST_PUBLIC_KEY});
        byte[] pem = AuthMoreData.decode(Unpooled.wrappedBuffer(keyStep.packets().get(0))).data();
        byte[] encrypted = CachingSha2Password.encryptPassword(PASSWORD, SEED, CachingSha2Password.parsePublicKey(pem));
        assertThat(auth.onClientPacket(encrypted).outcome()).isEqualTo(Outcome.ACCEPT);
    }

    @Test
    void cachingSha2WrongPasswordIsDeniedOnEveryPath() {
        ClientAuthentication clear = exchange(true);
        clear.onHandshakeResponse("app", CachingSha2Password.PLUGIN_NAME, new byte[32]);
        assertThat(clear.onClientPacket("nope\0".getBytes(StandardCharsets.UTF_8)).outcome()).isEqualTo(Outcome.DENY);

        ClientAuthentication garbage = exchange(false);
        garbage.onHandshakeResponse("app", CachingSha2Password.PLUGIN_NAME, new byte[32]);
        Step step = garbage.onClientPacket(new byte[256]);
        assertThat(step.outcome()).isEqualTo(Outcome.DENY);
        assertThat(step.reason()).contains("RSA");
    }
}
