package io.gantry.gtid;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.wire.Fuzzing;
import java.util.function.Function;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The GTID and GTID set parsers of both flavours on text glued from valid and broken pieces and on arbitrary text:
 * each parses, or fails with the documented IllegalArgumentException whose message starts {@code bad <what> '};
 * nothing else escapes, and what parses prints text that parses back to an equal value.
 */
class GtidParserFuzzTest {

    private static final String[] PIECES = {
        "3e11fa47-71ca-11e1-9e33-c80aa9429562", "3E11FA47-71CA-11E1-9E33-C80AA9429562", "00000000-0000-0000-0000-000000000001",
        "3e11fa47-71ca-11e1-9e33-c80aa942956", "zz11fa47-71ca-11e1-9e33-c80aa9429562", ":", "::", "-", "--", ",", ", ", ",\n",
        "1", "5", "0", "1-5", "5-1", "9223372036854775806", "9223372036854775807", "99999999999999999999", "tag", "Tag_1",
        "_", "9tag", "a234567890123456789012345678901234", "0-1-1", "0-1-0", "4294967295-1-2", "4294967296-1-2", "1-2",
        "1-2-3-4", "x", " ", "\t", "\u00e9", "\u0000", "\uD800",
    };

    @Provide
    Arbitrary<String> gtidText() {
        Arbitrary<String> glued = Arbitraries.of(PIECES).list().ofMaxSize(24).map(parts -> String.join("", parts));
        Arbitrary<String> arbitrary = Arbitraries.strings().withCharRange(' ', '~').withChars('\n', '\t').ofMaxLength(80);
        Arbitrary<String> long1 = Arbitraries.integers().between(1, 3000)
                .map(n -> "3e11fa47-71ca-11e1-9e33-c80aa9429562:" + "1:3:5-7:".repeat(n) + "9");
        Arbitrary<String> long2 = Arbitraries.integers().between(1, 3000).map(n -> "0-1-1,".repeat(n) + "0-2-2");
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(6, glued), net.jqwik.api.Tuple.of(2, arbitrary),
                net.jqwik.api.Tuple.of(1, long1), net.jqwik.api.Tuple.of(1, long2)).withoutEdgeCases();
    }

    @Property
    void mySqlTextParsesOrFailsAsDocumented(@ForAll("gtidText") String text) {
        check(text, "MySQL GTID set", MySqlGtidSet::parse, MySqlGtidSet::parse);
        check(text, "MySQL GTID", MySqlGtid::parse, MySqlGtid::parse);
        check(text, "MySQL GTID set", t -> GtidSet.parse(t, Flavour.MYSQL), t -> GtidSet.parse(t, Flavour.MYSQL));
    }

    @Property
    void mariaDbTextParsesOrFailsAsDocumented(@ForAll("gtidText") String text) {
        check(text, "MariaDB GTID set", MariaDbGtidSet::parse, MariaDbGtidSet::parse);
        check(text, "MariaDB GTID", MariaDbGtid::parse, MariaDbGtid::parse);
        check(text, "MariaDB GTID set", t -> GtidSet.parse(t, Flavour.MARIADB), t -> GtidSet.parse(t, Flavour.MARIADB));
    }

    private static <T> void check(String text, String what, Function<String, T> parse, Function<String, T> reparse) {
        Fuzzing.Outcome<T> outcome = Fuzzing.run(what + " " + text, () -> parse.apply(text));
        if (outcome.failure() == null) {
            T value = outcome.value();
            assertThat(reparse.apply(value.toString())).as("printed %s parses back", what).isEqualTo(value);
            return;
        }
        RuntimeException failure = outcome.failure();
        if (failure.getClass() != IllegalArgumentException.class) {
            throw new AssertionError(what + " '" + text + "' escaped as " + failure
                    + " instead of the documented IllegalArgumentException", failure);
        }
        assertThat(failure.getMessage()).as("message for '%s'", text).startsWith("bad " + what + " '");
    }
}
