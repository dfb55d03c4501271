package io.gantry.authority;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class QueryCacheDefinitionsTest {

    private static final Instant T0 = Instant.parse("2026-11-30T21:00:00Z");

    @TempDir
    Path dir;

    private Authority authority;

    @BeforeEach
    void open() {
        authority = Authority.open(dir.resolve("data"));
    }

    @AfterEach
    void close() {
        authority.close();
    }

    private static StoredCache cache(String name, Instant createdAt) {
        return new StoredCache(name, "SELECT * FROM shop.items WHERE id = ?", false, 60, 10, createdAt);
    }

    @Test
    void definitionsComeBackOldestFirstThenByNameAndSurviveAReopen() {
        authority.saveQueryCache(cache("late", T0.plusSeconds(5)));
        authority.saveQueryCache(cache("b", T0));
        authority.saveQueryCache(new StoredCache("a", "SELECT 1", true, 0, 0, T0));

        authority.close();
        authority = Authority.open(dir.resolve("data"));

        assertThat(authority.queryCaches()).containsExactly(new StoredCache("a", "SELECT 1", true, 0, 0, T0),
                cache("b", T0), cache("late", T0.plusSeconds(5)));
    }

    @Test
    void aSecondDefinitionOfTheSameNameIsRefusedAndTheFirstStays() {
        authority.saveQueryCache(cache("items", T0));

        assertThatThrownBy(() -> authority.saveQueryCache(new StoredCache("items", "SELECT 2", true, 1, 0, T0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a cache named items exists already");
        assertThat(authority.queryCaches()).containsExactly(cache("items", T0));
    }

    @Test
    void droppingByNameRemovesThatOneAndDroppingAllRemovesTheRestAndEachSaysHowMany() {
        authority.saveQueryCache(cache("a", T0));
        authority.saveQueryCache(cache("b", T0));
        authority.saveQueryCache(cache("c", T0));

        assertThat(authority.dropQueryCaches("b")).isEqualTo(1);
        assertThat(authority.dropQueryCaches("b")).isZero();
        assertThat(authority.queryCaches()).extracting(StoredCache::name).containsExactly("a", "c");
        assertThat(authority.dropQueryCaches(null)).isEqualTo(2);
        assertThat(authority.queryCaches()).isEmpty();
    }
}
