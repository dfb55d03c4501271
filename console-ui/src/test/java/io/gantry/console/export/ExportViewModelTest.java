package io.gantry.console.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.HealthPoint;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.console.FakeEngine;
import io.gantry.console.ui.UiExecutor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExportViewModelTest {

    private static final Instant NOW = Instant.parse("2026-12-02T03:00:00Z");
    private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

    @TempDir
    Path dir;

    @Test
    void writesEveryPageAsTheHealthCsvAndReportsTheRows() throws Exception {
        FakeEngine engine = FakeEngine.answering(request -> {
            Request.Health health = (Request.Health) request;
            if (health.from().equals(Instant.parse("2026-12-02T02:00:00Z"))) {
                return new Reply.Health(request.id(), List.of(new HealthPoint(Instant.parse(
                        "2026-12-02T02:00:00.5Z"), "127.0.0.1:33062", "up", "replica", 0.50, 3L, 4.25)),
                        Instant.parse("2026-12-02T02:30:00Z"));
            }
            return new Reply.Health(request.id(), List.of(new HealthPoint(Instant.parse("2026-12-02T02:30:00Z"),
                    "127.0.0.1:33062", "down", "unknown", null, null, null)), null);
        });
        ExportViewModel model = new ExportViewModel(UiExecutor.direct(), engine, CLOCK, Runnable::run);
        model.fromProperty().set("-1h");
        model.untilProperty().set("");
        model.serverProperty().set("127.0.0.1:33062");
        Path file = dir.resolve("health.csv");
        model.fileProperty().set(file.toString());

        assertThat(model.start()).isTrue();

        assertThat(model.failedProperty().get()).as(model.messageProperty().get()).isFalse();
        assertThat(Files.readString(file, StandardCharsets.UTF_8))
                .isEqualTo("at,server,health,role,rtt_ms,lag_ms,connect_ms\r\n"
                        + "2026-12-02T02:00:00.500Z,127.0.0.1:33062,up,replica,0.5,3,4.25\r\n"
                        + "2026-12-02T02:30:00.000Z,127.0.0.1:33062,down,unknown,,,\r\n");
        assertThat(model.resultProperty().get()).isEqualTo(new ExportViewModel.Result(file.toAbsolutePath(), 2));
        assertThat(model.progressProperty().get()).isEqualTo(1.0);
        Request.Health first = (Request.Health) engine.requests().get(0);
        assertThat(first.until()).isEqualTo(NOW);
        assertThat(first.server()).isEqualTo("127.0.0.1:33062");
        assertThat(Files.list(dir)).containsExactly(file);
    }

    @Test
    void aFailedExportSaysWhyAndLeavesNoFile() throws Exception {
        FakeEngine engine = FakeEngine.answering(request -> new Reply.Error(request.id(), "failed", "closed"));
        ExportViewModel model = new ExportViewModel(UiExecutor.direct(), engine, CLOCK, Runnable::run);
        model.fileProperty().set(dir.resolve("health.csv").toString());
        model.start();
        assertThat(model.failedProperty().get()).isTrue();
        assertThat(model.messageProperty().get()).contains("the engine refused the export: closed");
        assertThat(Files.list(dir)).isEmpty();
    }

    @Test
    void badFieldsAreRefusedBeforeAnyRequest() {
        FakeEngine engine = FakeEngine.answering(request -> null);
        ExportViewModel model = new ExportViewModel(UiExecutor.direct(), engine, CLOCK, Runnable::run);
        model.fileProperty().set(dir.resolve("health.csv").toString());
        model.fromProperty().set("yesterday");
        assertThat(model.start()).isFalse();
        assertThat(model.messageProperty().get()).startsWith("'from': 'yesterday' is not a time");
        model.fromProperty().set("2026-12-02T04:00:00Z");
        model.untilProperty().set("2026-12-02");
        assertThat(model.start()).isFalse();
        assertThat(model.messageProperty().get()).contains("must be before");
        model.fromProperty().set("-1d");
        model.fileProperty().set("");
        assertThat(model.start()).isFalse();
        assertThat(model.messageProperty().get()).isEqualTo("choose a file to write");
        assertThat(engine.requests()).isEmpty();
    }

    @Test
    void timesReadAsExportHealthReadsThem() {
        assertThat(ExportViewModel.parseTime("from", "-30m", NOW)).isEqualTo(NOW.minusSeconds(1800));
        assertThat(ExportViewModel.parseTime("from", "2026-11-30", NOW)).isEqualTo(Instant.parse("2026-11-30T00:00:00Z"));
        assertThat(ExportViewModel.parseTime("from", "2026-11-30T21:00:00+01:00", NOW))
                .isEqualTo(Instant.parse("2026-11-30T20:00:00Z"));
        assertThat(ExportViewModel.parseTime("from", "now", NOW)).isEqualTo(NOW);
        assertThat(ExportViewModel.parseTime("from", " ", NOW)).isNull();
    }
}
