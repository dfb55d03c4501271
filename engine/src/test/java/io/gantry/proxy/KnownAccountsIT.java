package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.Gantry;
import io.gantry.TopologyKinds;
import io.gantry.authority.Retention;
import io.gantry.cdc.CdcSettings;
import io.gantry.cdc.TableFilter;
import io.gantry.gtid.GtidSet;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Logins checked on accounts Gantry knows from earlier logins: a later login asks no server, and once the change
 * stream has passed an account change made on the primary (straight on the server, or through Gantry), the next
 * login through Gantry is refused or accepted exactly as a direct login is. A login in the window before the stream
 * passes it may be checked on the facts before the change (docs/clients-and-protocol.md, "The window"): seen here
 * with an in-process client that logs in within a millisecond or two of its own ALTER USER.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KnownAccountsIT {

    /** Where the account change is made. */
    enum ChangedOn { SERVER, GANTRY }

    private Topology topology;
    private Gantry gantry;
    private Connection admin;

    @TempDir
    static Path dataDir;

    /** The servers' kind: MariaDB here, MySQL in {@link KnownAccountsMySqlIT}. */
    TopologyKind kind() {
        return TopologyKind.MARIADB;
    }

    /** The server's error for a locked account: MariaDB's ER_ACCOUNT_HAS_BEEN_LOCKED. */
    Login lockedAccount() {
        return Login.refused(4151, "HY000");
    }

    @BeforeAll
    void start() throws Exception {
        topology = TopologyKinds.shared(kind());
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "DROP USER IF EXISTS 'known_dba'@'%'");
            execute(root, "CREATE USER 'known_dba'@'%' " + identifiedBy("dba-pw"));
            execute(root, "GRANT CREATE USER ON *.* TO 'known_dba'@'%'");
            execute(root, "GRANT SELECT ON app.* TO 'known_dba'@'%'");
        }
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(2));
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        gantry = Gantry.start(new Gantry.Options(proxy, urls, List.of(), dataDir, Duration.ofSeconds(1),
                Retention.DEFAULT, Set.of(), Optional.of(new CdcSettings(Duration.ofSeconds(1), 1, Optional.empty(),
                1 << 20, TableFilter.allOf("app"), false))));
        // The caches' freshness is the same test: the stream holds the primary's newest sample.
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> gantry.caches().freshness().live());
        admin = throughGantry("app", "app");
    }

    @AfterAll
    void stop() throws SQLException {
        if (admin != null) {
            admin.close();
        }
        if (gantry != null) {
            gantry.close();
        }
    }

    @Test
    void aLoginOfAKnownAccountAsksNoServer() throws Exception {
        createUser("known_repeat", "pw");
        loginUntilKnown("known_repeat", "pw");
    }

    /**
     * A server closes the connection as soon as it reads COM_QUIT; some clients (node {@code mysql2}) keep their
     * socket until it does. Gantry closed it only a second later, holding every such client's socket, and its own
     * session, that long: at thousands of logins a second, thousands of them.
     */
    @Test
    void aQuitClosesTheConnectionAtOnceAsTheServerDoes() throws Exception {
        createUser("known_quit", "pw"); // mysql_native_password, the one WireClient speaks, on MySQL too
        for (int i = 0; i < 3; i++) {
            try (WireClient direct = WireClient.login(topology.primary().port(), "known_quit", "pw", "app",
                    WireClient.BASE_CAPABILITIES)) {
                assertThat(direct.quit()).as("the server's close after COM_QUIT").isLessThan(Duration.ofMillis(500));
            }
            try (WireClient proxied = WireClient.login(gantry.address().getPort(), "known_quit", "pw", "app",
                    WireClient.BASE_CAPABILITIES)) {
                assertThat(proxied.quit()).as("Gantry's close after COM_QUIT").isLessThan(Duration.ofMillis(500));
            }
        }
    }

    @Test
    void aWrongPasswordIsCheckedOnTheServerBeforeItIsRefused() throws Exception {
        createUser("known_wrong", "pw");
        assertThat(loginThroughGantry("known_wrong", "pw")).isEqualTo(Login.ACCEPTED);
        long lookups = accountStatus().get("Account_lookups");

        assertThat(loginThroughGantry("known_wrong", "guess")).isEqualTo(loginDirectly("known_wrong", "guess"))
                .isEqualTo(Login.refused(1045, "28000"));
        assertThat(accountStatus().get("Account_lookups")).isEqualTo(lookups + 1);
    }

    @ParameterizedTest
    @EnumSource(ChangedOn.class)
    void aNewPasswordIsSeenByTheNextLogin(ChangedOn where) throws Exception {
        String user = "known_pw_" + where.name().toLowerCase();
        createUser(user, "old");
        loginUntilKnown(user, "old");

        change(where, "ALTER USER '" + user + "'@'%' " + identifiedBy("new"));
        Login oldThroughGantry = loginThroughGantry(user, "old");
        Login newThroughGantry = loginThroughGantry(user, "new");

        assertThat(oldThroughGantry).isEqualTo(loginDirectly(user, "old")).isEqualTo(Login.refused(1045, "28000"));
        assertThat(newThroughGantry).isEqualTo(loginDirectly(user, "new")).isEqualTo(Login.ACCEPTED);
    }

    @ParameterizedTest
    @EnumSource(ChangedOn.class)
    void aDroppedAccountIsRefusedByTheNextLogin(ChangedOn where) throws Exception {
        String user = "known_drop_" + where.name().toLowerCase();
        createUser(user, "pw");
        loginUntilKnown(user, "pw");

        change(where, "DROP USER '" + user + "'@'%'");
        Login throughGantry = loginThroughGantry(user, "pw");

        assertThat(throughGantry).isEqualTo(loginDirectly(user, "pw")).isEqualTo(Login.refused(1045, "28000"));
    }

    @ParameterizedTest
    @EnumSource(ChangedOn.class)
    void aLockedAccountIsRefusedByTheNextLoginAndLetInOnceUnlocked(ChangedOn where) throws Exception {
        String user = "known_lock_" + where.name().toLowerCase();
        createUser(user, "pw");
        loginUntilKnown(user, "pw");

        change(where, "ALTER USER '" + user + "'@'%' ACCOUNT LOCK");
        Login lockedThroughGantry = loginThroughGantry(user, "pw");
        assertThat(lockedThroughGantry).as("a pooled connection of the account must not let it in")
                .isEqualTo(loginDirectly(user, "pw")).isEqualTo(lockedAccount());

        change(where, "ALTER USER '" + user + "'@'%' ACCOUNT UNLOCK");
        Login unlockedThroughGantry = loginThroughGantry(user, "pw");
        assertThat(unlockedThroughGantry).isEqualTo(loginDirectly(user, "pw")).isEqualTo(Login.ACCEPTED);
    }

    /** How a login ended: accepted, or refused with an error code and SQLSTATE. */
    record Login(int errorCode, String sqlState) {
        static final Login ACCEPTED = new Login(0, "");

        static Login refused(int errorCode, String sqlState) {
            return new Login(errorCode, sqlState);
        }
    }

    /** A {@code mysql_native_password} password clause (MySQL 8 defaults to caching_sha2_password). */
    private String identifiedBy(String password) {
        return (kind() == TopologyKind.MARIADB ? "IDENTIFIED BY '" : "IDENTIFIED WITH mysql_native_password BY '")
                + password + "'";
    }

    private void createUser(String user, String password) throws SQLException {
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "DROP USER IF EXISTS '" + user + "'@'%'");
            execute(root, "CREATE USER '" + user + "'@'%' " + identifiedBy(password));
            execute(root, "GRANT SELECT ON app.* TO '" + user + "'@'%'");
        }
    }

    /**
     * Logins through Gantry, a statement each, until one is let in on the known entries without a look-up: the
     * first looks the account up and leaves a pooled connection of it. (A look-up that ran before the stream passed
     * the account's own CREATE USER is forgotten by it, so there may be more than two.)
     */
    private void loginUntilKnown(String user, String password) {
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
            Map<String, Long> before = accountStatus();
            try (Connection connection = throughGantry(user, password);
                 Statement statement = connection.createStatement()) {
                statement.execute("SELECT 1");
            }
            Map<String, Long> after = accountStatus();
            return after.get("Account_lookups").equals(before.get("Account_lookups"))
                    && after.get("Account_cache_hits") == before.get("Account_cache_hits") + 1;
        });
    }

    /** Before each test: the stream vouches for known accounts (a loaded machine may sample late for a while). */
    @BeforeEach
    void streamCurrent() {
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> gantry.caches().freshness().live());
    }

    /** Makes the change, and waits until the change stream has applied it (and so forgotten the known accounts). */
    private void change(ChangedOn where, String sql) throws SQLException {
        try (Connection dba = where == ChangedOn.SERVER ? topology.connectAsAdmin(topology.primary())
                : throughGantry("known_dba", "dba-pw")) {
            execute(dba, sql);
        }
        GtidSet executed = GtidSet.parseAnyFlavour(topology.executedGtids(topology.primary()));
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
            String applied = statusValue("CDC Position");
            return !applied.isBlank() && GtidSet.parseAnyFlavour(applied).contains(executed);
        });
    }

    private String statusValue(String name) throws SQLException {
        try (Statement statement = admin.createStatement();
             ResultSet status = statement.executeQuery("SHOW GANTRY STATUS")) {
            while (status.next()) {
                if (status.getString(1).equals(name)) {
                    return status.getString(2);
                }
            }
        }
        throw new AssertionError("no " + name + " in SHOW GANTRY STATUS");
    }

    private Login loginThroughGantry(String user, String password) {
        return login("127.0.0.1:" + gantry.address().getPort(), user, password);
    }

    private Login loginDirectly(String user, String password) {
        DatabaseServer primary = topology.primary();
        return login(primary.address(), user, password);
    }

    private Login login(String address, String user, String password) {
        try (Connection connection = DriverManager.getConnection(jdbcUrl(address), user, password)) {
            return Login.ACCEPTED;
        } catch (SQLException e) {
            return Login.refused(e.getErrorCode(), e.getSQLState());
        }
    }

    private Connection throughGantry(String user, String password) throws SQLException {
        return DriverManager.getConnection(jdbcUrl("127.0.0.1:" + gantry.address().getPort()), user, password);
    }

    /** On MySQL the driver may fetch the server's RSA key, as caching_sha2_password needs without TLS. */
    private String jdbcUrl(String address) {
        String url = "jdbc:mariadb://" + address + "/app";
        return kind() == TopologyKind.MARIADB ? url : url + "?allowPublicKeyRetrieval=true";
    }

    /** The account rows of {@code SHOW GANTRY STATUS}. */
    private Map<String, Long> accountStatus() throws SQLException {
        Map<String, Long> rows = new HashMap<>();
        try (Statement statement = admin.createStatement();
             ResultSet status = statement.executeQuery("SHOW GANTRY STATUS")) {
            while (status.next()) {
                if (status.getString(1).startsWith("Account")) {
                    rows.put(status.getString(1), Long.parseLong(status.getString(2)));
                }
            }
        }
        return rows;
    }
}
