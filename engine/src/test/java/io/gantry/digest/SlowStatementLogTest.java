package io.gantry.digest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gantry.route.RouteReason;
import io.gantry.route.SqlMode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SlowStatementLogTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Instant STARTED = Instant.parse("2026-12-07T14:30:00.123Z");

    @TempDir
    Path dir;

    private static SlowStatement statement(String text, long nanos) {
        return new SlowStatement(STARTED, nanos, "SELECT * FROM t WHERE id = ? AND name = ?", text,
                SqlMode.DEFAULT, "shop", "app", 12, "127.0.0.1:3307", RanOn.REPLICA,
                RouteReason.READ_ON_SESSION_REPLICA, 0, 1, 0);
    }

    private List<JsonNode> lines(Path file) throws IOException {
        List<JsonNode> lines = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            lines.add(JSON.readTree(line));
        }
        return lines;
    }

    @Test
    void writesOneJsonLinePerStatementWithItsLiteralsMasked() throws IOException {
        Path file = dir.resolve("slow.jsonl");
        try (SlowStatementLog log = SlowStatementLog.open(file, Duration.ofMillis(100), false, 1 << 20)) {
            assertThat(log.isSlow(99_999_999)).isFalse();
            assertThat(log.isSlow(100_000_000)).isTrue();
            log.offer(statement("SELECT * FROM t /* a comment */ WHERE id = 42 AND name = 'secret'", 1_250_004_321L));
        }
        List<JsonNode> lines = lines(file);
        assertThat(lines).hasSize(1);
        JsonNode line = lines.get(0);
        assertThat(line.get("time").asText()).isEqualTo("2026-12-07T14:30:00.123Z");
        assertThat(line.get("latency_ms").decimalValue()).isEqualByComparingTo("1250.004");
        assertThat(line.get("session").asLong()).isEqualTo(12);
        assertThat(line.get("account").asText()).isEqualTo("app");
        assertThat(line.get("schema").asText()).isEqualTo("shop");
        assertThat(line.get("server").asText()).isEqualTo("127.0.0.1:3307");
        assertThat(line.get("ran_on").asText()).isEqualTo("replica");
        assertThat(line.get("reason").asText()).isEqualTo("read_on_session_replica");
        assertThat(line.get("error").asInt()).isZero();
        assertThat(line.get("rows_sent").asLong()).isEqualTo(1);
        assertThat(line.get("shape").asText()).isEqualTo("SELECT * FROM t WHERE id = ? AND name = ?");
        assertThat(line.get("text").asText()).isEqualTo("SELECT * FROM t WHERE id = ? AND name = ?");
        assertThat(line.get("text_cut").asBoolean()).isFalse();
        assertThat(Files.getPosixFilePermissions(file)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
    }

    @Test
    void keepsLiteralsWhenAskedAndCutsLongTexts() throws IOException {
        Path file = dir.resolve("slow.jsonl");
        String longText = "SELECT '" + "x".repeat(5000) + "'";
        try (SlowStatementLog log = SlowStatementLog.open(file, Duration.ZERO, true, 1 << 20)) {
            log.offer(statement("SELECT 'secret'", 1000));
            log.offer(statement(longText, 1000));
        }
        List<JsonNode> lines = lines(file);
        assertThat(lines.get(0).get("text").asText()).isEqualTo("SELECT 'secret'");
        assertThat(lines.get(1).get("text").asText()).isEqualTo(longText.substring(0,
                SlowStatementLog.MAX_TEXT_CHARS));
        assertThat(lines.get(1).get("text_cut").asBoolean()).isTrue();
    }

    @Test
    void writesNoTextWhoseLiteralsCannotBeToldApart() throws IOException {
        Path file = dir.resolve("slow.jsonl");
        try (SlowStatementLog log = SlowStatementLog.open(file, Duration.ZERO, false, 1 << 20)) {
            log.offer(statement("SELECT 'an open quote", 1000));
        }
        assertThat(lines(file).get(0).get("text").isNull()).isTrue();
    }

    @Test
    void rotatesPastItsSizeKeepingFourOlderFiles() throws IOException {
        Path file = dir.resolve("slow.jsonl");
        int statements = 40;
        try (SlowStatementLog log = SlowStatementLog.open(file, Duration.ZERO, false, 1000)) {
            for (int i = 0; i < statements; i++) {
                log.offer(statement("SELECT " + i, 1000));
            }
        }
        assertThat(Files.size(file)).isLessThanOrEqualTo(1000);
        for (int i = 1; i <= SlowStatementLog.KEPT_FILES; i++) {
            assertThat(dir.resolve("slow.jsonl." + i)).exists();
            assertThat(Files.size(dir.resolve("slow.jsonl." + i))).isLessThanOrEqualTo(1000);
        }
        assertThat(dir.resolve("slow.jsonl." + (SlowStatementLog.KEPT_FILES + 1))).doesNotExist();
        // the newest file holds the last statement, .1 the ones just before it
        List<JsonNode> newest = lines(file);
        assertThat(newest.get(newest.size() - 1).get("text").asText()).isEqualTo("SELECT ?");
        assertThat(lines(dir.resolve("slow.jsonl.1"))).isNotEmpty();
    }

    @Test
    void appendsToTheFileItFinds() throws IOException {
        Path file = dir.resolve("slow.jsonl");
        Files.writeString(file, "{\"earlier\":true}\n");
        try (SlowStatementLog log = SlowStatementLog.open(file, Duration.ZERO, false, 1 << 20)) {
            log.offer(statement("SELECT 1", 1000));
        }
        assertThat(lines(file)).hasSize(2);
    }

    @Test
    void withoutAThresholdNothingIsSlowAndNoFileIsMade() {
        SlowStatementLog off = SlowStatementLog.of(DigestSettings.DEFAULTS.inDirectory(dir));
        assertThat(off.isOn()).isFalse();
        assertThat(off.isSlow(Long.MAX_VALUE - 1)).isFalse();
        off.offer(statement("SELECT 1", 1000));
        off.close();
        assertThat(dir.resolve(DigestSettings.SLOW_LOG_FILE)).doesNotExist();
    }

    @Test
    void theSettingsPutTheLogInTheDataDirectoryUnlessAFileIsNamed() {
        DigestSettings on = new DigestSettings(true, 10, Optional.of(Duration.ofSeconds(1)), false, Optional.empty());
        assertThat(on.inDirectory(dir).slowStatementLog()).contains(dir.resolve(DigestSettings.SLOW_LOG_FILE));
        Path named = dir.resolve("elsewhere.jsonl");
        DigestSettings elsewhere = new DigestSettings(true, 10, Optional.of(Duration.ofSeconds(1)), false,
                Optional.of(named));
        assertThat(elsewhere.inDirectory(dir).slowStatementLog()).contains(named);
    }

    @Test
    void aSlowStatementLogNeedsTheDigestsOn() {
        assertThatThrownBy(() -> new DigestSettings(false, 10,
                Optional.of(Duration.ofSeconds(1)), false, Optional.empty()))
                .hasMessage("--slow-statement-ms needs --digests on: the slow statements are found by the digests' "
                        + "timing");
    }
}
