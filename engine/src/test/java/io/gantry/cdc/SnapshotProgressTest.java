package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class SnapshotProgressTest {

    @Test
    void describesEveryTableInReadingOrder() {
        TestClock clock = new TestClock(Instant.parse("2026-12-01T03:04:05Z"));
        SnapshotProgress progress = new SnapshotProgress("db1:3306", clock);
        assertThat(progress.describe()).endsWith(": listing tables");
        progress.planned("app.a", 10);
        progress.planned("app.b", 2000);
        progress.planned("app.c", 300);
        assertThat(progress.describe()).endsWith("app.a 0/~10 waiting, app.b 0/~2000 waiting, app.c 0/~300 waiting");
        progress.reading("app.a");
        progress.rowsDone("app.a", 12);
        progress.reading("app.b");
        progress.rowsDone("app.b", 1024);
        clock.advance(Duration.ofSeconds(75));
        assertThat(progress.describe()).startsWith("snapshotting from db1:3306 for 75 s: ")
                .endsWith("app.a 12/~10 done, app.b 1024/~2000 reading, app.c 0/~300 waiting");
        progress.finished("done: 1336 rows");
        assertThat(progress.describe()).isEqualTo("done: 1336 rows");
    }
}
