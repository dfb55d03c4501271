package io.gantry.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.authority.Authority;
import io.gantry.cdc.AppliedTransaction;
import io.gantry.cdc.ChangeOp;
import io.gantry.cdc.ChangeTransaction;
import io.gantry.cdc.RowChange;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.Gtid;
import io.gantry.gtid.GtidSet;
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

/** The store and its freshness rules, without servers: a catalogue that knows table {@code app.t} (key {@code id}). */
class QueryCachesTest {

    @TempDir
    Path dir;

    private Authority authority;
    private QueryCaches caches;
    private CacheInvalidation invalidation;

    private static final TableCatalog CATALOG = table -> table.table().equals("t")
            ? new TableCatalog.TableFacts(true, false, "id")
            : table.table().equals("v") ? new TableCatalog.TableFacts(true, true, null)
            : new TableCatalog.TableFacts(false, false, null);

    @BeforeEach
    void start() {
        authority = Authority.open(dir.resolve("data"));
        caches = open(new CacheSettings(10_000, 1_000, Duration.ofSeconds(1), 1));
    }

    private QueryCaches open(CacheSettings settings) {
        QueryCaches opened = new QueryCaches(settings, authority, "app", CATALOG, (db, table) -> true,
                new Upstreams(List.of(new UpstreamUrl("127.0.0.1", 1, "app", "u", "p", 50)), Clock.systemUTC()),
                Clock.systemUTC());
        invalidation = new CacheInvalidation(opened, () -> "");
        return opened;
    }

    @AfterEach
    void stop() {
        caches.close();
        authority.close();
    }

    private static GtidSet at(long sequence) {
        return GtidSet.parse("0-1-" + sequence, Flavour.MARIADB);
    }

    private QueryCache create(String select) {
        caches.create(new CacheStatement.Create(Optional.empty(), false, Optional.empty(), Optional.empty(), select),
                "test");
        return caches.find(caches.shapeOf(select));
    }

    private void change(long sequence, String table, Long before, Long after) {
        RowChange row = new RowChange("app", table, before == null ? ChangeOp.INSERT : after == null ? ChangeOp.DELETE
                : ChangeOp.UPDATE, before == null ? null : Map.of("id", before), after == null ? null
                : Map.of("id", after));
        invalidation.onTransaction(new AppliedTransaction(Gtid.parse("0-1-" + sequence, Flavour.MARIADB),
                new ChangeTransaction("0-1-" + sequence, "db1:3306", Instant.now(), List.of(row)), at(sequence)));
    }

    private static QueryCaches.EntryKey key(QueryCache cache, String parameters) {
        return new QueryCaches.EntryKey(cache, false, "format", parameters);
    }

    /** A fill that starts now and runs a second later than any eviction so far (past the visibility margin). */
    private static CachedResult entry(QueryCache cache, long position, Long key, int bytes) {
        return new CachedResult(new byte[bytes], at(position), cache.fillTicket(), System.currentTimeMillis() + 1_000,
                key);
    }

    @Test
    void aChangeToTheKeyEvictsItsEntriesOnly() {
        QueryCache cache = create("SELECT c FROM t WHERE id = ?");
        assertThat(cache.shape().keyColumn()).isEqualTo("id");
        assertThat(caches.fill(key(cache, "1"), entry(cache, 1, 1L, 10), false, 0)).isTrue();
        assertThat(caches.fill(key(cache, "2"), entry(cache, 1, 2L, 10), false, 0)).isTrue();
        change(2, "t", 2L, 2L);
        long now = System.currentTimeMillis();
        assertThat(caches.lookup(key(cache, "1"), now)).isNotNull();
        assertThat(caches.lookup(key(cache, "2"), now)).isNull();
    }

