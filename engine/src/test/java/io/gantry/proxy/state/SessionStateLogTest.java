package io.gantry.proxy.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.wire.ComQuery;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class SessionStateLogTest {

    private static List<String> texts(List<byte[]> commands) {
        return commands.stream().map(c -> new String(c, 1, c.length - 1, StandardCharsets.ISO_8859_1)).toList();
    }

    @Test
    void aKeyedCommandReplacesTheOneBeforeItUnderTheSameKey() {
        SessionStateLog log = new SessionStateLog();
        log.record(ComQuery.payload("SET NAMES utf8mb4"));
        long first = log.record("user variable a", ComQuery.payload("SET @`a` = 1"));
        log.record(ComQuery.payload("SET time_zone = '+01:00'"));
        log.record("user variable a", ComQuery.payload("SET @`a` = 2"));
        assertThat(texts(log.since(0))).containsExactly("SET NAMES utf8mb4", "SET time_zone = '+01:00'",
                "SET @`a` = 2");
        assertThat(texts(log.since(first))).containsExactly("SET time_zone = '+01:00'", "SET @`a` = 2");
        assertThat(log.size()).isEqualTo(3);
    }

    @Test
    void theFormatOfResultsLeavesTheUserVariablesOut() {
        SessionStateLog log = new SessionStateLog();
        log.record(ComQuery.payload("SET NAMES utf8mb4"));
        String before = log.settingsContents();
        log.record("user variable a", ComQuery.payload("SET @`a` = 1"));
        assertThat(log.settingsContents()).isEqualTo(before);
        assertThat(log.contents()).isNotEqualTo(before).contains("SET @`a` = 1");
        log.clear();
        assertThat(log.contents()).isEmpty();
        assertThat(log.since(0)).isEmpty();
    }

    @Test
    void aSettingReplacesTheOlderOneOfTheSameVariableAndStaysInTheFormat() {
        SessionStateLog log = new SessionStateLog();
        log.recordSetting("@@time_zone", ComQuery.payload("SET time_zone = 'Europe/Paris'"));
        log.recordSetting("@@sql_mode", ComQuery.payload("SET sql_mode = 'ANSI'"));
        long before = log.version();
        log.recordSetting("@@time_zone", ComQuery.payload("SET time_zone = '+00:00'"));
        assertThat(texts(log.since(0))).containsExactly("SET sql_mode = 'ANSI'", "SET time_zone = '+00:00'");
        assertThat(texts(log.since(before))).containsExactly("SET time_zone = '+00:00'");
        assertThat(log.settingsContents()).contains("+00:00").doesNotContain("Europe/Paris");
        // The same text again moves it to the end, once.
        log.recordSetting("@@sql_mode", ComQuery.payload("SET sql_mode = 'ANSI'"));
        assertThat(texts(log.since(0))).containsExactly("SET time_zone = '+00:00'", "SET sql_mode = 'ANSI'");
        assertThat(log.size()).isEqualTo(2);
        log.clear();
        log.recordSetting("@@time_zone", ComQuery.payload("SET time_zone = '+01:00'"));
        assertThat(texts(log.since(0))).containsExactly("SET time_zone = '+01:00'");
    }

    @Test
    void theDatabaseIsTheOneTheLatestUseOrInitDbChose() {
        SessionStateLog log = new SessionStateLog();
        assertThat(log.database()).isNull();
        log.record(ComQuery.payload("USE `sales db`"));
        assertThat(log.database()).isEqualTo("sales db");
        byte[] initDb = "\u0002app".getBytes(StandardCharsets.ISO_8859_1);
        log.record(initDb);
        assertThat(log.database()).isEqualTo("app");
        log.record(ComQuery.payload("use other;"));
        assertThat(log.database()).isEqualTo("other");
        log.clear();
        assertThat(log.database()).isNull();
    }

    @Test
    void theRecordedCommandsRestoreTheSameReplayAndKeepReplacingWhatTheyReplaced() {
        SessionStateLog log = new SessionStateLog();
        log.record(ComQuery.payload("SET NAMES utf8mb4"));
        log.recordSetting("time_zone", ComQuery.payload("SET time_zone = 'Europe/Paris'"));
        log.record("user variable a", ComQuery.payload("SET @`a` = 1"));
        log.record(ComQuery.payload("USE app"));
        log.recordSetting("time_zone", ComQuery.payload("SET time_zone = '+00:00'"));

        SessionStateLog moved = new SessionStateLog();
        moved.restore(log.recorded());
        assertThat(texts(moved.since(0))).isEqualTo(texts(log.since(0)));
        assertThat(moved.contents()).isEqualTo(log.contents());
        assertThat(moved.settingsContents()).isEqualTo(log.settingsContents());
        assertThat(moved.database()).isEqualTo("app");
        // Replacing goes on after the move: the variable and the setting keep one command each.
        moved.record("user variable a", ComQuery.payload("SET @`a` = 2"));
        moved.recordSetting("time_zone", ComQuery.payload("SET time_zone = '+02:00'"));
        assertThat(texts(moved.since(0))).containsExactly("SET NAMES utf8mb4", "USE app", "SET @`a` = 2",
                "SET time_zone = '+02:00'");
    }
}
