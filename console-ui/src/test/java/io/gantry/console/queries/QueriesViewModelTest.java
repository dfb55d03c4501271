package io.gantry.console.queries;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.QueryShape;
import io.gantry.admin.protocol.Reply;
import io.gantry.console.ui.UiExecutor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class QueriesViewModelTest {

    private static final Instant T0 = Instant.parse("2026-12-07T14:00:00Z");

    @TempDir
    Path dir;

    private static QueryShape shape(String query, long count, long totalMicros, long p99Micros) {
        return new QueryShape(query, "app", "alice", count, 0, "", count, 0, totalMicros, 100, 200, p99Micros, 900,
                count / 4, count - count / 4, 0, 0, "read_on_replica:" + count, T0, T0, false);
    }

    private static QueriesViewModel model() {
        return new QueriesViewModel(UiExecutor.direct(), Runnable::run);
    }

    @Test
    void eachPushReplacesTheRowsAndTheFilterKeepsThoseThatMatch() {
        QueriesViewModel model = model();
        model.push(new Reply.Queries(T0, List.of(shape("SELECT c FROM orders WHERE id = ?", 10, 5_000, 900),
                shape("UPDATE stock SET n = ? WHERE id = ?", 4, 4_000, 1_500))));
        assertThat(model.rows()).extracting(QueryRow::query).containsExactly("SELECT c FROM orders WHERE id = ?",
                "UPDATE stock SET n = ? WHERE id = ?");
        model.filterProperty().set("  ORDERS ");
        assertThat(model.filtered()).extracting(QueryRow::query).containsExactly("SELECT c FROM orders WHERE id = ?");
        model.filterProperty().set("alice");
        assertThat(model.filtered()).hasSize(2);
        model.push(new Reply.Queries(T0.plusSeconds(2), List.of(shape("DELETE FROM t WHERE id = ?", 1, 10, 10))));
        assertThat(model.rows()).extracting(QueryRow::query).containsExactly("DELETE FROM t WHERE id = ?");
        model.filterProperty().set("orders");
        assertThat(model.filtered()).isEmpty();
    }

    @Test
    void theSelectedShapeHasTheMeanOfEachIntervalAndWhereItRan() {
        QueriesViewModel model = model();
        model.push(new Reply.Queries(T0, List.of(shape("SELECT ?", 10, 20_000, 4_000))));
        model.select(model.rows().get(0));
        // the first push: the mean of its whole life, 2 ms
        assertThat(model.history()).containsExactly(new LatencyPoint(T0.toEpochMilli(), 10, 2.0, 4.0));
        // 30 more statements taking 30 ms in all: 1 ms each in that interval
        model.push(new Reply.Queries(T0.plusSeconds(2), List.of(shape("SELECT ?", 40, 50_000, 4_000))));
        // none in the next: no mean
        model.push(new Reply.Queries(T0.plusSeconds(4), List.of(shape("SELECT ?", 40, 50_000, 4_000))));
        assertThat(model.history()).hasSize(3);
        assertThat(model.history().get(1)).isEqualTo(new LatencyPoint(T0.plusSeconds(2).toEpochMilli(), 30, 1.0,
                4.0));
        assertThat(model.history().get(2).statements()).isZero();
        assertThat(model.history().get(2).meanMillis()).isNaN();
        assertThat(model.selectedProperty().get().count()).as("the selected row as last pushed").isEqualTo(40);
        assertThat(model.selectedProperty().get().whereItRan()).isEqualTo("primary 10 (25 %) · replica 30 (75 %)");
    }

    @Test
    void aFlushedRowStartsItsIntervalsAgainAndAShapeThatLeftIsForgotten() {
        QueriesViewModel model = model();
        model.push(new Reply.Queries(T0, List.of(shape("SELECT ?", 10, 20_000, 4_000))));
        model.select(model.rows().get(0));
        QueryShape flushed = new QueryShape("SELECT ?", "app", "alice", 2, 0, "", 2, 0, 6_000, 100, 200, 3_000,
                3_000, 0, 2, 0, 0, "", T0.plusSeconds(1), T0.plusSeconds(1), false);
        model.push(new Reply.Queries(T0.plusSeconds(2), List.of(flushed)));
        assertThat(model.history().get(1).statements()).isEqualTo(2);
        assertThat(model.history().get(1).meanMillis()).isEqualTo(3.0);
        model.push(new Reply.Queries(T0.plusSeconds(4), List.of()));
        assertThat(model.selectedProperty().get()).isNull();
        assertThat(model.history()).isEmpty();
    }

    @Test
    void theHistoryIsBounded() {
        QueriesViewModel model = model();
        for (int i = 0; i < QueriesViewModel.MAX_POINTS + 20; i++) {
            model.push(new Reply.Queries(T0.plusSeconds(2L * i), List.of(shape("SELECT ?", i + 1, 1000L * (i + 1),
                    1000))));
        }
        model.select(model.rows().get(0));
        assertThat(model.history()).hasSize(QueriesViewModel.MAX_POINTS);
        assertThat(model.history().get(0).atMillis()).isEqualTo(T0.plusSeconds(40).toEpochMilli());
    }

    @Test
    void theShownRowsExportAsCsvWithQuotedFields() throws IOException {
        QueriesViewModel model = model();
        model.push(new Reply.Queries(T0, List.of(shape("SELECT a , b FROM t WHERE s = \"x\"", 3, 3_000, 1_000),
                shape("UPDATE t SET a = ?", 1, 100, 100))));
        model.filterProperty().set("select");
        Path file = dir.resolve("queries.csv");
        model.exportCsv(file);
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        assertThat(lines).containsExactly(QueriesViewModel.CSV_HEADER,
                "\"SELECT a , b FROM t WHERE s = \"\"x\"\"\",app,alice,3,0,,3,0,3000,100,200,1000,900,0,3,0,0,"
                        + "read_on_replica:3,2026-12-07T14:00:00Z,2026-12-07T14:00:00Z");
        assertThat(Files.readString(file)).contains("\r\n");
        assertThat(model.messageProperty().get()).isEqualTo("Exported 1 shape to " + file);
        assertThat(model.failedProperty().get()).isFalse();
        model.exportCsv(dir.resolve("missing").resolve("queries.csv"));
        assertThat(model.failedProperty().get()).isTrue();
    }
}
