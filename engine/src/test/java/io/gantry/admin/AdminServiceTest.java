package io.gantry.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.authority.Authority;
import io.gantry.authority.EventKind;
import io.gantry.authority.HealthSample;
import io.gantry.authority.Purpose;
import io.gantry.topology.ServerValidator;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The operations that need no server: pages of health history, the timeline, refusals. */
class AdminServiceTest {

    private static final Instant T0 = Instant.parse("2026-11-30T21:00:00Z");
    private static final List<String> SERVERS = List.of("db1:3306", "db2:3306", "db3:3306");

    @TempDir
    Path dir;

    private Authority authority;
    private AdminService admin;

    @BeforeEach
    void open() {
        authority = Authority.open(dir);
        List<UpstreamUrl> urls = SERVERS.stream().map(s -> UpstreamUrl.parse("mysql://svc:pw@" + s + "/app")).toList();
        admin = new AdminService(new Upstreams(urls, Clock.systemUTC()), authority,
                new ServerValidator(Duration.ofSeconds(1), 0), urls, Optional.empty(), Map::of, position -> -1);
    }

    @AfterEach
    void close() {
        authority.close();
    }

    @Test
    void healthPagesNeverSplitARoundAndSayWhereTheNextStarts() {
        List<HealthSample> samples = new ArrayList<>();
        for (int round = 0; round < 5; round++) {
            for (String server : SERVERS) {
                samples.add(new HealthSample(T0.plusSeconds(round), server, "up", "replica", 0.5, 0L, null));
            }
        }
        authority.recordHealth(samples);

        AdminOperations.HealthPage first = admin.healthHistory(T0, null, Optional.empty(), 7);
        assertThat(first.samples()).hasSize(6);
        assertThat(first.next()).contains(T0.plusSeconds(2));
        AdminOperations.HealthPage second = admin.healthHistory(first.next().get(), null, Optional.empty(), 7);
        assertThat(second.samples()).hasSize(6).first().extracting(HealthSample::at).isEqualTo(T0.plusSeconds(2));
        AdminOperations.HealthPage last = admin.healthHistory(second.next().get(), null, Optional.empty(), 7);
        assertThat(last.samples()).hasSize(3);
        assertThat(last.next()).isEmpty();

        AdminOperations.HealthPage one = admin.healthHistory(T0, T0.plusSeconds(3), Optional.of("db2:3306"), 10);
        assertThat(one.samples()).extracting(HealthSample::server).containsOnly("db2:3306").hasSize(3);
        // A page smaller than one round still gives the whole round.
        AdminOperations.HealthPage small = admin.healthHistory(T0, null, Optional.empty(), 2);
        assertThat(small.samples()).hasSize(3);
        assertThat(small.next()).contains(T0.plusSeconds(1));
    }

    @Test
    void limitsOutsideTheirRangeAreInvalid() {
        assertThatThrownBy(() -> admin.healthHistory(null, null, Optional.empty(), 0))
                .isInstanceOf(AdminException.class)
                .extracting(e -> ((AdminException) e).failure()).isEqualTo(AdminResult.Failure.INVALID_STATEMENT);
        assertThatThrownBy(() -> admin.events(null, AdminOperations.MAX_EVENTS + 1))
                .isInstanceOf(AdminException.class);
    }

    @Test
    void aWeightForAServerOnNoListIsRefused() {
        assertThatThrownBy(() -> admin.setWeight("nowhere:1", 5, "test"))
                .isInstanceOf(AdminException.class)
                .hasMessageStartingWith("no server nowhere:1")
                .extracting(e -> ((AdminException) e).failure()).isEqualTo(AdminResult.Failure.REFUSED);
    }

    @Test
    void theWeightAServerHasAlreadyIsANoOpThatSaysSo() {
        List<UpstreamUrl> urls = SERVERS.stream().map(s -> UpstreamUrl.parse("mysql://svc:pw@" + s + "/app")).toList();
        authority.replaceServerList(Purpose.PROXY, ServerLists.stored(urls), "start");
        authority.replaceServerList(Purpose.CDC, ServerLists.stored(urls), "start");
        int events = authority.events(null, 100).size();

        AdminResult.Done same = admin.setWeight("db2:3306", 50, "test");

        assertThat(same.affectedRows()).isZero();
        assertThat(same.message()).isEqualTo("weight of db2:3306 is already 50");
        assertThat(authority.events(null, 100)).hasSize(events);

        AdminResult.Done changed = admin.setWeight("db2:3306", 70, "test");
        assertThat(changed.affectedRows()).isEqualTo(1);
        assertThat(changed.message()).isEqualTo("weight of db2:3306 is now 70");
        assertThat(authority.events(null, 100)).hasSize(events + 1).last()
                .satisfies(e -> assertThat(e.kind()).isEqualTo(EventKind.WEIGHT_CHANGED));
    }

    @Test
    void theChangeStreamsCommandsAreRefusedWhenItIsOff() {
        assertThatThrownBy(() -> admin.stopReplication("test")).isInstanceOf(AdminException.class)
                .hasMessageContaining("--no-cdc");
    }

    @Test
    void serversListsEveryServerWithItsLiveState() {
        assertThat(admin.servers()).extracting(r -> r.address()).containsExactlyElementsOf(SERVERS);
        assertThat(admin.servers()).allSatisfy(r -> assertThat(r.purpose()).isEqualTo("cdc, proxy"));
    }
}
