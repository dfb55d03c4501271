package io.gantry.authority;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The timeline as a cluster's: events name their instance, other instances' events are stored once. */
class ClusterTimelineTest {

    private static final Instant T0 = Instant.parse("2026-11-30T21:00:00Z");

    @TempDir
    Path dir;

    private final Clock clock = Clock.fixed(T0, ZoneOffset.UTC);
    private Authority authority;

    @BeforeEach
    void open() {
        authority = Authority.open(dir, clock);
    }

    @AfterEach
    void close() {
        authority.close();
    }

    @Test
    void outsideAClusterEventsNameNoInstanceAndNoneAreToShare() {
        authority.recordEvent(T0, "db1:3306", EventKind.DOWN, "refused");
        assertThat(authority.events(null, 10)).extracting(Event::instance).containsOnlyNulls();
        assertThat(authority.ownEventsAfter(0, 10)).isEmpty();
        assertThat(authority.select("SELECT instance, origin_id FROM gantry.events").rows())
                .containsExactly(java.util.Arrays.asList(null, null));
    }

    @Test
    void inAClusterOwnEventsCarryTheInstanceAndAreToShareByIdFromAGivenOne() {
        authority.recordEvent(T0, "db1:3306", EventKind.DOWN, "before the cluster");
        authority.recordEventsAs("gantry-a");
        long first = authority.recordEvent(T0.plusSeconds(1), "db1:3306", EventKind.UP, "back");
        authority.replaceServerList(Purpose.PROXY, List.of(new StoredServer("db1", 3306, "shop", "svc", 50)), "start");
        assertThat(authority.ownEventsAfter(0, 10)).extracting(Event::kind, Event::instance)
                .containsExactly(tuple(EventKind.UP, "gantry-a"), tuple(EventKind.LIST_CHANGED, "gantry-a"));
        assertThat(authority.ownEventsAfter(first, 10)).extracting(Event::kind)
                .containsExactly(EventKind.LIST_CHANGED);
        assertThat(authority.ownEventsAfter(0, 1)).extracting(Event::id).containsExactly(first);
        assertThat(authority.eventsInstance()).isEqualTo("gantry-a");
    }

    @Test
    void anotherInstancesEventIsStoredOnceWithItsNameAndToldAsStored() {
        authority.recordEventsAs("gantry-a");
        List<Event> told = new java.util.ArrayList<>();
        authority.publishStoredEventsTo(told::add);
        Event down = new Event(41, T0, "db2:3306", EventKind.DOWN, "refused", "gantry-b");
        Event up = new Event(42, T0.plusSeconds(2), "db2:3306", EventKind.UP, "answers", "gantry-b");
        Event other = new Event(7, T0.plusSeconds(1), null, EventKind.STARTUP, "started", "gantry-c");

        assertThat(authority.storeEventsOfOtherInstances(List.of(down, other))).isEqualTo(2);
        assertThat(authority.storeEventsOfOtherInstances(List.of(down, up))).isEqualTo(1);

        assertThat(authority.events(null, 10)).extracting(Event::reason, Event::instance)
                .containsExactly(tuple("refused", "gantry-b"), tuple("started", "gantry-c"),
                        tuple("answers", "gantry-b"));
        assertThat(told).extracting(Event::reason).containsExactly("refused", "started", "answers");
        assertThat(told).allSatisfy(event -> assertThat(event.id()).isNotZero());
        assertThat(authority.pulledEventsUpTo()).isEqualTo(Map.of("gantry-b", 42L, "gantry-c", 7L));
        assertThat(authority.ownEventsAfter(0, 10)).as("pulled events are not this instance's to share").isEmpty();
        assertThat(authority.select("SELECT origin_id FROM gantry.events ORDER BY id").rows())
                .extracting(row -> row.get(0)).containsExactly("41", "7", "42");
    }

    @Test
    void eventsOfAnAuthorityFromBeforeVersion7MigrateWithoutAnInstance() throws Exception {
        authority.recordEvent(T0, "db1:3306", EventKind.DOWN, "old");
        authority.close();
        try (Connection connection = DriverManager.getConnection(AuthorityDatabase.jdbcUrl(dir.toAbsolutePath(),
                true), "sa", DataDirectory.key(dir.toAbsolutePath()));
             Statement statement = connection.createStatement()) {
            statement.execute("DROP INDEX GANTRY.EVENTS_ORIGIN");
            statement.execute("ALTER TABLE GANTRY.EVENTS DROP COLUMN instance");
            statement.execute("ALTER TABLE GANTRY.EVENTS DROP COLUMN origin_id");
            statement.execute("DELETE FROM GANTRY.SCHEMA_VERSION WHERE version >= 7");
        }
        authority = Authority.open(dir, clock);
        assertThat(authority.select("SELECT reason, instance, origin_id FROM gantry.events").rows())
                .containsExactly(java.util.Arrays.asList("old", null, null));
        assertThat(authority.select("SELECT MAX(version) FROM gantry.schema_version").rows())
                .containsExactly(List.of(String.valueOf(Schema.CURRENT_VERSION)));
    }
}
