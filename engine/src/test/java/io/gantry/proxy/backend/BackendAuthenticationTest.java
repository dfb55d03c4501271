package io.gantry.proxy.backend;

import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_WITH_DB;
import static io.gantry.wire.CapabilityFlags.CLIENT_DEPRECATE_EOF;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static io.gantry.wire.CapabilityFlags.CLIENT_SSL;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.backend.BackendAuthentication;
import io.gantry.proxy.backend.BackendLogin;
import io.gantry.proxy.backend.BackendSecret;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.wire.AuthMoreData;
import io.gantry.wire.AuthSwitchRequest;
import io.gantry.wire.CachingSha2Password;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.HandshakeResponse41;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.NativePassword;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import org.junit.jupiter.api.Test;

/** The backend login as a conversation: greeting and auth packets in, steps out; no channel, no server. */
class BackendAuthenticationTest {

    private static final byte[] SEED = "abcdefghijklmnopqrst".getBytes(StandardCharsets.ISO_8859_1);
    private static final int SERVER_CAPS = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH
            | CLIENT_DEPRECATE_EOF;

    @Test
    void aPlainGreetingIsAnsweredWithTheClientsAccountAndNextSequenceId() {
        BackendAuthentication login = login("mysql://u:p@127.0.0.1:3306/app?ssl-mode=PREFERRED", password("pw"));
        BackendAuthentication.Step step = login.onGreeting(greeting(SERVER_CAPS, NativePassword.PLUGIN_NAME), 0);
        BackendAuthentication.Step.Send send = (BackendAuthentication.Step.Send) step;
        assertThat(send.sequenceId()).isEqualTo(1);
        HandshakeResponse41 response = HandshakeResponse41.decode(Unpooled.wrappedBuffer(send.payload()));
        assertThat(response.username()).isEqualTo("app");
        assertThat(response.database()).isEqualTo("shop");
        assertThat(response.authResponse()).isEqualTo(NativePassword.scramble(bytes("pw"), SEED));
        assertThat(login.greeting().connectionId()).isEqualTo(77);
        assertThat(login.onPacket(ok(), 2)).isInstanceOf(BackendAuthentication.Step.LoggedIn.class);
        assertThat(login.encrypted()).isFalse();
    }

    @Test
    void tlsIsStartedWhenOfferedAndTheResponseFollowsWithTheSequenceIdAfterTheSslRequest() {
        BackendAuthentication login = login("mysql://u:p@127.0.0.1:3306/app?ssl-mode=REQUIRED", password("pw"));
        BackendAuthentication.Step step = login.onGreeting(greeting(SERVER_CAPS | CLIENT_SSL,
                NativePassword.PLUGIN_NAME), 0);
        BackendAuthentication.Step.StartTls tls = (BackendAuthentication.Step.StartTls) step;
        assertThat(tls.sequenceId()).isEqualTo(1);
        assertThat(tls.handler().engine().getUseClientMode()).isTrue();
        BackendAuthentication.Step.Send send = (BackendAuthentication.Step.Send) login.afterTls();
        assertThat(send.sequenceId()).isEqualTo(2);
        assertThat(login.encrypted()).isTrue();
    }

    @Test
    void requiredTlsAgainstAServerWithoutItFailsNamingTheServer() {
        BackendAuthentication login = login("mysql://u:p@127.0.0.1:3306/app?ssl-mode=REQUIRED", password("pw"));
        BackendAuthentication.Step step = login.onGreeting(greeting(SERVER_CAPS, NativePassword.PLUGIN_NAME), 0);
        assertThat(((BackendAuthentication.Step.Failed) step).failure())
                .hasMessageContaining("127.0.0.1:3306 does not offer TLS").hasMessageContaining("ssl-mode=REQUIRED");
    }

    @Test
    void anErrorInPlaceOfTheGreetingIsTheServersOwnRefusal() {
        ByteBuf error = Unpooled.buffer();
        ErrPacket.of(1040, "08004", "Too many connections").encode(error);
        BackendAuthentication.Step step = login("mysql://u:p@127.0.0.1:3306/app", password("pw"))
                .onGreeting(error, 0);
        assertThat(((BackendAuthentication.Step.Failed) step).failure().serverError().errorCode()).isEqualTo(1040);
    }

