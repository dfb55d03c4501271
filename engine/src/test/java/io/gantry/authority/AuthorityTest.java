package io.gantry.authority;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuthorityTest {

    private static final Instant T0 = Instant.parse("2026-11-30T21:00:00Z");

    @TempDir
    Path dir;

    private final Clock clock = Clock.fixed(T0, ZoneOffset.UTC);
    private Authority authority;

    @BeforeEach
    void open() {
        authority = Authority.open(dir.resolve("data"), clock);
    }

    @AfterEach
    void close() {
        authority.close();
    }

    private Authority reopen() {
        authority.close();
        authority = Authority.open(dir.resolve("data"), clock);
        return authority;
    }

    private static StoredServer server(String host, int weight) {
        return new StoredServer(host, 3306, "shop", "gantry_svc", weight);
    }

    /** A sample without a connect time (what Gantry stored before it measured one). */
    private static HealthSample sample(String at, String server, String health, String role, Double rtt, Long lag) {
        return new HealthSample(Instant.parse(at), server, health, role, rtt, lag, null);
    }

    @Test
    void serverListsKeepEachServersTlsSettingsAcrossARestart() {
        authority.replaceServerList(Purpose.PROXY, List.of(
                new StoredServer("db1", 3306, "shop", "svc", 50, Optional.of("ssl-mode=VERIFY_CA&ssl-ca=/etc/ca.pem")),
                new StoredServer("db2", 3306, "shop", "svc", 50)), "start");
        authority = reopen();
        assertThat(authority.serverList(Purpose.PROXY).orElseThrow()).extracting(StoredServer::tls)
                .containsExactly(Optional.of("ssl-mode=VERIFY_CA&ssl-ca=/etc/ca.pem"), Optional.of(""));
    }

    @Test
    void theAppliedClusterVersionIsKeptPerClusterAcrossARestart() {
        assertThat(authority.appliedClusterVersion("prod")).isZero();
        authority.saveAppliedClusterVersion("prod", 3);
        authority.saveAppliedClusterVersion("prod", 4);
        authority.saveAppliedClusterVersion("staging", 1);
        authority = reopen();
        assertThat(authority.appliedClusterVersion("prod")).isEqualTo(4);
        assertThat(authority.appliedClusterVersion("staging")).isEqualTo(1);
    }

    @Test
    void createsTheFileTheGantrySchemaAndEveryVersion() {
        assertThat(dir.resolve("data").resolve(Authority.FILE_NAME)).isRegularFile();
        assertThat(authority.select("SELECT version FROM gantry.schema_version ORDER BY version").rows())
                .extracting(row -> row.get(0)).containsExactly("1", "2", "3", "4", "5", "6", "7", "8", "9");
        assertThat(authority.select("SELECT table_name FROM information_schema.tables WHERE table_schema = 'GANTRY' "
                + "ORDER BY table_name").rows())
                .extracting(row -> row.get(0))
                .containsExactly("CDC_POSITION", "CLUSTER_STATE", "EVENTS", "HEALTH_HISTORY", "QUERIES", "QUERY_CACHES",
                        "SCHEMA_VERSION", "SERVER_LIST", "UPSTREAM_SERVERS");
    }

    @Test
    void aNewDataDirectoryIsReadableByItsOwnerOnly() throws IOException {
        Assumptions.assumeTrue(FileSystems.getDefault().supportedFileAttributeViews().contains("posix"));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("data"))))
                .isEqualTo("rwx------");
    }

    @Test
    void reopeningAppliesNoMigrationTwice() {
        reopen();
        reopen();
        assertThat(authority.select("SELECT COUNT(*) FROM gantry.schema_version").rows())
                .containsExactly(List.of(String.valueOf(Schema.CURRENT_VERSION)));
    }

    @Test
    void refusesAnAuthorityWrittenByANewerGantry() throws Exception {
        authority.close();
        try (Connection connection = DriverManager.getConnection(
                AuthorityDatabase.jdbcUrl(dir.resolve("data").toAbsolutePath(), true), "sa",
                DataDirectory.key(dir.resolve("data").toAbsolutePath()));
             Statement statement = connection.createStatement()) {
            statement.execute("INSERT INTO GANTRY.SCHEMA_VERSION VALUES (99, 'from the future', CURRENT_TIMESTAMP)");
        }
        assertThatThrownBy(() -> Authority.open(dir.resolve("data"), clock))
                .isInstanceOf(AuthorityException.class)
                .hasMessageContaining("schema version 99")
                .hasMessageContaining("newer than this Gantry understands (" + Schema.CURRENT_VERSION + ")");
        authority = Authority.open(dir.resolve("other"), clock);
    }

    @Test
    void openExistingNeverCreatesOne() {
        assertThatThrownBy(() -> Authority.openExisting(dir.resolve("nothing-here")))
                .isInstanceOf(AuthorityException.class)
                .hasMessageContaining("no Gantry data in")
                .hasMessageContaining("nothing-here");
        assertThat(dir.resolve("nothing-here")).doesNotExist();
    }

    @Test
    void aListIsEmptyUntilStoredAndSurvivesCloseAndReopen() {
        assertThat(authority.serverList(Purpose.PROXY)).isEmpty();
        List<StoredServer> proxy = List.of(server("db1", 50), server("db2", 30), server("db3", 20));
        authority.replaceServerList(Purpose.PROXY, proxy, "first start, from --upstream-db-url");
        authority.replaceServerList(Purpose.CDC, List.of(server("db3", 90)), "first start, from --cdc-db-url");

        reopen();

        assertThat(authority.serverList(Purpose.PROXY)).contains(proxy);
        assertThat(authority.serverList(Purpose.CDC)).contains(List.of(server("db3", 90)));
    }

    @Test
    void replacingAListRecordsWhatItWasAndWhatItIs() {
        authority.replaceServerList(Purpose.PROXY, List.of(server("db1", 50)), "first start");
        authority.replaceServerList(Purpose.PROXY, List.of(server("db2", 40), server("db1", 60)),
                "ALTER GANTRY CHANGE UPSTREAM");

        assertThat(authority.serverList(Purpose.PROXY)).contains(List.of(server("db2", 40), server("db1", 60)));
        assertThat(authority.events(null, 10))
                .extracting(Event::kind, Event::server, Event::reason)
                .containsExactly(
                        tuple(EventKind.LIST_CHANGED, null,
                                "first start; proxy list now db1:3306|50"),
                        tuple(EventKind.LIST_CHANGED, null,
                                "ALTER GANTRY CHANGE UPSTREAM; proxy list now db2:3306|40, db1:3306|60 "
                                        + "(was db1:3306|50)"));
        assertThat(authority.events(null, 10)).allSatisfy(e -> assertThat(e.at()).isEqualTo(T0));
    }

    @Test
    void aBadListIsRefusedAndTheOldOneStays() {
        authority.replaceServerList(Purpose.PROXY, List.of(server("db1", 50)), "first start");

        assertThatThrownBy(() -> authority.replaceServerList(Purpose.PROXY, List.of(), "empty"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the proxy list needs at least one server");
        assertThatThrownBy(() -> authority.replaceServerList(Purpose.PROXY,
                List.of(server("db2", 50), server("DB2", 10)), "twice"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the proxy list names DB2:3306 twice");
        assertThatThrownBy(() -> server("db1", 101)).hasMessage("weight must be between 1 and 100, not 101");

        assertThat(authority.serverList(Purpose.PROXY)).contains(List.of(server("db1", 50)));
        assertThat(authority.events(null, 10)).hasSize(1);
    }

    @Test
    void thereIsNoWayToStoreAPasswordAndReasonsAreRedacted() throws IOException {
        String password = "Sup3r-S3cret-Pw";
        assertThat(Arrays.stream(StoredServer.class.getRecordComponents()).map(RecordComponent::getName))
                .containsExactly("host", "port", "database", "user", "weight", "tls");
        assertThat(Arrays.stream(LiveServerRow.class.getRecordComponents()).map(RecordComponent::getName))
                .noneMatch(name -> name.toLowerCase().contains("pass"));

        authority.replaceServerList(Purpose.PROXY,
                List.of(new StoredServer("db1", 3306, "shop", "marker_user_4711", 50)),
                "from --upstream-db-url mysql://marker_user_4711:" + password + "@db1:3306/shop|50");
        authority.recordEvent(T0, "db1:3306", EventKind.DOWN,
                "connect failed for mariadb://app:" + password + "@db1:3306/shop?password=" + password);
        assertThat(authority.events(null, 10)).extracting(Event::reason)
                .containsExactly(
                        "from --upstream-db-url mysql://marker_user_4711:***@db1:3306/shop|50; proxy list now db1:3306|50",
                        "connect failed for mariadb://app:***@db1:3306/shop?password=***");
        authority.close();

        List<Path> files;
        try (Stream<Path> walk = Files.walk(dir)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        assertThat(files).isNotEmpty();
        byte[] secret = password.getBytes(StandardCharsets.UTF_8);
        byte[] marker = "marker_user_4711".getBytes(StandardCharsets.UTF_8);
        boolean markerFound = false;
        for (Path file : files) {
            byte[] content = Files.readAllBytes(file);
            assertThat(indexOf(content, secret)).as("password bytes in %s", file).isEqualTo(-1);
            markerFound |= indexOf(content, marker) >= 0;
        }
        assertThat(markerFound).as("the scan finds what was stored (the user name)").isTrue();
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    @Test
    void setWeightChangesEveryListWithTheServerAndRecordsOldAndNew() {
        authority.replaceServerList(Purpose.PROXY, List.of(server("db1", 50), server("db2", 50)), "start");
        authority.replaceServerList(Purpose.CDC, List.of(server("db2", 30)), "start");

        assertThat(authority.setWeight("DB2:3306", 80)).isTrue();

        assertThat(authority.serverList(Purpose.PROXY)).contains(List.of(server("db1", 50), server("db2", 80)));
        assertThat(authority.serverList(Purpose.CDC)).contains(List.of(server("db2", 80)));
        List<Event> events = authority.events(null, 10);
        assertThat(events.get(events.size() - 1)).satisfies(event -> {
            assertThat(event.kind()).isEqualTo(EventKind.WEIGHT_CHANGED);
            assertThat(event.server()).isEqualTo("db2:3306");
            assertThat(event.reason()).isEqualTo("weight of db2:3306 changed: proxy list 50 -> 80, cdc list 30 -> 80");
        });
    }

    @Test
    void theWeightEveryListHasAlreadyIsNoChangeAndNoEvent() {
        authority.replaceServerList(Purpose.PROXY, List.of(server("db1", 50), server("db2", 50)), "start");
        authority.replaceServerList(Purpose.CDC, List.of(server("db2", 30)), "start");
        int events = authority.events(null, 10).size();

        assertThat(authority.setWeight("db1:3306", 50)).isFalse();
        assertThat(authority.events(null, 10)).hasSize(events);

        assertThat(authority.setWeight("db2:3306", 50)).as("the CDC list has 30").isTrue();
        assertThat(authority.events(null, 10).get(events).reason())
                .isEqualTo("weight of db2:3306 changed: cdc list 30 -> 50");
    }

    @Test
    void setWeightRefusesABadWeightOrAnUnknownServerAndChangesNothing() {
        authority.replaceServerList(Purpose.PROXY, List.of(server("db1", 50), server("db2", 50)), "start");

        assertThatThrownBy(() -> authority.setWeight("db1:3306", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("weight must be between 1 and 100, not 0");
        assertThatThrownBy(() -> authority.setWeight("db1:3306", 101))
                .hasMessage("weight must be between 1 and 100, not 101");
        assertThatThrownBy(() -> authority.setWeight("db9:3306", 10))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no server db9:3306 on the server lists (known: db1:3306, db2:3306)");

        assertThat(authority.serverList(Purpose.PROXY)).contains(List.of(server("db1", 50), server("db2", 50)));
        assertThat(authority.events(null, 10)).extracting(Event::kind).containsExactly(EventKind.LIST_CHANGED);
    }

    @Test
    void eventsComeBackOldestFirstAndALimitKeepsTheNewest() {
        long down = authority.recordEvent(T0.plusSeconds(10), "db2:3306", EventKind.DOWN, "connection refused");
        long startup = authority.recordEvent(T0, null, EventKind.STARTUP, "gantry 0.1.0 started");
        long up = authority.recordEvent(T0.plusSeconds(20), "db2:3306", EventKind.UP, "health check passed");
        long role = authority.recordEvent(T0.plusSeconds(20), "db3:3306", EventKind.ROLE_CHANGE, "replica -> primary");

        assertThat(authority.events(null, 100)).extracting(Event::id).containsExactly(startup, down, up, role);
        assertThat(authority.events(null, 2)).extracting(Event::id).containsExactly(up, role);
        assertThat(authority.events(T0.plusSeconds(10), 100)).extracting(Event::id).containsExactly(down, up, role);
        assertThat(authority.events(null, 100).get(0))
                .isEqualTo(new Event(startup, T0, null, EventKind.STARTUP, "gantry 0.1.0 started"));
        assertThatThrownBy(() -> authority.events(null, 0)).hasMessage("limit must be at least 1, not 0");
    }

    @Test
    void healthHistoryFiltersByTimeAndServerAndIsOrderedByTime() {
        authority.recordHealth(List.of(
                sample("2026-11-30T21:00:20.250Z", "db1:3306", "up", "primary", 0.42, null),
                sample("2026-11-30T21:00:00Z", "db2:3306", "up", "replica", 1.5, 120L),
                sample("2026-11-30T21:00:10Z", "db2:3306", "down", "unknown", null, null),
                sample("2026-11-30T21:00:00Z", "db1:3306", "up", "primary", 0.4, null)));

        assertThat(authority.healthHistory(null, null, Optional.empty()))
                .extracting(s -> s.at().toString() + " " + s.server())
                .containsExactly("2026-11-30T21:00:00Z db1:3306", "2026-11-30T21:00:00Z db2:3306",
                        "2026-11-30T21:00:10Z db2:3306", "2026-11-30T21:00:20.250Z db1:3306");
        assertThat(authority.healthHistory(Instant.parse("2026-11-30T21:00:00Z"),
                Instant.parse("2026-11-30T21:00:20.250Z"), Optional.empty()))
                .as("since is inclusive, until exclusive").hasSize(3);
        assertThat(authority.healthHistory(null, null, Optional.of("db2:3306")))
                .containsExactly(sample("2026-11-30T21:00:00Z", "db2:3306", "up", "replica", 1.5, 120L),
                        sample("2026-11-30T21:00:10Z", "db2:3306", "down", "unknown", null, null));
        assertThat(authority.healthHistory(Instant.parse("2026-11-30T21:00:05Z"), null, Optional.of("db1:3306")))
                .extracting(HealthSample::rttMs).containsExactly(0.42);
    }

    @Test
    void theConnectTimeIsStoredBesideTheRoundTrip() {
        authority.recordHealth(List.of(new HealthSample(T0, "db1:3306", "up", "primary", 0.08, null, 2.5),
                new HealthSample(T0, "db2:3306", "down", "unknown", null, null, null)));

        assertThat(authority.healthHistory(null, null, Optional.empty()))
                .extracting(HealthSample::server, HealthSample::rttMs, HealthSample::connectMs)
                .containsExactly(tuple("db1:3306", 0.08, 2.5), tuple("db2:3306", null, null));
    }

    @Test
    void samplesOfAVersionThreeHistoryKeepTheirRoundTripAndHaveNoConnectTime() throws Exception {
        authority.close();
        Path data = dir.resolve("data").toAbsolutePath();
        try (Connection connection = DriverManager.getConnection(AuthorityDatabase.jdbcUrl(data, true), "sa",
                DataDirectory.key(data));
             Statement statement = connection.createStatement()) {
            // The tables as schema version 3 left them, with a sample it recorded.
            statement.execute("ALTER TABLE GANTRY.HEALTH_HISTORY DROP COLUMN connect_ms");
            statement.execute("ALTER TABLE GANTRY.UPSTREAM_SERVERS DROP COLUMN connect_ms");
            statement.execute("DELETE FROM GANTRY.SCHEMA_VERSION WHERE version >= 4");
            statement.execute("INSERT INTO GANTRY.HEALTH_HISTORY VALUES (TIMESTAMP WITH TIME ZONE "
                    + "'2026-11-30 20:00:00+00:00', 'db1:3306', 'up', 'primary', 17.5, NULL)");
        }
        authority = Authority.open(dir.resolve("data"), clock);

        authority.recordHealth(List.of(new HealthSample(T0, "db1:3306", "up", "primary", 0.08, null, 2.5)));
        assertThat(authority.healthHistory(null, null, Optional.empty()))
                .extracting(HealthSample::rttMs, HealthSample::connectMs)
                .containsExactly(tuple(17.5, null), tuple(0.08, 2.5));
        assertThat(authority.select("SELECT * FROM gantry.upstream_servers").columns()).last()
                .isEqualTo("connect_ms");
    }

    @Test
    void aWritableServerThatIsNotThePrimaryIsStoredAsSuchAlsoInAVersionFourHistory() throws Exception {
        authority.close();
        Path data = dir.resolve("data").toAbsolutePath();
        try (Connection connection = DriverManager.getConnection(AuthorityDatabase.jdbcUrl(data, true), "sa",
                DataDirectory.key(data));
             Statement statement = connection.createStatement()) {
            // The role check as schema version 4 left it: 'writable' refused.
            statement.execute("ALTER TABLE GANTRY.HEALTH_HISTORY DROP CONSTRAINT GANTRY.HEALTH_HISTORY_ROLE");
            statement.execute("ALTER TABLE GANTRY.HEALTH_HISTORY ALTER COLUMN role SET DATA TYPE VARCHAR(7)");
            statement.execute("ALTER TABLE GANTRY.HEALTH_HISTORY ADD CHECK (role IN ('primary', 'replica', "
                    + "'unknown'))");
            statement.execute("DELETE FROM GANTRY.SCHEMA_VERSION WHERE version >= 5");
        }
        authority = Authority.open(dir.resolve("data"), clock);

        authority.recordHealth(List.of(new HealthSample(T0, "db1:3306", "up", "writable", 0.08, null, 2.5)));
        assertThat(authority.healthHistory(null, null, Optional.empty())).extracting(HealthSample::role)
                .containsExactly("writable");
    }

    @Test
    void badSamplesAreRefusedBeforeTheyReachTheDatabase() {
        assertThatThrownBy(() -> sample("2026-11-30T21:00:00Z", "db1:3306", "sideways", "primary", null, null))
                .hasMessage("health of db1:3306 must be up or down, not 'sideways'");
        assertThatThrownBy(() -> sample("2026-11-30T21:00:00Z", "db1:3306", "up", "leader", null, null))
                .hasMessage("role of db1:3306 must be primary, writable, replica or unknown, not 'leader'");
        assertThat(sample("2026-11-30T21:00:00.123456789Z", "db1:3306", "up", "primary", null, null).at())
                .isEqualTo(Instant.parse("2026-11-30T21:00:00.123Z"));
        assertThatThrownBy(() -> new HealthSample(T0, "db1:3306", "up", "primary", 0.1, null, -1.0))
                .hasMessage("connect_ms of db1:3306 must be a finite number >= 0, not -1.0");
    }

    @Test
    void pruningRemovesOnlyHealthAndEventsOlderThanTheCutoff() {
        authority.recordHealth(List.of(
                sample("2026-11-20T00:00:00Z", "db1:3306", "up", "primary", 1.0, null),
                sample("2026-11-22T23:59:59.999Z", "db1:3306", "up", "primary", 1.0, null),
                sample("2026-11-23T00:00:00Z", "db1:3306", "up", "primary", 1.0, null),
                sample("2026-11-30T00:00:00Z", "db1:3306", "up", "primary", 1.0, null)));
        authority.recordEvent(Instant.parse("2026-11-01T00:00:00Z"), "db1:3306", EventKind.DOWN, "old");
        authority.recordEvent(Instant.parse("2026-11-29T00:00:00Z"), "db1:3306", EventKind.UP, "new");
        authority.replaceServerList(Purpose.PROXY, List.of(server("db1", 50)), "start");
        authority.savePosition("main", "0-1-100", "db1:3306");

        int deleted = authority.pruneOlderThan(Instant.parse("2026-11-23T00:00:00Z"));

        assertThat(deleted).isEqualTo(3);
        assertThat(authority.healthHistory(null, null, Optional.empty())).extracting(s -> s.at().toString())
                .containsExactly("2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z");
        assertThat(authority.events(null, 10)).extracting(Event::reason).containsExactly("new",
                "start; proxy list now db1:3306|50");
        assertThat(authority.serverList(Purpose.PROXY)).isPresent();
        assertThat(authority.loadPosition("main")).isPresent();
        assertThat(authority.pruneOlderThan(Instant.parse("2026-11-23T00:00:00Z"))).isZero();
    }

    @Test
    void pruningDeletesMoreThanOneBatch() {
        List<HealthSample> samples = new ArrayList<>();
        for (int i = 0; i < 25_000; i++) {
            samples.add(new HealthSample(T0.minusSeconds(i + 1), "db1:3306", "up", "primary", 1.0, null, null));
        }
        authority.recordHealth(samples);
        assertThat(authority.pruneOlderThan(T0)).isEqualTo(25_000);
        assertThat(authority.healthHistory(null, null, Optional.empty())).isEmpty();
    }

    @Test
    void healthHistoryWithALimitGivesTheOldestSamples() {
        authority.recordHealth(List.of(
                sample("2026-11-30T21:00:02Z", "db1:3306", "up", "primary", 0.5, null),
                sample("2026-11-30T21:00:00Z", "db1:3306", "up", "primary", 0.5, null),
                sample("2026-11-30T21:00:01Z", "db1:3306", "up", "primary", 0.5, null)));

        assertThat(authority.healthHistory(null, null, Optional.empty(), 2)).extracting(HealthSample::at)
                .containsExactly(Instant.parse("2026-11-30T21:00:00Z"), Instant.parse("2026-11-30T21:00:01Z"));
        assertThatThrownBy(() -> authority.healthHistory(null, null, Optional.empty(), 0))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void cdcPositionIsSavedReplacedAndLoaded() {
        assertThat(authority.loadPosition("main")).isEmpty();
        authority.savePosition("main", "0-1-100", "db1:3306");
        authority.savePosition("main", "0-1-205,1-2-7", "db2:3306");

        reopen();

        assertThat(authority.loadPosition("main"))
                .contains(new CdcPosition("main", "0-1-205,1-2-7", "db2:3306", T0));
    }

    @Test
    void twoAuthoritiesOnTheSameDirectoryBothReadAndWrite() {
        authority.replaceServerList(Purpose.PROXY, List.of(server("db1", 50)), "start");
        try (Authority second = Authority.open(dir.resolve("data"), clock)) {
            assertThat(second.serverList(Purpose.PROXY)).contains(List.of(server("db1", 50)));
            second.recordEvent(T0, "db1:3306", EventKind.DOWN, "seen by the second");
            assertThat(authority.events(null, 10)).extracting(Event::reason).contains("seen by the second");
        }
        assertThat(authority.serverList(Purpose.PROXY)).isPresent();
    }

    @Test
    void manyThreadsWriteAndReadAtOnce() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                int thread = t;
                work.add(pool.submit(() -> {
                    for (int i = 0; i < 50; i++) {
                        authority.recordHealth(List.of(new HealthSample(T0.plusMillis(i), "db" + thread + ":3306",
                                "up", "replica", 1.0, 0L, null)));
                        authority.recordEvent(T0.plusMillis(i), "db" + thread + ":3306", EventKind.UP, "ok " + i);
                        authority.events(T0, 5);
                        authority.select("SELECT COUNT(*) FROM gantry.health_history");
                    }
                    return null;
                }));
            }
            for (Future<?> future : work) {
                future.get();
            }
        } finally {
            pool.shutdown();
        }
        assertThat(authority.healthHistory(null, null, Optional.empty())).hasSize(300);
        assertThat(authority.events(null, 1000)).hasSize(300);
    }

    @Test
    void aClosedAuthoritySaysSo() {
        authority.close();
        authority.close();
        assertThatThrownBy(() -> authority.events(null, 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
    }

    @Test
    void redactMasksUrlPasswordsAndPasswordSettings() {
        assertThat(Authority.redact("mysql://app:p@ss:w/rd@db1:3306/shop|50"))
                .isEqualTo("mysql://app:***@db1:3306/shop|50");
        assertThat(Authority.redact("a mysql://u:x@h1/db,mysql://v:y@h2/db b"))
                .isEqualTo("a mysql://u:***@h1/db,mysql://v:***@h2/db b");
        assertThat(Authority.redact("jdbc:mysql://h/db?user=u&password=hunter2&ssl=1"))
                .isEqualTo("jdbc:mysql://h/db?user=u&password=***&ssl=1");
        assertThat(Authority.redact("db1:3306 is down")).isEqualTo("db1:3306 is down");
    }
}
