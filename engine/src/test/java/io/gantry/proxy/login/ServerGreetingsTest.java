package io.gantry.proxy.login;

import static io.gantry.wire.CapabilityFlags.CLIENT_COMPRESS;
import static io.gantry.wire.CapabilityFlags.CLIENT_DEPRECATE_EOF;
import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static io.gantry.wire.CapabilityFlags.CLIENT_SESSION_TRACK;
import static io.gantry.wire.CapabilityFlags.CLIENT_SSL;
import static io.gantry.wire.CapabilityFlags.CLIENT_TRANSACTIONS;
import static io.gantry.wire.CapabilityFlags.MARIADB_CLIENT_BULK_UNIT_RESULTS;
import static io.gantry.wire.CapabilityFlags.MARIADB_CLIENT_CACHE_METADATA;
import static io.gantry.wire.CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA;
import static io.gantry.wire.CapabilityFlags.MARIADB_CLIENT_PROGRESS;
import static io.gantry.wire.CapabilityFlags.MARIADB_CLIENT_STMT_BULK_OPERATIONS;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.login.ServerGreetings;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.wire.GreetingTemplate;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.NativePassword;
import io.gantry.wire.ServerStatus;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ServerGreetingsTest {

    private static final byte[] SEED = "abcdefghijklmnopqrst".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    /** What MariaDB 11.4 sends (CLIENT_MYSQL clear), plus CLIENT_COMPRESS, which Gantry cannot forward. */
    private static final int MARIADB_CAPS = (0xF7FE | (0xA13F << 16)) & ~CLIENT_MYSQL | CLIENT_COMPRESS;
    private static final int MARIADB_EXTENDED = MARIADB_CLIENT_PROGRESS | MARIADB_CLIENT_STMT_BULK_OPERATIONS
            | MARIADB_CLIENT_EXTENDED_METADATA | MARIADB_CLIENT_CACHE_METADATA | MARIADB_CLIENT_BULK_UNIT_RESULTS;
    private static final HandshakeV10 MARIADB = new HandshakeV10("5.5.5-11.4.5-MariaDB-log", 7, SEED, MARIADB_CAPS,
            0, ServerStatus.SERVER_STATUS_AUTOCOMMIT, MARIADB_EXTENDED, "mysql_native_password");
    private static final HandshakeV10 MYSQL = new HandshakeV10("8.4.3", 9, SEED,
            0xFFFF_FFFF & ~(1 << 29) & ~(1 << 30) & ~(1 << 31), 255, ServerStatus.SERVER_STATUS_AUTOCOMMIT, 0,
            "caching_sha2_password");

    @Test
    void mirrorsAMariaDbPrimarysVersionCollationAndForwardableCapabilities() {
        HandshakeV10 shown = ServerGreetings.mirror(MARIADB, 42, SEED, false, "mysql_native_password");
        assertThat(shown.serverVersion()).isEqualTo("5.5.5-11.4.5-MariaDB-log");
        assertThat(shown.characterSet()).isZero();
        assertThat(shown.connectionId()).isEqualTo(42);
        assertThat(shown.capabilities() & CLIENT_MYSQL).as("CLIENT_MYSQL clear: the extended word is there").isZero();
        assertThat(shown.capabilities()).isEqualTo(MARIADB_CAPS & ServerGreetings.OFFERED);
        assertThat(shown.capabilities() & (CLIENT_COMPRESS | CLIENT_SSL)).isZero();
        assertThat(shown.mariaDbCapabilities()).as("only extended metadata is forwardable")
                .isEqualTo(MARIADB_CLIENT_EXTENDED_METADATA);
        assertThat(shown.authPluginName()).isEqualTo("mysql_native_password");
    }

    @Test
    void mirrorsAMySqlPrimaryWithoutExtendedCapabilities() {
        HandshakeV10 shown = ServerGreetings.mirror(MYSQL, 1, SEED, true, "caching_sha2_password");
        assertThat(shown.serverVersion()).isEqualTo("8.4.3");
        assertThat(shown.characterSet()).isEqualTo(255);
        assertThat(shown.capabilities() & CLIENT_MYSQL).isEqualTo(CLIENT_MYSQL);
        assertThat(shown.capabilities()).isEqualTo(ServerGreetings.OFFERED | CLIENT_SSL);
        assertThat(shown.mariaDbCapabilities()).isZero();
    }

    @Test
    void keepsWhatGantrysOwnLoginNeedsAndDropsWhatThePrimaryLacks() {
        int old = CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS | CLIENT_MYSQL | CLIENT_SECURE_CONNECTION;
        HandshakeV10 primary = new HandshakeV10("5.7.44", 1, SEED, old, 8, 2, 0, "");
        HandshakeV10 shown = ServerGreetings.mirror(primary, 1, SEED, false, "mysql_native_password");
        assertThat(shown.capabilities()).isEqualTo(old | CLIENT_PLUGIN_AUTH);
        assertThat(shown.capabilities() & (CLIENT_DEPRECATE_EOF | CLIENT_SESSION_TRACK)).isZero();
    }

    @Test
    void showsThePrimarysLatestGreetingAndKeepsTheLastOneWhileThereIsNoPrimary() {
        UpstreamServer first = server(3306);
        UpstreamServer second = server(3307);
        ServerGreetings greetings = new ServerGreetings("fallback");
        assertThat(greetings.source(Optional.empty()).serverVersion()).isEqualTo("fallback");
        greetings.greeted(second, MYSQL);
        assertThat(greetings.source(Optional.empty())).as("no primary yet: any server's").isEqualTo(MYSQL);
        greetings.greeted(first, MARIADB);
        assertThat(greetings.source(Optional.of(first))).isEqualTo(MARIADB);
        assertThat(greetings.source(Optional.empty())).as("primary lost: the last one shown").isEqualTo(MARIADB);
        assertThat(greetings.source(Optional.of(second))).isEqualTo(MYSQL);
        UpstreamServer third = server(3308);
        assertThat(greetings.knows(third)).isFalse();
        assertThat(greetings.source(Optional.of(third))).as("new primary not probed yet").isEqualTo(MYSQL);
        HandshakeV10 upgraded = new HandshakeV10("5.5.5-11.8.1-MariaDB", 3, SEED, MARIADB_CAPS, 0, 2,
                MARIADB_EXTENDED, "");
        greetings.greeted(third, upgraded);
        assertThat(greetings.source(Optional.of(third))).isEqualTo(upgraded);
    }

    /** The template is made once per greeting shown, and again when what it mirrors changes. */
    @Test
    void aTemplateIsMadeOnceAndAgainWhenThePrimarysGreetingChanges() {
        UpstreamServer primary = server(3306);
        ServerGreetings greetings = new ServerGreetings("fallback");
        greetings.greeted(primary, MARIADB);
        GreetingTemplate first = greetings.templateForClient(Optional.of(primary), false, "mysql_native_password");
        assertThat(greetings.templateForClient(Optional.of(primary), false, "mysql_native_password")).isSameAs(first);
        assertThat(first.greeting()).isEqualTo(ServerGreetings.mirror(MARIADB, 0,
                new byte[NativePassword.SEED_LENGTH], false, "mysql_native_password"));
        assertThat(first.mariaDb()).isTrue();

        GreetingTemplate withTls = greetings.templateForClient(Optional.of(primary), true, "mysql_native_password");
        assertThat(withTls).isNotSameAs(first);
        assertThat(withTls.greeting().capabilities() & CLIENT_SSL).isNotZero();
        greetings.greeted(primary, MYSQL); // the primary was upgraded, or another took its place
        GreetingTemplate mySql = greetings.templateForClient(Optional.of(primary), true, "mysql_native_password");
        assertThat(mySql.greeting().serverVersion()).isEqualTo("8.4.3");
        assertThat(mySql.mariaDb()).isFalse();
    }

    private static UpstreamServer server(int port) {
        return new UpstreamServer(new UpstreamUrl("127.0.0.1", port, "app", "app", "app", 50));
    }
}