    @Test
    void aChangeToAnotherTableEvictsNothingAndAnUnkeyedCacheLosesEverything() {
        QueryCache cache = create("SELECT c FROM t WHERE k > ?");
        assertThat(cache.shape().keyColumn()).isNull();
        caches.fill(key(cache, "1"), entry(cache, 1, null, 10), false, 0);
        change(2, "other", 1L, 1L);
        assertThat(caches.lookup(key(cache, "1"), System.currentTimeMillis())).isNotNull();
        change(3, "T", null, 9L);
        assertThat(caches.lookup(key(cache, "1"), System.currentTimeMillis())).isNull();
    }

    @Test
    void aFillStartedBeforeAnEvictionOrFromAnOlderServerIsNotStored() {
        QueryCache cache = create("SELECT c FROM t WHERE id = ?");
        CachedResult startedEarly = entry(cache, 1, 5L, 10);
        change(2, "t", 5L, 5L);
        assertThat(caches.fill(key(cache, "5"), startedEarly, true, 0)).as("even from the primary").isFalse();
        assertThat(caches.fill(key(cache, "5"), entry(cache, 1, 5L, 10), false, 0)).as("server lacks the eviction")
                .isFalse();
        assertThat(caches.fill(key(cache, "6"), entry(cache, 1, 6L, 10), false, 0)).as("another key").isTrue();
        assertThat(caches.fill(key(cache, "5"), entry(cache, 1, 5L, 10), true, 0)).as("the primary has it").isTrue();
        assertThat(caches.fill(key(cache, "5"), entry(cache, 2, 5L, 10), false, 0)).isTrue();
    }

    @Test
    void aFillThatStartedRightAfterItsEvictionMayNotSeeTheChangeYetAndIsNotStored() {
        QueryCache cache = create("SELECT c FROM t WHERE id = ?");
        change(2, "t", 5L, 5L);
        long now = System.currentTimeMillis();
        CachedResult soon = new CachedResult(new byte[10], at(2), cache.fillTicket(), now + 10, 5L);
        assertThat(caches.fill(key(cache, "5"), soon, true, 0)).as("within the margin, even on the primary").isFalse();
        CachedResult later = new CachedResult(new byte[10], at(2), cache.fillTicket(), now + 1_000, 5L);
        assertThat(caches.fill(key(cache, "5"), later, false, 2_000)).as("a replica 2 s behind").isFalse();
        assertThat(caches.fill(key(cache, "5"), later, false, 10)).isTrue();
    }

    @Test
    void memoryIsBoundedAndLargeResultsAreNotCached() {
        QueryCache cache = create("SELECT c FROM t WHERE id = ?");
        assertThat(caches.fill(key(cache, "big"), entry(cache, 1, null, 1_001), false, 0)).isFalse();
        for (int i = 0; i < 100; i++) {
            assertThat(caches.fill(key(cache, Integer.toString(i)), entry(cache, 1, (long) i, 900), false, 0))
                    .isTrue();
        }
        QueryCaches.Table shown = caches.show();
        List<String> row = shown.rows().get(0);
        int evicted = shown.columns().indexOf("evicted_by_memory");
        int bytes = shown.columns().indexOf("bytes");
        org.awaitility.Awaitility.await().untilAsserted(() -> {
            assertThat(Long.parseLong(caches.show().rows().get(0).get(evicted))).isGreaterThan(80);
            assertThat(Long.parseLong(caches.show().rows().get(0).get(bytes))).isLessThanOrEqualTo(10_000);
        });
        assertThat(row.get(shown.columns().indexOf("eviction"))).isEqualTo("key id");
    }

    @Test
    void definitionsSurviveARestartAndRefusalsNameTheReason() {
        create("SELECT c FROM t WHERE id = ?");
        assertThatThrownBy(() -> create("SELECT c FROM t WHERE id = 8")).hasMessageContaining("already caches");
        assertThatThrownBy(() -> create("SELECT * FROM v")).hasMessageContaining("is a view");
        assertThatThrownBy(() -> create("SELECT * FROM nosuch")).hasMessageContaining("does not exist");
        caches.close();
        caches = open(CacheSettings.DEFAULTS);
        assertThat(caches.isEmpty()).isTrue();
        caches.load();
        assertThat(caches.find("SELECT c FROM t WHERE id = ?")).isNotNull();
        caches.drop(caches.snapshot().get(0).name(), "test");
        assertThat(caches.isEmpty()).isTrue();
        assertThat(authority.queryCaches()).isEmpty();
    }

