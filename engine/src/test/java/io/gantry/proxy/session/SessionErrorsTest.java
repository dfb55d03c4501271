package io.gantry.proxy.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.backend.BackendFailure;
import io.gantry.topology.AccountLookup;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.ServerVersion;
import org.junit.jupiter.api.Test;

class SessionErrorsTest {

    private static final UpstreamServer PRIMARY = new UpstreamServer(new UpstreamUrl("10.0.0.1", 3306, "app", "svc",
            "pw", 50));

    @Test
    void aFullServersRefusalNamesTheServer() {
        ErrPacket full = ErrPacket.of(1040, "08004", "Too many connections");
        ErrPacket shown = SessionErrors.backendFailed(PRIMARY, new BackendFailure(PRIMARY.address(), full));
        assertThat(shown).isEqualTo(ErrPacket.of(1040, "08004",
                "Too many connections (on 10.0.0.1:3306, through Gantry)"));
        ErrPacket perUser = ErrPacket.of(1203, "42000", "User app already has more than 'max_user_connections'");
        assertThat(SessionErrors.backendFailed(PRIMARY, new BackendFailure(PRIMARY.address(), perUser)).message())
                .endsWith("(on 10.0.0.1:3306, through Gantry)");
    }

    @Test
    void otherRefusalsArePassedOnAsTheServerWroteThem() {
        ErrPacket unknownDatabase = ErrPacket.of(1049, "42000", "Unknown database 'nope'");
        assertThat(SessionErrors.backendFailed(PRIMARY, new BackendFailure(PRIMARY.address(), unknownDatabase)))
                .isEqualTo(unknownDatabase);
    }

    @Test
    void anAccountLookUpOnFullServersIsTooManyConnectionsNotUnreachable() {
        ErrPacket full = SessionErrors.accountLookupFailed("app", new AccountLookup.ServersUnreachableException(
                "10.0.0.1:3306 is full: Too many connections (1040)", true));
        assertThat(full.errorCode()).isEqualTo(1040);
        assertThat(full.message()).contains("10.0.0.1:3306 is full").doesNotContain("cannot be reached");
        ErrPacket down = SessionErrors.accountLookupFailed("app", new AccountLookup.ServersUnreachableException(
                "10.0.0.1:3306 failed: connection refused"));
        assertThat(down.errorCode()).isEqualTo(1105);
        assertThat(down.message()).contains("cannot be reached");
    }

    @Test
    void peerChosenNamesCannotForgeLogLines() {
        assertThat(LogText.printable("app")).isEqualTo("app");
        assertThat(LogText.printable("app\n12:00:00 [main] INFO forged\u0014"))
                .isEqualTo("app\\x0a12:00:00 [main] INFO forged\\x14");
    }

    @Test
    void aWriteInAReadOnlyTransactionIsRefusedInTheWordsOfTheServerTheClientSees() {
        assertThat(SessionErrors.writeInReadOnlyTransaction(ServerVersion.parse("5.5.5-10.11.18-MariaDB-0+deb12u1"))
                .message()).isEqualTo("Cannot execute statement in a READ ONLY transaction");
        assertThat(SessionErrors.writeInReadOnlyTransaction(ServerVersion.parse("5.5.5-11.4.5-MariaDB-log")).message())
                .isEqualTo("Cannot execute statement in a READ ONLY transaction");
        assertThat(SessionErrors.writeInReadOnlyTransaction(ServerVersion.parse("8.0.15"))).isEqualTo(
                ErrPacket.of(1792, "25006", "Cannot execute statement in a READ ONLY transaction."));
    }
}
