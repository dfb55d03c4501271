package io.gantry.authority;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What every write shares: one transaction, a failure that says what was being done, and telling stored events. */
class AuthorityWritesTest {

    private static final Instant T0 = Instant.parse("2026-11-30T21:00:00Z");

    @TempDir
    Path dir;

    private Authority authority;

    @BeforeEach
    void open() {
        authority = Authority.open(dir.resolve("data"), Clock.fixed(T0, ZoneOffset.UTC));
    }

    @AfterEach
    void close() {
        authority.close();
    }

    private static LiveServerRow live(String host, String purpose) {
        return new LiveServerRow(host, 3306, "shop", "svc", 50, purpose, false, "up", null, T0, 1, "primary", null,
                null, null, null);
    }

    private static StoredServer server(String host, int weight) {
        return new StoredServer(host, 3306, "shop", "svc", weight);
    }

    @Test
    void aFailedWriteChangesNothingAndSaysWhatWasBeingDoneInH2sWordsWithoutTheStatement() {
        authority.replaceLiveServers(List.of(live("db1", "proxy")));

        assertThatThrownBy(() -> authority.replaceLiveServers(List.of(live("db2", "proxy"),
                live("db3", "x".repeat(33)))))
                .isInstanceOf(AuthorityException.class)
                .hasCauseInstanceOf(SQLException.class)
                .hasMessageStartingWith("authority: could not copy the live server state: Value too long for column")
                .message().doesNotContain("SQL statement").doesNotContainPattern("\\[\\d+-\\d+]$");
        assertThat(authority.select("SELECT host FROM gantry.upstream_servers").rows())
                .containsExactly(List.of("db1"));
    }

    @Test
    void listAndWeightChangesAreToldOnceStoredAndOtherEventsAreNot() {
        List<Event> told = new ArrayList<>();
        List<Optional<List<StoredServer>>> listWhenTold = new ArrayList<>();
        authority.publishStoredEventsTo(event -> {
            told.add(event);
            listWhenTold.add(authority.serverList(Purpose.PROXY));
        });

        authority.replaceServerList(Purpose.PROXY, List.of(server("db1", 50)), "start");
        authority.setWeight("db1:3306", 70);
        authority.recordEvent(T0, "db1:3306", EventKind.DOWN, "not told");

        assertThat(told).containsExactlyElementsOf(authority.events(null, 10).subList(0, 2));
        assertThat(told).extracting(Event::kind).containsExactly(EventKind.LIST_CHANGED, EventKind.WEIGHT_CHANGED);
        assertThat(listWhenTold).as("the change is committed when it is told")
                .containsExactly(Optional.of(List.of(server("db1", 50))), Optional.of(List.of(server("db1", 70))));
    }

    @Test
    void aPublisherThatFailsDoesNotUndoTheChange() {
        authority.publishStoredEventsTo(event -> {
            throw new IllegalStateException("bus is gone");
        });

        authority.replaceServerList(Purpose.PROXY, List.of(server("db1", 50)), "start");

        assertThat(authority.serverList(Purpose.PROXY)).contains(List.of(server("db1", 50)));
        assertThat(authority.events(null, 10)).extracting(Event::kind).containsExactly(EventKind.LIST_CHANGED);
    }

    @Test
    void eachHealthSampleIsHandedOverInOrderAndCounted() {
        authority.recordHealth(List.of(
                new HealthSample(T0.plusSeconds(1), "db1:3306", "up", "primary", 0.5, null, null),
                new HealthSample(T0, "db2:3306", "down", "unknown", null, null, null),
                new HealthSample(T0, "db1:3306", "up", "primary", 0.5, null, null)));
        List<String> seen = new ArrayList<>();

        long count = authority.forEachHealthSample(T0, null, Optional.of("db1:3306"),
                sample -> seen.add(sample.at().toString()));

        assertThat(count).isEqualTo(2);
        assertThat(seen).containsExactly("2026-11-30T21:00:00Z", "2026-11-30T21:00:01Z");
    }

    @Test
    void aClosedAuthorityRefusesWritesAndAdminSql() {
        authority.close();

        assertThatThrownBy(() -> authority.recordEvent(T0, null, EventKind.STARTUP, "late"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageEndingWith(Authority.FILE_NAME + " is closed");
        assertThatThrownBy(() -> authority.select("SELECT 1"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageEndingWith(Authority.FILE_NAME + " is closed");
    }
}
