package io.gantry.proxy.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SingleSettingTest {

    private static SingleSetting parse(String sql) {
        return SingleSetting.parse(QueryText.of(sql, SqlMode.DEFAULT));
    }

    private static Boolean autocommit(String sql) {
        SingleSetting setting = parse(sql);
        return setting == null ? null : setting.autocommit();
    }

    @ParameterizedTest
    @ValueSource(strings = {"SET autocommit=1", "set autocommit = 1", "SET autocommit = ON", "SET autocommit=true",
            "SET SESSION autocommit = 1", "SET LOCAL autocommit=1", "SET @@autocommit=1", "SET @@session.autocommit=1",
            "SET @@LOCAL.AUTOCOMMIT := 1", "SET autocommit=1;", "  SET /* pool */ autocommit = 1",
            "SET AutoCommit=On"})
    void autocommitOnIsReadFromEveryWayOfWritingIt(String sql) {
        assertThat(autocommit(sql)).as(sql).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"SET autocommit=0", "SET autocommit = OFF", "SET SESSION autocommit=false",
            "SET @@session.autocommit = 0;"})
    void autocommitOffIsReadToo(String sql) {
        assertThat(autocommit(sql)).as(sql).isFalse();
    }

    /** What goes to a server as any other setting: Gantry cannot tell what the text sets, or it sets more. */
    @ParameterizedTest
    @ValueSource(strings = {"SET autocommit = 2", "SET autocommit = 01", "SET autocommit = 1.0",
            "SET autocommit = 'ON'", "SET autocommit = @a", "SET autocommit = 1 + 0", "SET autocommit = (1)",
            "SET autocommit = 1, sql_mode = ''", "SET sql_mode = '', autocommit = 1", "SET autocommit = 1; SELECT 1",
            "SET GLOBAL autocommit = 1", "SET @@global.autocommit = 1", "SET SESSION @@session.autocommit = 1",
            "SET autocommit_x = 1", "SET @autocommit = 1", "SET autocommit", "SET autocommit =", "SELECT 1",
            "SET NAMES utf8mb4", "SET `autocommit` = 1", "SET character_set_results = NULL"})
    void nothingElseSetsAutocommit(String sql) {
        assertThat(autocommit(sql)).as(sql).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"SET character_set_results = NULL", "SET character_set_results=null",
            "SET SESSION character_set_results = NULL", "SET @@session.character_set_results = NULL;"})
    void resultsCharsetToNullIsRead(String sql) {
        assertThat(parse(sql).resultsCharsetToNull()).as(sql).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"SET character_set_results = 'NULL'", "SET character_set_results = utf8mb4",
            "SET character_set_results = NULL, autocommit = 1", "SET GLOBAL character_set_results = NULL",
            "SET character_set_client = NULL", "SET NAMES NULL", "SET character_set_results = NULL + 1"})
    void anythingElseIsNotThatSetting(String sql) {
        SingleSetting setting = parse(sql);
        assertThat(setting != null && setting.resultsCharsetToNull()).as(sql).isFalse();
    }

    @Test
    void aSettingOfOneVariableIsReadWithItsName() {
        assertThat(parse("SET SESSION time_zone = UTC")).isEqualTo(
                new SingleSetting("time_zone", "UTC", io.gantry.route.SqlTokenizer.Type.WORD));
        assertThat(parse("SET NAMES latin1")).isNull();
        assertThat(parse("SET PASSWORD = x")).isNull();
    }
}
