package io.gantry.proxy.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.command.GantrySessionSql.Setting;
import org.junit.jupiter.api.Test;

/** Gantry's own session settings in SQL: what is Gantry's, what is refused, what goes to the server. */
class GantrySessionSqlTest {

    @Test
    void setsInEveryFormServersAccept() {
        assertThat(parse("SET gantry_read_your_writes = OFF")).isEqualTo(
                new GantrySessionSql.Set(java.util.List.of(Setting.READ_YOUR_WRITES), java.util.List.of("OFF")));
        assertThat(parse("set session GANTRY_READ_FROM_FOLLOWERS='on';")).isEqualTo(
                new GantrySessionSql.Set(java.util.List.of(Setting.READ_FROM_FOLLOWERS), java.util.List.of("on")));
        assertThat(parse("SET @@session.gantry_follower_read_staleness_ms = 500, gantry_read_your_writes = 1"))
                .isEqualTo(new GantrySessionSql.Set(
                        java.util.List.of(Setting.FOLLOWER_READ_STALENESS_MS, Setting.READ_YOUR_WRITES),
                        java.util.List.of("500", "1")));
        assertThat(((GantrySessionSql.Set) parse("SET gantry_follower_read_staleness_ms = DEFAULT")).values())
                .containsExactly((String) null);
    }

    @Test
    void refusesWhatItCannotHonour() {
        assertThat(errorOf("SET gantry_no_such = 1")).contains("Unknown system variable 'gantry_no_such'");
        assertThat(errorOf("SET GLOBAL gantry_read_your_writes = OFF")).contains("SESSION variable of Gantry");
        assertThat(errorOf("SET gantry_read_your_writes = OFF, time_zone = '+00:00'"))
                .contains("SET statement of their own");
        assertThat(errorOf("SET gantry_follower_read_staleness_ms = 100 + 400")).contains("expression");
        assertThat(errorOf("SELECT @@gantry_read_your_writes + 1")).contains("alone");
    }

    @Test
    void readsAndShows() {
        GantrySessionSql.Select select = (GantrySessionSql.Select) parse(
                "SELECT @@gantry_read_from_followers, @@session.gantry_read_your_writes");
        assertThat(select.settings()).containsExactly(Setting.READ_FROM_FOLLOWERS, Setting.READ_YOUR_WRITES);
        assertThat(select.labels()).containsExactly("@@gantry_read_from_followers",
                "@@session.gantry_read_your_writes");
        assertThat(parse("show gantry session")).isInstanceOf(GantrySessionSql.Show.class);
    }

    @Test
    void leavesEverythingElseToTheServer() {
        for (String sql : new String[] {"SELECT * FROM gantry_log", "SELECT 'gantry_read_your_writes'",
                "SET @gantry_read_your_writes = 1", "INSERT INTO t VALUES ('gantry')", "SELECT 1",
                "SHOW GANTRY STATUS", "SET time_zone = '+00:00'"}) {
            assertThat(parse(sql)).as(sql).isInstanceOf(GantrySessionSql.NotOurs.class);
        }
    }

    @Test
    void endsOnAnyMixOfTheWordsItLooksFor() {
        // A client chooses the text: no arrangement of these pieces may keep the parser from answering.
        String[] pieces = {"SET", "SELECT", "SHOW", "GANTRY", "SESSION", "GLOBAL", "gantry_read_your_writes",
                "@@gantry_read_from_followers", "@@session.gantry_x", "gantry_nope", "time_zone", "=", ":=", ",",
                "(", ")", ";", "ON", "DEFAULT", "'x'", "500", "@v", "FROM", "t"};
        java.util.Random random = new java.util.Random(42);
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(10), () -> {
            for (int round = 0; round < 50_000; round++) {
                StringBuilder sql = new StringBuilder();
                int length = 1 + random.nextInt(8);
                for (int i = 0; i < length; i++) {
                    sql.append(pieces[random.nextInt(pieces.length)]).append(' ');
                }
                assertThat(parse(sql.toString())).isNotNull();
            }
        });
    }

    private static GantrySessionSql.Parsed parse(String sql) {
        return GantrySessionSql.parse(io.gantry.route.QueryText.of(sql, io.gantry.route.SqlMode.of(false, false)));
    }

    private static String errorOf(String sql) {
        return ((GantrySessionSql.Refused) parse(sql)).error().message();
    }
}