    @Test
    void anEntryOlderThanItsRefreshPeriodIsQueuedOnceUntilRefilledOrLapsed() {
        caches.create(new CacheStatement.Create(Optional.of("refreshed"), false, Optional.of(Duration.ofSeconds(60)),
                Optional.of(Duration.ofSeconds(5)), "SELECT c FROM t WHERE id = ?"), "test");
        QueryCache cache = caches.find("SELECT c FROM t WHERE id = ?");
        List<QueryCaches.EntryKey> queued = new ArrayList<>();
        caches.setRefresher((key, entry) -> queued.add(key));
        Rerun rerun = new Rerun(new Rerun.Format("f", 0, 0, 45, "app", List.of()), null, new byte[] {3});
        long now = System.currentTimeMillis();
        CachedResult fresh = new CachedResult(new byte[10], at(1), cache.fillTicket(), now - 1_000, 1L, rerun);
        CachedResult aging = new CachedResult(new byte[10], at(1), cache.fillTicket(), now - 6_000, 1L, rerun);
        caches.refreshIfDue(key(cache, "1"), fresh, now);
        assertThat(queued).as("younger than the period").isEmpty();
        caches.refreshIfDue(key(cache, "1"), aging, now);
        caches.refreshIfDue(key(cache, "1"), aging, now);
        assertThat(queued).as("queued once while it waits or runs").hasSize(1);
        caches.refreshIfDue(key(cache, "1"), aging, now + 5_000);
        assertThat(queued).as("the claim lapsed").hasSize(2);
        assertThat(caches.fill(key(cache, "1"), new CachedResult(new byte[10], at(1), cache.fillTicket(), now, 1L,
                rerun), false, 0)).isTrue();
        caches.refreshIfDue(key(cache, "1"), aging, now + 5_001);
        assertThat(queued).as("refilled: a new claim").hasSize(3);
        caches.refreshIfDue(key(cache, "2"), new CachedResult(new byte[10], at(1), cache.fillTicket(), now - 6_000,
                2L), now);
        assertThat(queued).as("an entry without a rerun is never queued").hasSize(3);
        caches.refreshed(key(cache, "1"), true);
        caches.refreshed(key(cache, "1"), false);
        QueryCaches.Table shown = caches.show();
        assertThat(shown.columns()).endsWith("refreshes", "refresh_failures");
        assertThat(shown.rows().get(0)).endsWith("1", "1");
    }

    @Test
    void refreshWorkersAreOneToSixtyFour() {
        assertThatThrownBy(() -> new CacheSettings(1, 1, Duration.ofSeconds(1), 0))
                .hasMessage("--cache-refresh-workers must be 1 to 64, not 0");
        assertThatThrownBy(() -> new CacheSettings(1, 1, Duration.ofSeconds(1), 65))
                .hasMessage("--cache-refresh-workers must be 1 to 64, not 65");
        assertThat(CacheSettings.DEFAULTS.refreshWorkers()).isEqualTo(2);
    }

    @Test
    void withoutAStreamingChangeStreamCachesLiveByTtl() {
        assertThat(caches.freshness().live()).isFalse();
        assertThat(caches.freshness().reason()).contains("TTL only");
        QueryCache cache = create("SELECT c FROM t WHERE id = ?");
        CachedResult old = new CachedResult(new byte[10], at(1), cache.fillTicket(),
                System.currentTimeMillis() - QueryCaches.DEFAULT_SHALLOW_TTL.toMillis() - 1, 1L);
        caches.fill(key(cache, "1"), old, false, 0);
        assertThat(caches.lookup(key(cache, "1"), System.currentTimeMillis())).isNull();
    }
}
