package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.authority.Authority;
import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.events.EngineEvent;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.TopologyKinds;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.stream.LongStream;
import java.util.EnumMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The change stream against real servers that die: it moves to the next server by weight, resumes from exactly
 * the last applied transaction, never fails back, passes over a server that lacks applied transactions, and obeys
 * STOP / START / CHANGE CDC, on MariaDB and on MySQL. Every test checks the sink holds every row exactly once, in
 * commit order.
 */
class CdcFailoverIT {

    /** One topology per flavour, started by its first test (the tests kill and restart its servers). */
    private static final Map<TopologyKind, Topology> TOPOLOGIES = new EnumMap<>(TopologyKind.class);
    private static long nextId = 1;

    @TempDir
    Path dir;
    private TopologyKind kind;
    private Topology topology;
    private DatabaseServer replica1;
    private DatabaseServer replica2;
    private Authority authority;
    private CdcStream stream;
    /** The timeline entries the stream published. */
    private final List<Event> published = new CopyOnWriteArrayList<>();

    /** Both flavours, each with a short and the default retry budget. */
    static Stream<Arguments> kindsRetriesAndTimeouts() {
        return TopologyKinds.all().flatMap(kind -> Stream.of(Arguments.of(kind, 1, 1), Arguments.of(kind, 2, 3)));
    }

