package io.gantry.proxy.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.route.SqlMode;
import io.gantry.route.SqlTokenizer;
import io.gantry.wire.ColumnDefinition.FieldType;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class UserVariablesTest {

    private static List<UserVariables.Name> named(String sql) {
        return UserVariables.named(sql, SqlTokenizer.tokenize(sql, SqlMode.DEFAULT));
    }

    @Test
    void theVariablesATextNamesAreFoundOnceEachWhateverTheirQuotesAndCase() {
        assertThat(named("SET @a = 1, @`odd ``name` = @A + 1; SELECT x INTO @'q' FROM t WHERE y = '@not'"))
                .containsExactly(new UserVariables.Name("a", "@`a`"), new UserVariables.Name("odd `name",
                        "@`odd ``name`"), new UserVariables.Name("q", "@`q`"));
        assertThat(named("SELECT @@session.sql_mode")).isEmpty();
    }

    @Test
    void theCaptureQueryReadsEachValueWithItsCharacterSetCollationAndBytes() {
        assertThat(UserVariables.captureQuery(named("SET @a = 1, @b = 2"))).isEqualTo(
                "SELECT @`a`, CHARSET(@`a`), COLLATION(@`a`), HEX(@`a`), @`b`, CHARSET(@`b`), COLLATION(@`b`), "
                        + "HEX(@`b`)");
    }

    @Test
    void eachValueIsReplayedAsALiteralOfItsOwnType() {
        List<UserVariables.Name> names = named("SET @i = 1, @d = 2, @r = 3, @s = 4, @b = 5, @n = 6");
        List<UserVariables.Captured> values = List.of(
                new UserVariables.Captured("-42", FieldType.LONGLONG, "binary", "binary", "FFFFFFFFFFFFFFD6"),
                new UserVariables.Captured("3.140", FieldType.NEWDECIMAL, "binary", "binary", "3.140"),
                new UserVariables.Captured("0.5", FieldType.DOUBLE, "binary", "binary", "0.5"),
                new UserVariables.Captured("it's", FieldType.VAR_STRING, "utf8mb4", "utf8mb4_unicode_ci", "69742773"),
                new UserVariables.Captured("\u0000", FieldType.VAR_STRING, "binary", "binary", "00"),
                new UserVariables.Captured(null, FieldType.VAR_STRING, "binary", "binary", null));
        assertThat(UserVariables.replays(names, values)).contains(Map.of(
                "i", "SET @`i` = -42",
                "d", "SET @`d` = 3.140",
                "r", "SET @`r` = 0.5E0",
                "s", "SET @`s` = _utf8mb4 X'69742773' COLLATE utf8mb4_unicode_ci",
                "b", "SET @`b` = _binary X'00'",
                "n", "SET @`n` = NULL"));
    }

    @Test
    void valuesTooLongOrOfAnUnknownKindAreNotCarried() {
        List<UserVariables.Name> one = named("SET @a = 1");
        String hex = "41".repeat(UserVariables.MAX_VALUE_BYTES + 1);
        assertThat(UserVariables.replays(one, List.of(new UserVariables.Captured("A", FieldType.LONG_BLOB,
                "latin1", "latin1_swedish_ci", hex)))).isEmpty();
        assertThat(UserVariables.replays(one, List.of(new UserVariables.Captured("x", FieldType.LONG_BLOB,
                "utf8mb4", "utf8mb4' OR 1", "78")))).isEmpty();
        assertThat(UserVariables.replays(one, List.of(new UserVariables.Captured("1,5", FieldType.DOUBLE,
                "binary", "binary", "")))).isEmpty();
        String many = IntStream.range(0, UserVariables.MAX_VARIABLES + 1).mapToObj(i -> "@v" + i + " = 1")
                .collect(Collectors.joining(", ", "SET ", ""));
        List<UserVariables.Name> names = named(many);
        assertThat(UserVariables.replays(names, names.stream().map(n -> new UserVariables.Captured("1",
                FieldType.LONGLONG, "binary", "binary", "01")).toList())).isEmpty();
    }
}
