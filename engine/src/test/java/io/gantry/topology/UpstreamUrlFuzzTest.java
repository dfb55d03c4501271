package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.wire.Fuzzing;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@link UpstreamUrl#parse} and {@link UpstreamUrl#parseList} on URLs built from valid and broken parts and on
 * arbitrary text: a URL parses, or fails with the documented IllegalArgumentException that names the entry (password
 * masked) and what is wrong; nothing else escapes, and the password never shows in the message: neither where the
 * parser reads it (before the last {@code @}) nor in an entry without any {@code @}.
 */
class UpstreamUrlFuzzTest {

    private static final String PASSWORD = "s3cr3t";

    @Provide
    Arbitrary<String> urls() {
        Arbitrary<String> scheme = Arbitraries.of("mysql://", "mariadb://", "mysql:/", "http://", "", "://", "MYSQL://");
        Arbitrary<String> user = Arbitraries.of("app", "", "a%40b", "%", "%zz", "a+b", "us:er", "@");
        Arbitrary<String> password = Arbitraries.of(":" + PASSWORD, "", ":", ":" + PASSWORD + "@x");
        Arbitrary<String> host = Arbitraries.of("127.0.0.1", "db.example", "[::1]", "[::1", "::1", "", "[]", "h]");
        Arbitrary<String> port = Arbitraries.of("", ":3306", ":0", ":65536", ":-1", ":x", ":", ":99999999999", ": 1");
        Arbitrary<String> database = Arbitraries.of("/app", "/", "", "/a/b", "/a?x=1", "/%2F", "/db%", "/é");
        Arbitrary<String> weight = Arbitraries.of("", "|1", "|100", "|0", "|101", "|x", "|", "| 7 ", "|2147483648", "||5");
        Arbitrary<String> assembled = Combinators.combine(scheme, user, password, Arbitraries.of("@", "", "@@"), host,
                port, database, weight).as((s, u, p, at, h, po, d, w) -> s + u + p + at + h + po + d + w);
        Arbitrary<String> arbitrary = Arbitraries.strings().withCharRange(' ', '~').withChars('\n', '\u0000', 'é')
                .ofMaxLength(60);
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(4, assembled), net.jqwik.api.Tuple.of(1, arbitrary),
                net.jqwik.api.Tuple.of(1, Arbitraries.just((String) null))).withoutEdgeCases();
    }

    @Property
    void anEntryParsesOrIsRefusedWithTheDocumentedError(@ForAll("urls") String entry) {
        Fuzzing.Outcome<UpstreamUrl> outcome = Fuzzing.run("parse " + entry, () -> UpstreamUrl.parse(entry));
        if (outcome.failure() == null) {
            UpstreamUrl url = outcome.value();
            assertThat(url.host()).isNotEmpty();
            assertThat(url.port()).isBetween(1, 65535);
            assertThat(url.weight()).isBetween(1, 100);
            assertThat(url.toString()).doesNotContain(PASSWORD);
            return;
        }
        assertDocumented(outcome.failure(), entry);
    }

    @Property
    void aListParsesOrIsRefusedWithTheDocumentedError(@ForAll("urls") String first, @ForAll("urls") String second) {
        List<String> values = first == null || second == null ? List.of(String.valueOf(first)) : List.of(first + "," + second);
        Fuzzing.Outcome<List<UpstreamUrl>> outcome = Fuzzing.run("parseList " + values,
                () -> UpstreamUrl.parseList(values));
        if (outcome.failure() != null) {
            if (!(outcome.failure() instanceof IllegalArgumentException)) {
                throw new AssertionError("parseList " + values + " escaped as " + outcome.failure(), outcome.failure());
            }
            if (values.stream().flatMap(v -> java.util.Arrays.stream(v.split(",")))
                    .filter(entry -> entry.contains(PASSWORD)).allMatch(UpstreamUrlFuzzTest::passwordIsCredentials)) {
                assertThat(outcome.failure().getMessage()).doesNotContain(PASSWORD);
            }
        }
    }

    private static void assertDocumented(RuntimeException failure, String entry) {
        if (!(failure instanceof IllegalArgumentException) || failure.getClass() != IllegalArgumentException.class) {
            throw new AssertionError("parse '" + entry + "' escaped as " + failure
                    + " instead of the documented IllegalArgumentException", failure);
        }
        assertThat(failure.getMessage()).as("message for '%s'", entry).startsWith("bad server URL '");
        if (passwordIsCredentials(entry)) {
            assertThat(failure.getMessage()).as("password masked for '%s'", entry).doesNotContain(PASSWORD);
        }
    }

    /** Whether the text holds the test password where it is one: before the last '@', or with no '@' at all. */
    private static boolean passwordIsCredentials(String entry) {
        if (entry == null || !entry.contains(PASSWORD)) {
            return false;
        }
        int at = entry.lastIndexOf('@');
        return at < 0 || entry.lastIndexOf(PASSWORD) < at;
    }
}