    private void use(TopologyKind kind) throws SQLException {
        this.kind = kind;
        topology = TOPOLOGIES.get(kind);
        if (topology == null) {
            topology = TopologyKinds.startPrivate(kind, "cdc-failover", 2);
            TOPOLOGIES.put(kind, topology);
            try (Connection primary = topology.connectAsApp(topology.primary());
                 Statement statement = primary.createStatement()) {
                statement.execute("CREATE TABLE cdc_rows (id BIGINT PRIMARY KEY, note VARCHAR(40))");
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        }
        replica1 = topology.replicas().get(0);
        replica2 = topology.replicas().get(1);
    }

    @AfterAll
    static void stopServers() {
        TOPOLOGIES.values().forEach(Topology::close);
        TOPOLOGIES.clear();
    }

    @AfterEach
    void closeStream() {
        if (stream != null) {
            stream.close();
        }
        if (authority != null) {
            authority.close();
        }
        if (topology == null) {
            return;
        }
        for (DatabaseServer server : topology.servers()) {
            if (!server.isRunning()) {
                topology.start(server);
            }
        }
        topology.replicas().forEach(topology::resumeReplication);
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
    }

    @ParameterizedTest(name = "{0}, retries {1}, timeout {2} s")
    @MethodSource("kindsRetriesAndTimeouts")
    void movesToTheNextServerByWeightAndNeverFailsBack(TopologyKind kind, int retries, int timeoutSeconds)
            throws Exception {
        use(kind);
        long first = nextId;
        Recorder recorder = new Recorder();
        start(retries, Duration.ofSeconds(timeoutSeconds), List.of(recorder), url(replica1, 90), url(replica2, 60),
                url(topology.primary(), 30));
        awaitStreamingFrom(replica1);
        insert(50);
        awaitSinkHolds(first, nextId - 1);

        long idsBeforeKill = nextId;
        long killedAt = System.nanoTime();
        topology.kill(replica1);
        insert(1);
        long moved = waitUntil(() -> sink().ids("cdc_rows", "insert").contains(idsBeforeKill), Duration.ofSeconds(60));
        System.out.printf("CdcFailoverIT: %s, retries %d, timeout %d s: kill -9 of the CDC server to the first "
                + "change applied from the next one: %d ms%n", kind, retries, timeoutSeconds,
                (moved - killedAt) / 1_000_000);
        assertThat(stream.activeServer()).contains(replica2.address());
        insert(50);
        awaitSinkHolds(first, nextId - 1);

        topology.start(replica1);
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        insert(50);
        awaitSinkHolds(first, nextId - 1);
        assertThat(stream.activeServer()).as("no fail-back").contains(replica2.address());

        List<Event> moves = events(EventKind.CDC_MOVED);
        assertThat(moves).hasSize(1);
        assertThat(moves.get(0).reason()).contains("from " + replica1.address() + " to " + replica2.address())
                .contains(replica1.address() + " failed").contains("resuming after GTID " + gtidPrefix());
        assertExactlyOnceInOrder(first);
        assertPositionIsThePrimarys();
        assertThat(recorder.insertedIds()).as("a listener sees what the sink holds, once, in order")
                .isEqualTo(sink().ids("cdc_rows", "insert"));
        assertThat(recorder.states()).containsSubsequence("STREAMING " + replica1.address(),
                "RETRYING " + replica1.address(), "STREAMING " + replica2.address());
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void aListenerThatThrowsStopsNeitherTheStreamNorTheSinkNorTheListenersAfterIt(TopologyKind kind)
            throws Exception {
        use(kind);
        long first = nextId;
        Recorder recorder = new Recorder();
        ChangeListener broken = new ChangeListener() {
            @Override
            public void onTransaction(AppliedTransaction transaction) {
                throw new IllegalStateException("broken listener");
            }

            @Override
            public void onStateChange(StateChange change) {
                throw new IllegalStateException("broken listener");
            }
        };
        start(1, Duration.ofSeconds(1), List.of(broken, recorder), url(replica1, 90), url(replica2, 60));
        awaitStreamingFrom(replica1);

        insert(20);
        awaitSinkHolds(first, nextId - 1);

        assertExactlyOnceInOrder(first);
        waitUntil(() -> recorder.insertedIds().size() == 20, Duration.ofSeconds(10));
        assertThat(recorder.insertedIds()).containsExactlyElementsOf(LongStream.range(first, nextId).boxed().toList());
        assertThat(stream.status().lastError()).isEqualTo("none");
        assertThat(stream.status().state()).isEqualTo(CdcStream.State.STREAMING);
    }

    /**
     * An idle stream outlives its read timeout: the server's heartbeats keep it up. Once per flavour, with the short
     * connect timeout (1 s), where the read timeout is the three heartbeats' (3 s) and not the connect timeout; with
     * the default 3 s both are 3 s, so that case would check nothing more.
     */
    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void keepsAnIdleServerPastTheReadTimeout(TopologyKind kind) throws Exception {
        use(kind);
        long first = nextId;
        start(1, Duration.ofSeconds(1), url(replica1, 90), url(replica2, 60));
        awaitStreamingFrom(replica1);
        Thread.sleep(3000 + 1000); // a heartbeat longer than the read timeout
        assertThat(stream.status().lastError()).isEqualTo("none");
        assertThat(stream.activeServer()).contains(replica1.address());
        insert(5);
        awaitSinkHolds(first, nextId - 1);
        assertExactlyOnceInOrder(first);
    }

    @ParameterizedTest(name = "{0}, retries {1}, timeout {2} s")
    @MethodSource("kindsRetriesAndTimeouts")
    void leavesAHungServerAfterTheReadTimeout(TopologyKind kind, int retries, int timeoutSeconds) throws Exception {
        use(kind);
        long first = nextId;
        start(retries, Duration.ofSeconds(timeoutSeconds), url(replica1, 90), url(replica2, 60));
        awaitStreamingFrom(replica1);
        insert(5);
        awaitSinkHolds(first, nextId - 1);

        long idsBeforeFreeze = nextId;
        topology.freeze(replica1);
        try {
            long frozenAt = System.nanoTime();
            insert(1);
            long moved = waitUntil(() -> sink().ids("cdc_rows", "insert").contains(idsBeforeFreeze),
                    Duration.ofSeconds(60));
            long millis = (moved - frozenAt) / 1_000_000;
            System.out.printf("CdcFailoverIT: %s, retries %d, timeout %d s: SIGSTOP of the CDC server to the first "
                    + "change applied from the next one: %d ms%n", kind, retries, timeoutSeconds, millis);
            assertThat(stream.activeServer()).contains(replica2.address());
            // The read timeout (three heartbeats, or the connect timeout if longer), then each retry's timeout.
            long bound = Math.max(3000, timeoutSeconds * 1000L) + retries * (timeoutSeconds * 1000L + 200) + 2000;
            assertThat(millis).isLessThan(bound);
        } finally {
            topology.thaw(replica1);
        }
        assertExactlyOnceInOrder(first);
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void passesOverAServerThatLacksAppliedTransactions(TopologyKind kind) throws Exception {
        use(kind);
        long first = nextId;
        start(1, Duration.ofSeconds(1), url(replica1, 90), url(replica2, 60), url(topology.primary(), 30));
        awaitStreamingFrom(replica1);
        topology.pauseReplication(replica2);
        insert(20);
        awaitSinkHolds(first, nextId - 1);

        topology.kill(replica1);
        insert(5);
        awaitSinkHolds(first, nextId - 1);
        assertThat(stream.activeServer()).contains(topology.primary().address());
        List<Event> skipped = events(EventKind.CDC_SKIPPED);
        assertThat(skipped).hasSize(1);
        assertThat(skipped.get(0).server()).isEqualTo(replica2.address());
        assertThat(skipped.get(0).reason()).contains("lacks transactions").contains("not resuming from it");
        assertThat(events(EventKind.CDC_MOVED).get(0).reason()).contains("to " + topology.primary().address());
        assertExactlyOnceInOrder(first);
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void stopStartAndChangeOfTheList(TopologyKind kind) throws Exception {
        use(kind);
        long first = nextId;
        start(1, Duration.ofSeconds(1), url(replica1, 90), url(replica2, 60));
        awaitStreamingFrom(replica1);
        insert(10);
        awaitSinkHolds(first, nextId - 1);

        assertThat(stream.stopReplication("admin")).isTrue();
        waitUntil(() -> stream.status().state() == CdcStream.State.STOPPED, Duration.ofSeconds(10));
        assertThat(stream.stopReplication("admin")).as("already stopped").isFalse();
        long stoppedAt = nextId;
        String positionWhenStopped = stream.status().position();
        insert(10);
        // The rows are on the stream's server now: a stream that still ran would have applied them.
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        assertThat(stream.status().position()).as("no transaction applied while stopped")
                .isEqualTo(positionWhenStopped);
        assertThat(sink().ids("cdc_rows", "insert")).doesNotContain(stoppedAt);
        assertThat(stream.activeServer()).isEmpty();

        assertThat(stream.startReplication("admin")).isTrue();
        awaitStreamingFrom(replica1);
        awaitSinkHolds(first, nextId - 1);

        // The current server stays on the list: no pause, no move.
        stream.changeServers(List.of(url(replica1, 10), url(replica2, 60)), "admin");
        insert(5);
        awaitSinkHolds(first, nextId - 1);
        assertThat(stream.activeServer()).contains(replica1.address());
        assertThat(events(EventKind.CDC_MOVED)).isEmpty();

        // The current server leaves the list: the stream moves to the best of the new list.
        stream.changeServers(List.of(url(replica2, 60), url(topology.primary(), 20)), "admin");
        awaitStreamingFrom(replica2);
        insert(5);
        awaitSinkHolds(first, nextId - 1);
        assertThat(events(EventKind.CDC_MOVED)).singleElement()
                .satisfies(e -> assertThat(e.reason()).contains("removed " + replica1.address()));
        assertExactlyOnceInOrder(first);
        assertPositionIsThePrimarys();
    }

    // ---- helpers ---------------------------------------------------------------------------------------------

    private void start(int retries, Duration timeout, UpstreamUrl... servers) {
        start(retries, timeout, List.of(), servers);
    }

    private void start(int retries, Duration timeout, List<ChangeListener> listeners, UpstreamUrl... servers) {
        authority = Authority.open(dir.resolve("data"));
        stream = CdcStream.open(authority, List.of(servers), new CdcSettings(timeout, retries,
                Optional.of(sinkPath()), 64 * 1024, TableFilter.parse("app.cdc_rows", "app"), false),
                Clock.systemUTC(), event -> {
                    if (event instanceof EngineEvent.Timeline timeline) {
                        published.add(timeline.event());
                    }
                });
        listeners.forEach(stream::addListener);
        stream.start(address -> false);
    }

    /** A listener that keeps what it is told: the inserted ids of each transaction, and each state and server. */
    private static final class Recorder implements ChangeListener {
        private final List<Long> ids = new CopyOnWriteArrayList<>();
        private final List<String> states = new CopyOnWriteArrayList<>();

        @Override
        public void onTransaction(AppliedTransaction transaction) {
            for (RowChange change : transaction.transaction().changes()) {
                if (change.op() == ChangeOp.INSERT) {
                    ids.add((Long) change.after().get("id"));
                }
            }
        }

        @Override
        public void onStateChange(StateChange change) {
            states.add(change.state() + " " + change.server().orElse("-"));
        }

        List<Long> insertedIds() {
            return List.copyOf(ids);
        }

        List<String> states() {
            return List.copyOf(states);
        }
    }

    private Path sinkPath() {
        return dir.resolve("sink").resolve("changes.jsonl");
    }

    private SinkContents sink() {
        return SinkContents.read(sinkPath());
    }

    private static UpstreamUrl url(DatabaseServer server, int weight) {
        return new UpstreamUrl(server.host(), server.port(), "app", "app", "app", weight);
    }

    private void awaitStreamingFrom(DatabaseServer server) throws InterruptedException {
        waitUntil(() -> stream.activeServer().equals(Optional.of(server.address()))
                && stream.status().state() == CdcStream.State.STREAMING, Duration.ofSeconds(60));
    }

    private void insert(int rows) throws SQLException {
        try (Connection primary = topology.connectAsApp(topology.primary());
             Statement statement = primary.createStatement()) {
            for (int i = 0; i < rows; i++) {
                statement.executeUpdate("INSERT INTO cdc_rows VALUES (" + nextId + ", 'row " + nextId + "')");
                nextId++;
            }
        }
    }

    private void awaitSinkHolds(long from, long to) throws InterruptedException {
        waitUntil(() -> sink().ids("cdc_rows", "insert").contains(to), Duration.ofSeconds(60));
        assertThat(sink().ids("cdc_rows", "insert")).containsAll(LongStream.rangeClosed(from, to).boxed().toList());
    }

    /** Every id this test inserted, once each, in the order they were committed; snapshot rows before them. */
    private void assertExactlyOnceInOrder(long first) {
        List<Long> streamed = sink().ids("cdc_rows", "insert");
        assertThat(streamed).containsExactlyElementsOf(LongStream.range(first, nextId).boxed().toList());
        List<Long> snapshot = sink().ids("cdc_rows", "snapshot");
        assertThat(snapshot).doesNotHaveDuplicates().allMatch(id -> id < first);
    }

    private void assertPositionIsThePrimarys() throws InterruptedException {
        Flavour flavour = kind == TopologyKind.MARIADB ? Flavour.MARIADB : Flavour.MYSQL;
        GtidSet primary = GtidSet.parse(topology.executedGtids(topology.primary()), flavour);
        waitUntil(() -> GtidSet.parse(stream.positionText(), flavour).contains(primary), Duration.ofSeconds(30));
        GtidSet position = GtidSet.parse(stream.positionText(), flavour);
        assertThat(primary.contains(position)).as("position %s is the primary's %s", position, primary).isTrue();
    }

    private List<Event> events(EventKind eventKind) {
        return published.stream().filter(e -> e.kind() == eventKind).toList();
    }

    /** How the stream's position starts: MariaDB's domain 0, MySQL's primary's server UUID. */
    private String gtidPrefix() throws SQLException {
        if (kind == TopologyKind.MARIADB) {
            return "0-";
        }
        try (Connection root = topology.connectAsAdmin(topology.primary());
             Statement statement = root.createStatement();
             java.sql.ResultSet rows = statement.executeQuery("SELECT @@server_uuid")) {
            rows.next();
            return rows.getString(1) + ":";
        }
    }

    static long waitUntil(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within " + timeout);
            }
            Thread.sleep(5);
        }
        return System.nanoTime();
    }
}
