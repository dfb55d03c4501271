package io.gantry.proxy.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SettingReplayTest {

    @ParameterizedTest
    @ValueSource(strings = {
            "SET sql_mode = 'ANSI_QUOTES'",
            "SET SESSION time_zone = '+05:30', autocommit = 1",
            "SET @@session.wait_timeout = 1",
            "set @@sql_select_limit = -1",
            "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci",
            "SET CHARACTER SET latin1",
            "SET autocommit = ON",
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY",
            "SET sql_mode = DEFAULT",
            "USE other",
            "SET NAMES latin1; SET time_zone = '+00:00'",
            "SET /* why */ sql_mode = 'TRADITIONAL' -- done"
    })
    void literalSettingsAreReplayedAsWritten(String sql) {
        assertThat(SettingReplay.of(sql, false)).isInstanceOf(SettingReplay.Verbatim.class);
    }

    @Test
    void anExpressionIsReadBackAndReplayedAsItsValue() {
        SettingReplay replay = SettingReplay.of(
                "SET NAMES latin1, @@session.sql_mode = (SELECT IF(f() = 1, @@sql_mode, '')), wait_timeout = 1 + 1",
                false);
        assertThat(replay).isInstanceOf(SettingReplay.ReadBack.class);
        SettingReplay.ReadBack readBack = (SettingReplay.ReadBack) replay;
        assertThat(readBack.query()).isEqualTo("SELECT @@session.sql_mode, @@session.wait_timeout");
        assertThat(readBack.replayText(List.of("'ANSI'", "2")))
                .isEqualTo("SET NAMES latin1, @@session.sql_mode = 'ANSI', @@session.wait_timeout = 2");
    }

    @Test
    void anExpressionInsideAnExecutableCommentIsSeen() {
        assertThat(SettingReplay.of("SET /*!40101 sql_mode = CONCAT(@@sql_mode, ',ANSI') */", false))
                .isInstanceOf(SettingReplay.ReadBack.class);
    }

    @Test
    void aQuotedVariableNameIsReadBackByItsName() {
        SettingReplay replay = SettingReplay.of("SET `sql_mode` = REPLACE(@@sql_mode, 'STRICT_TRANS_TABLES', '')",
                false);
        assertThat(((SettingReplay.ReadBack) replay).query()).isEqualTo("SELECT @@session.sql_mode");
    }

    @Test
    void whatCannotBeReadBackIsNotReplayed() {
        assertThat(SettingReplay.of("SET sql_mode = UPPER('ansi'); USE other", false))
                .isInstanceOf(SettingReplay.NotReplayable.class);
        assertThat(SettingReplay.of("SET `odd name` = CONCAT('a', 'b')", false))
                .isInstanceOf(SettingReplay.NotReplayable.class);
    }

    @Test
    void valuesBecomeLiteralsThatMeanTheSameEverywhere() {
        assertThat(SettingReplay.literal(null, false, false)).isEqualTo("NULL");
        assertThat(SettingReplay.literal("28800", true, false)).isEqualTo("28800");
        assertThat(SettingReplay.literal("it's", false, false)).isEqualTo("'it''s'");
        assertThat(SettingReplay.literal("a\\b", false, false)).isEqualTo("X'615c62'");
        assertThat(SettingReplay.literal("a\\b", false, true)).isEqualTo("'a\\b'");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "SET time_zone = '+00:00'|@@time_zone",
            "set SESSION Time_Zone='Europe/Paris'|@@time_zone",
            "SET @@session.time_zone = @@global.time_zone|@@time_zone",
            "SET @@time_zone := '+01:00';|@@time_zone",
            "SET LOCAL sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')|@@sql_mode",
            "SET `max_join_size` = 1000|@@max_join_size",
            "SET NAMES utf8mb4 COLLATE utf8mb4_bin|character set",
            "SET CHARACTER SET latin1|character set",
            "SET CHARSET latin1|character set"})
    void aSingleSettingIsKeyedByWhatItAssigns(String sql, String key) {
        assertThat(SettingReplay.replacesKey(sql, false)).isEqualTo(key);
    }

    @ParameterizedTest
    @ValueSource(strings = {"SET time_zone = '+00:00', sql_mode = ''", "SET time_zone = '+00:00'; SET sql_mode = ''",
            "SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "SET ROLE r", "SET @@global.time_zone = '+00:00'",
            "SET @mine = 1", "USE app", "SET sql_mode"})
    void anythingElseIsKeptAsItIs(String sql) {
        assertThat(SettingReplay.replacesKey(sql, false)).isNull();
    }
}
