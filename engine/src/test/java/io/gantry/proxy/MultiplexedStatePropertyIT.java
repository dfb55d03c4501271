package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.TopologyKinds;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.proxy.backend.BackendPool;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Random interleavings of four sessions of one account (both Connector/Js, text and server-side prepared) through Gantry with multiplexing on (one I/O thread, so
 * every session draws on the same pool, and a retention of 5 ms, so connections change hands between statements),
 * each changing its own state at random: session variables, user variables, the current database, last insert id.
 * After every step each session's view is compared with a model of what it set, and at the start with a direct
 * connection of the same driver. 25 programs of up to 40 steps per run; jqwik shrinks a failing one to the
 * shortest it can.
 */
class MultiplexedStatePropertyIT {

    private static final Driver[] DRIVERS = {Driver.MARIADB_CONNECTOR_J, Driver.MYSQL_CONNECTOR_J,
        Driver.MARIADB_CONNECTOR_J_SERVER_PREPARED, Driver.MYSQL_CONNECTOR_J_SERVER_PREPARED};
    /** One session per driver variant. */
    private static final int SESSIONS = DRIVERS.length;
    private static final String VIEW = "SELECT @@session.time_zone, @@session.sql_mode, "
            + "@@session.group_concat_max_len, @@session.auto_increment_increment, DATABASE(), LAST_INSERT_ID(), "
            + "@a, @b";
    private static final String[] VIEW_NAMES = {"time_zone", "sql_mode", "group_concat_max_len",
        "auto_increment_increment", "DATABASE()", "LAST_INSERT_ID()", "@a", "@b"};

    private static Topology topology;
    private static ProxyHarness gantry;
    /** What a fresh session of each driver sees, straight from the primary. */
    private static final Map<Driver, List<String>> DIRECT = new HashMap<>();

