package io.gantry.proxy.login;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.login.ClientAuthentication.Outcome;
import io.gantry.proxy.login.ClientAuthentication.Step;
import io.gantry.proxy.backend.BackendSecret;
import io.gantry.proxy.login.ClientAuthentication;
import io.gantry.proxy.login.GantryRsaKey;
import io.gantry.topology.AccountLookup.AccountEntry;
import io.gantry.wire.AuthMoreData;
import io.gantry.wire.AuthSwitchRequest;
import io.gantry.wire.CachingSha2Password;
import io.gantry.wire.NativePassword;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClientAuthenticationTest {

    private static final byte[] SEED = "abcdefghijklmnopqrst".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PASSWORD = "s3cret".getBytes(StandardCharsets.UTF_8);
    private static final GantryRsaKey RSA = GantryRsaKey.generate();
    private static final String STORED = NativePassword.formatStoredHash(NativePassword.storedHash(PASSWORD));
    private static final AccountEntry NATIVE_ACCOUNT = new AccountEntry("%", NativePassword.PLUGIN_NAME, STORED,
            false, false);
    private static final AccountEntry LOCKED = new AccountEntry("%", NativePassword.PLUGIN_NAME, STORED, true, false);
    private static final AccountEntry EXPIRING = new AccountEntry("%", NativePassword.PLUGIN_NAME, STORED, false,
            true);

    private static ClientAuthentication exchange(boolean tls) {
        return new ClientAuthentication(SEED, tls, RSA, "10.1.2.3", true);
    }

    /** An exchange with the right password's answer, waiting for the account's entries. */
    private static ClientAuthentication awaitingAccounts(boolean mariaDb) {
        ClientAuthentication auth = new ClientAuthentication(SEED, false, RSA, "10.1.2.3", mariaDb);
        assertThat(auth.onHandshakeResponse("app", NativePassword.PLUGIN_NAME, NativePassword.scramble(PASSWORD, SEED))
                .outcome()).isEqualTo(Outcome.LOOKUP);
        return auth;
    }

    @Test
    void knownEntriesAcceptTheRightPasswordWithTheSameSecretAsTheServersEntries() {
        Step known = awaitingAccounts(true).acceptKnown(List.of(NATIVE_ACCOUNT)).orElseThrow();
        Step looked = awaitingAccounts(true).onAccounts(List.of(NATIVE_ACCOUNT));
        assertThat(known.outcome()).isEqualTo(Outcome.ACCEPT);
        byte[] backendSeed = "ZYXWVUTSRQPONMLKJIHG".getBytes(StandardCharsets.US_ASCII);
        assertThat(known.secret().nativeScramble(backendSeed)).isEqualTo(looked.secret().nativeScramble(backendSeed));
    }

    @Test
    void knownEntriesNeverRefuseButLeaveTheLoginToTheServersEntries() {
        ClientAuthentication wrong = exchange(false);
        wrong.onHandshakeResponse("app", NativePassword.PLUGIN_NAME,
                NativePassword.scramble("old".getBytes(StandardCharsets.UTF_8), SEED));
        assertThat(wrong.acceptKnown(List.of(NATIVE_ACCOUNT))).as("the password may be newer than the entry").isEmpty();
        assertThat(wrong.onAccounts(List.of(NATIVE_ACCOUNT)).outcome()).isEqualTo(Outcome.DENY);

        ClientAuthentication locked = awaitingAccounts(true);
        assertThat(locked.acceptKnown(List.of(LOCKED))).as("it may have been unlocked since").isEmpty();
        assertThat(locked.onAccounts(List.of(NATIVE_ACCOUNT)).outcome()).isEqualTo(Outcome.ACCEPT);

        assertThat(awaitingAccounts(true).acceptKnown(List.of(EXPIRING))).as("the server's own login decides")
                .isEmpty();
        assertThat(awaitingAccounts(true).acceptKnown(List.of())).isEmpty();
        assertThat(awaitingAccounts(true).acceptKnown(List.of(new AccountEntry("%", CachingSha2Password.PLUGIN_NAME,
                "$A$...", false, false)))).as("a plugin switch is the server entries' to decide").isEmpty();
    }

    @Test
    void lockedAccountIsRefusedWithTheServersOwnErrorOfEachFlavour() {
        Step mariaDb = awaitingAccounts(true).onAccounts(List.of(LOCKED));
        assertThat(mariaDb.outcome()).isEqualTo(Outcome.DENY);
        assertThat(mariaDb.error().errorCode()).isEqualTo(4151);
        assertThat(mariaDb.error().message()).isEqualTo("Access denied, this account is locked");

        Step mysql = awaitingAccounts(false).onAccounts(List.of(LOCKED));
        assertThat(mysql.error().errorCode()).isEqualTo(3118);
        assertThat(mysql.error().message()).isEqualTo("Access denied for user 'app'@'10.1.2.3'. Account is locked.");
    }

    @Test
    void anUnlockedEntryWithThePasswordLetsTheClientInBeforeALockedOne() {
        AccountEntry localhost = new AccountEntry("localhost", NativePassword.PLUGIN_NAME, STORED, true, false);
        assertThat(awaitingAccounts(true).onAccounts(List.of(localhost, NATIVE_ACCOUNT)).outcome())
                .isEqualTo(Outcome.ACCEPT);
        assertThat(awaitingAccounts(true).acceptKnown(List.of(localhost, NATIVE_ACCOUNT))).isPresent();
    }

    @Test
    void nativePasswordIsCheckedAgainstTheStoredHashAndYieldsWhatAnswersAnyBackend() {
        ClientAuthentication auth = exchange(false);
        assertThat(auth.onHandshakeResponse("app", NativePassword.PLUGIN_NAME, NativePassword.scramble(PASSWORD, SEED))
                .outcome()).isEqualTo(Outcome.LOOKUP);
        Step step = auth.onAccounts(List.of(NATIVE_ACCOUNT));
        assertThat(step.outcome()).isEqualTo(Outcome.ACCEPT);
        byte[] backendSeed = "ZYXWVUTSRQPONMLKJIHG".getBytes(StandardCharsets.US_ASCII);
        assertThat(step.secret().nativeScramble(backendSeed)).isEqualTo(NativePassword.scramble(PASSWORD, backendSeed));
        assertThat(step.secret().plaintext()).as("the password itself is never known").isEmpty();
    }

    @Test
    void wrongPasswordAndUnknownAccountGetAccessDenied() {
        ClientAuthentication wrong = exchange(false);
        wrong.onHandshakeResponse("app", NativePassword.PLUGIN_NAME,
                NativePassword.scramble("guess".getBytes(StandardCharsets.UTF_8), SEED));
        Step denied = wrong.onAccounts(List.of(NATIVE_ACCOUNT));
        assertThat(denied.outcome()).isEqualTo(Outcome.DENY);
        assertThat(denied.error().errorCode()).isEqualTo(1045);
        assertThat(denied.error().message()).isEqualTo("Access denied for user 'app'@'10.1.2.3' (using password: YES)");

        ClientAuthentication unknown = exchange(false);
        unknown.onHandshakeResponse("nobody", NativePassword.PLUGIN_NAME, new byte[20]);
        assertThat(unknown.onAccounts(List.of()).error().errorCode()).isEqualTo(1045);
    }

    @Test
    void accountWithAnotherPluginIsRefusedNamingIt() {
        ClientAuthentication auth = exchange(false);
        auth.onHandshakeResponse("ed", NativePassword.PLUGIN_NAME, new byte[20]);
        Step step = auth.onAccounts(List.of(new AccountEntry("%", "ed25519", "xyz", false, false)));
        assertThat(step.outcome()).isEqualTo(Outcome.DENY);
        assertThat(step.error().message()).contains("'ed25519'").contains("mysql_native_password or caching_sha2");
    }

    @Test
    void nativeClientOfACachingSha2AccountIsSwitchedToFullAuthentication() {
        ClientAuthentication auth = exchange(true);
        auth.onHandshakeResponse("modern", NativePassword.PLUGIN_NAME, new byte[20]);
        Step switched = auth.onAccounts(List.of(new AccountEntry("%", CachingSha2Password.PLUGIN_NAME, "$A$...", false,
                false)));
        AuthSwitchRequest request = AuthSwitchRequest.decode(Unpooled.wrappedBuffer(switched.packets().get(0)));
        assertThat(request.pluginName()).isEqualTo(CachingSha2Password.PLUGIN_NAME);
        Step full = auth.onClientPacket(CachingSha2Password.scramble(PASSWORD, SEED));
        assertThat(AuthMoreData.decode(Unpooled.wrappedBuffer(full.packets().get(0))).isPerformFullAuthentication())
                .isTrue();
        Step accepted = auth.onClientPacket(Arrays.copyOf(PASSWORD, PASSWORD.length + 1));
        assertThat(accepted.outcome()).isEqualTo(Outcome.ACCEPT);
        assertThat(accepted.secret().plaintext()).hasValueSatisfying(p -> assertThat(p).isEqualTo(PASSWORD));
    }

    @Test
    void cachingSha2AlwaysTakesTheFullPathWithTheRsaKeyWithoutTls() {
        ClientAuthentication auth = exchange(false);
        Step first = auth.onHandshakeResponse("app", CachingSha2Password.PLUGIN_NAME,
                CachingSha2Password.scramble(PASSWORD, SEED));
        assertThat(AuthMoreData.decode(Unpooled.wrappedBuffer(first.packets().get(0))).isPerformFullAuthentication())
                .isTrue();
        Step keyStep = auth.onClientPacket(new byte[] {CachingSha2Password.REQUEST_PUBLIC_KEY});
        byte[] pem = AuthMoreData.decode(Unpooled.wrappedBuffer(keyStep.packets().get(0))).data();
        byte[] encrypted = CachingSha2Password.encryptPassword(PASSWORD, SEED, CachingSha2Password.parsePublicKey(pem));
        Step accepted = auth.onClientPacket(encrypted);
        assertThat(accepted.outcome()).isEqualTo(Outcome.ACCEPT);
        assertThat(accepted.secret().plaintext()).hasValueSatisfying(p -> assertThat(p).isEqualTo(PASSWORD));
    }

    @Test
    void garbledRsaReplyIsDenied() {
        ClientAuthentication auth = exchange(false);
        auth.onHandshakeResponse("app", CachingSha2Password.PLUGIN_NAME, new byte[32]);
        Step step = auth.onClientPacket(new byte[256]);
        assertThat(step.outcome()).isEqualTo(Outcome.DENY);
        assertThat(step.reason()).contains("RSA");
    }

    @Test
    void unknownClientPluginIsSwitchedToNativePassword() {
        ClientAuthentication auth = exchange(false);
        Step step = auth.onHandshakeResponse("app", "client_ed25519", new byte[32]);
        AuthSwitchRequest request = AuthSwitchRequest.decode(Unpooled.wrappedBuffer(step.packets().get(0)));
        assertThat(request.pluginName()).isEqualTo(NativePassword.PLUGIN_NAME);
        assertThat(auth.onClientPacket(NativePassword.scramble(PASSWORD, SEED)).outcome()).isEqualTo(Outcome.LOOKUP);
        assertThat(auth.onAccounts(List.of(NATIVE_ACCOUNT)).outcome()).isEqualTo(Outcome.ACCEPT);
    }

    @Test
    void secretsCanBeCleared() {
        BackendSecret secret = BackendSecret.password(PASSWORD);
        secret.clear();
        assertThat(secret.plaintext()).hasValueSatisfying(p -> assertThat(p).containsOnly(0));
        assertThat(secret.toString()).doesNotContain("s3cret");
    }
}