    @Test
    void anUnsupportedPluginSwitchFails() {
        BackendAuthentication login = login("mysql://u:p@127.0.0.1:3306/app?ssl-mode=DISABLED", password("pw"));
        login.onGreeting(greeting(SERVER_CAPS, NativePassword.PLUGIN_NAME), 0);
        ByteBuf request = Unpooled.buffer();
        new AuthSwitchRequest("auth_gssapi_client", SEED).encode(request);
        BackendAuthentication.Step step = login.onPacket(request, 2);
        assertThat(((BackendAuthentication.Step.Failed) step).failure())
                .hasMessageContaining("'auth_gssapi_client', which Gantry does not support");
    }

    @Test
    void cachingSha2FullAuthenticationWithoutTlsNeedsTheUrlsConsentToAskForTheKey() {
        BackendAuthentication login = login("mysql://u:p@127.0.0.1:3306/app?ssl-mode=DISABLED", password("pw"));
        login.onGreeting(greeting(SERVER_CAPS, CachingSha2Password.PLUGIN_NAME), 0);
        assertThat(login.onPacket(moreData(CachingSha2Password.FAST_AUTH_SUCCESS), 2))
                .isInstanceOf(BackendAuthentication.Step.Wait.class);
        BackendAuthentication.Step step = login.onPacket(moreData(CachingSha2Password.PERFORM_FULL_AUTHENTICATION), 2);
        assertThat(((BackendAuthentication.Step.Failed) step).failure().serverError().message())
                .contains("get-server-public-key=true");

        BackendAuthentication allowed = login(
                "mysql://u:p@127.0.0.1:3306/app?ssl-mode=DISABLED&get-server-public-key=true", password("pw"));
        allowed.onGreeting(greeting(SERVER_CAPS, CachingSha2Password.PLUGIN_NAME), 0);
        BackendAuthentication.Step.Send keyRequest = (BackendAuthentication.Step.Send) allowed.onPacket(
                moreData(CachingSha2Password.PERFORM_FULL_AUTHENTICATION), 4);
        assertThat(keyRequest.sequenceId()).isEqualTo(5);
        assertThat(keyRequest.payload()).containsExactly(CachingSha2Password.REQUEST_PUBLIC_KEY);
    }

    @Test
    void aNativeOnlySecretCannotAnswerACachingSha2Switch() throws Exception {
        // What a mysql_native_password client login reveals: SHA1(password), never the password.
        BackendSecret nativeOnly = BackendSecret.nativeStage1(MessageDigest.getInstance("SHA-1").digest(bytes("pw")));
        BackendAuthentication login = login("mysql://u:p@127.0.0.1:3306/app?ssl-mode=DISABLED", nativeOnly);
        login.onGreeting(greeting(SERVER_CAPS, NativePassword.PLUGIN_NAME), 0);
        ByteBuf request = Unpooled.buffer();
        new AuthSwitchRequest(CachingSha2Password.PLUGIN_NAME, SEED).encode(request);
        BackendAuthentication.Step step = login.onPacket(request, 2);
        assertThat(((BackendAuthentication.Step.Failed) step).failure().serverError().errorCode()).isEqualTo(1045);
    }

    private static BackendAuthentication login(String url, BackendSecret secret) {
        UpstreamServer server = new UpstreamServer(UpstreamUrl.parse(url));
        return new BackendAuthentication(server, new BackendLogin("app", secret, "shop", 45,
                SERVER_CAPS | CLIENT_CONNECT_WITH_DB, 0));
    }

    private static BackendSecret password(String password) {
        return BackendSecret.password(bytes(password));
    }

    private static ByteBuf greeting(int capabilities, String plugin) {
        byte[] seed = new byte[21];
        System.arraycopy(SEED, 0, seed, 0, 20);
        ByteBuf out = Unpooled.buffer();
        new HandshakeV10("10.11.6-MariaDB", 77, seed, capabilities, 45, 2, 0, plugin).encode(out);
        return out;
    }

    private static ByteBuf moreData(byte value) {
        ByteBuf out = Unpooled.buffer();
        new AuthMoreData(new byte[] {value}).encode(out);
        return out;
    }

    private static ByteBuf ok() {
        return Unpooled.wrappedBuffer(new byte[] {0, 0, 0, 2, 0, 0, 0});
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