    @BeforeContainer
    static void start() throws SQLException {
        topology = TopologyKinds.shared(TopologyKind.MARIADB);
        gantry = ProxyHarness.start(topology, config -> config.withConnectionRetention(Duration.ofMillis(5))
                .withEventLoopThreads(1).withPool(new BackendPool.Settings(true, Duration.ofSeconds(60), 64)),
                servers -> servers);
        try (Connection connection = topology.connectAsApp(topology.primary());
             Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS multiplexed_ids (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
                    + "who VARCHAR(10))");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        for (Driver driver : DRIVERS) {
            try (Connection direct = gantry.connectDirect(driver, topology.primary())) {
                DIRECT.put(driver, view(direct));
            }
        }
    }

    @AfterContainer
    static void stop() {
        if (gantry != null) {
            gantry.close();
        }
    }

    /** One thing one session does. */
    sealed interface Step permits SetVariable, SetUserVariable, Use, Insert, Idle {
        int session();
    }

    /** {@code SET SESSION name = value}; {@code shown} is what {@code @@session.name} then answers. */
    record SetVariable(int session, String name, String value, String shown) implements Step {
    }

    record SetUserVariable(int session, String name, long value) implements Step {
    }

    record Use(int session, String database) implements Step {
    }

    record Insert(int session) implements Step {
    }

    /** Nothing for a while: the session's connections go back to the pool. */
    record Idle(int session, int millis) implements Step {
    }

    @Provide
    Arbitrary<List<Step>> programs() {
        Arbitrary<Integer> session = Arbitraries.integers().between(0, SESSIONS - 1);
        Arbitrary<Step> timeZone = Combinators.combine(session, Arbitraries.of("+00:00", "+01:00", "-05:30",
                "SYSTEM")).as((s, zone) -> new SetVariable(s, "time_zone", "'" + zone + "'", zone));
        Arbitrary<Step> sqlMode = Combinators.combine(session, Arbitraries.of("", "ANSI_QUOTES", "IGNORE_SPACE",
                "STRICT_ALL_TABLES", "NO_ZERO_DATE")).as((s, mode) -> new SetVariable(s, "sql_mode",
                "'" + mode + "'", mode));
        Arbitrary<Step> concatLength = Combinators.combine(session, Arbitraries.integers().between(1024, 99_999))
                .as((s, length) -> new SetVariable(s, "group_concat_max_len", length.toString(), length.toString()));
        Arbitrary<Step> increment = Combinators.combine(session, Arbitraries.integers().between(1, 4))
                .as((s, step) -> new SetVariable(s, "auto_increment_increment", step.toString(), step.toString()));
        Arbitrary<Step> userVariable = Combinators.combine(session, Arbitraries.of("a", "b"),
                Arbitraries.longs().between(-1000, 1000)).as(SetUserVariable::new);
        Arbitrary<Step> use = Combinators.combine(session, Arbitraries.of("app", "information_schema"))
                .as(Use::new);
        Arbitrary<Step> insert = session.map(Insert::new);
        Arbitrary<Step> idle = Combinators.combine(session, Arbitraries.integers().between(10, 30)).as(Idle::new);
        return Arbitraries.frequencyOf(Tuple.of(3, timeZone), Tuple.of(3, sqlMode), Tuple.of(2, concatLength),
                        Tuple.of(1, increment), Tuple.of(2, userVariable), Tuple.of(1, use), Tuple.of(3, insert),
                        Tuple.of(4, idle))
                .list().ofMinSize(1).ofMaxSize(40);
    }

    @Property(tries = 25, shrinking = ShrinkingMode.BOUNDED)
    void everySessionSeesOnlyItsOwnState(@ForAll("programs") List<Step> program) throws Exception {
        List<Connection> connections = new ArrayList<>();
        List<List<String>> models = new ArrayList<>();
        try {
            for (int i = 0; i < SESSIONS; i++) {
                Driver driver = DRIVERS[i % DRIVERS.length];
                Connection connection = gantry.connect(driver);
                connections.add(connection);
                List<String> seen = view(connection);
                assertThat(seen).as("session %d's first view against a direct connection of %s", i, driver)
                        .isEqualTo(DIRECT.get(driver));
                models.add(new ArrayList<>(seen));
            }
            for (int index = 0; index < program.size(); index++) {
                Step step = program.get(index);
                run(step, connections.get(step.session()), models.get(step.session()));
                for (int i = 0; i < SESSIONS; i++) {
                    List<String> seen = view(connections.get(i));
                    List<String> expected = models.get(i);
                    for (int column = 0; column < VIEW_NAMES.length; column++) {
                        assertThat(seen.get(column)).as("after step %d (%s), session %d's %s", index, step, i,
                                VIEW_NAMES[column]).isEqualTo(expected.get(column));
                    }
                }
            }
        } finally {
            for (Connection connection : connections) {
                connection.close();
            }
        }
    }

    private static void run(Step step, Connection connection, List<String> model) throws Exception {
        if (step instanceof SetVariable set) {
            execute(connection, "SET SESSION " + set.name() + " = " + set.value());
            model.set(indexOf(set.name()), set.shown());
        } else if (step instanceof SetUserVariable set) {
            execute(connection, "SET @" + set.name() + " = " + set.value());
            model.set(indexOf("@" + set.name()), Long.toString(set.value()));
        } else if (step instanceof Use use) {
            execute(connection, "USE " + use.database());
            model.set(indexOf("DATABASE()"), use.database());
        } else if (step instanceof Insert insert) {
            try (Statement statement = connection.createStatement()) {
                statement.executeUpdate("INSERT INTO app.multiplexed_ids (who) VALUES ('s" + insert.session() + "')",
                        Statement.RETURN_GENERATED_KEYS);
                try (ResultSet keys = statement.getGeneratedKeys()) {
                    assertThat(keys.next()).as("a generated key").isTrue();
                    model.set(indexOf("LAST_INSERT_ID()"), Long.toString(keys.getLong(1)));
                }
            }
        } else if (step instanceof Idle idle) {
            Thread.sleep(idle.millis());
        }
    }

    private static int indexOf(String name) {
        for (int i = 0; i < VIEW_NAMES.length; i++) {
            if (VIEW_NAMES[i].equals(name)) {
                return i;
            }
        }
        throw new IllegalArgumentException(name);
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    /** The session's view, as a prepared statement (server-side with the drivers set up for it). */
    private static List<String> view(Connection connection) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(VIEW);
             ResultSet rows = statement.executeQuery()) {
            rows.next();
            List<String> values = new ArrayList<>();
            for (int i = 1; i <= VIEW_NAMES.length; i++) {
                values.add(rows.getString(i));
            }
            return values;
        }
    }
}
