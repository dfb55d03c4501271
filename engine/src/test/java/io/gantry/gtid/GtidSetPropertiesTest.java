package io.gantry.gtid;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Algebra laws of both flavours over random sets, hand-rolled with a seeded {@link Random}: every case uses its own
 * seed ({@code SEED + case}), printed in the failure message, so a failure replays alone. Besides the laws, each set
 * is checked against a brute-force model (the plain set of its transactions for MySQL, the highest sequence per
 * domain and server for MariaDB), and is generated as text with random case, spacing, order and repetitions, so the
 * parser is exercised as well.
 */
class GtidSetPropertiesTest {

    private static final long SEED = 20_240_517L;
    private static final int CASES = 2000;

    private static final UUID[] SOURCES = {
        UUID.fromString("3e11fa47-71ca-11e1-9e33-c80aa9429562"),
        UUID.fromString("00000000-0000-0000-0000-000000000001"),
        UUID.fromString("80000000-0000-0000-0000-000000000000"),
        UUID.fromString("ffffffff-ffff-ffff-ffff-fffffffffffe"),
    };
    private static final String[] TAGS = {"", "", "a", "Tag_1"};
    private static final long[] SERVERS = {1, 2, 33061, MariaDbGtid.MAX_ID};
    private static final String[] BLANKS = {"", "", "", " ", "\n", " \n", "\t"};

    private static void forEachCase(Consumer<Random> check) {
        for (int i = 0; i < CASES; i++) {
            long seed = SEED + i;
            try {
                check.accept(new Random(seed));
            } catch (AssertionError e) {
                throw new AssertionError("case with seed " + seed + ": " + e.getMessage(), e);
            }
        }
    }

    /* ---------------------------------------------------------------- MySQL */

    /** A random MySQL set and the plain set of its transactions. */
    private record MySqlSample(MySqlGtidSet set, Set<MySqlGtid> model, String text) {
    }

    private static long mysqlNumber(Random r) {
        return r.nextInt(10) == 0 ? MySqlGtid.MAX_TRANSACTION - r.nextInt(6) : 1 + r.nextInt(30);
    }

    private static MySqlGtid mysqlGtid(Random r) {
        return new MySqlGtid(SOURCES[r.nextInt(SOURCES.length)], TAGS[r.nextInt(TAGS.length)], mysqlNumber(r));
    }

    private static String randomCase(Random r, String text) {
        return r.nextBoolean() ? text.toUpperCase(Locale.ROOT) : text;
    }

    private static String blank(Random r) {
        return BLANKS[r.nextInt(BLANKS.length)];
    }

    private static MySqlSample mysqlSample(Random r) {
        Set<MySqlGtid> model = new HashSet<>();
        List<String> elements = new ArrayList<>();
        int elementCount = r.nextInt(5);
        for (int e = 0; e < elementCount; e++) {
            UUID source = SOURCES[r.nextInt(SOURCES.length)];
            StringBuilder element = new StringBuilder(randomCase(r, source.toString()));
            int tagCount = 1 + r.nextInt(2);
            for (int t = 0; t < tagCount; t++) {
                // Untagged numbers come right after the UUID; once a tag is given, only tags may follow.
                String tag = t == 0 ? TAGS[r.nextInt(TAGS.length)] : TAGS[2 + r.nextInt(TAGS.length - 2)];
                if (!tag.isEmpty()) {
                    element.append(blank(r)).append(':').append(blank(r)).append(randomCase(r, tag));
                }
                int intervals = 1 + r.nextInt(3);
                for (int k = 0; k < intervals; k++) {
                    long start = mysqlNumber(r);
                    long end = start + Math.min(MySqlGtid.MAX_TRANSACTION - start, r.nextInt(3) == 0 ? 0 : r.nextInt(6));
                    element.append(blank(r)).append(':').append(blank(r)).append(start);
                    if (start != end || r.nextInt(4) == 0) {
                        element.append(blank(r)).append('-').append(blank(r)).append(end);
                    }
                    for (long n = start; n <= end; n++) {
                        model.add(new MySqlGtid(source, tag, n));
                    }
                }
            }
            elements.add(element.toString());
        }
        StringBuilder text = new StringBuilder(blank(r));
        for (int e = 0; e < elements.size(); e++) {
            if (e > 0) {
                text.append(blank(r)).append(',').append(blank(r));
            }
            text.append(elements.get(e));
        }
        text.append(blank(r));
        return new MySqlSample(MySqlGtidSet.parse(text.toString()), model, text.toString());
    }

    private static MySqlGtidSet mysqlOf(Set<MySqlGtid> model) {
        return MySqlGtidSet.of(model.toArray(MySqlGtid[]::new));
    }

    /** Every GTID of the models, plus random probes and their neighbours. */
    private static Set<MySqlGtid> mysqlProbes(Random r, Set<MySqlGtid> a, Set<MySqlGtid> b) {
        Set<MySqlGtid> probes = new HashSet<>(a);
        probes.addAll(b);
        for (MySqlGtid g : new ArrayList<>(probes)) {
            if (g.transaction() > 1) {
                probes.add(new MySqlGtid(g.source(), g.tag(), g.transaction() - 1));
            }
            if (g.transaction() < MySqlGtid.MAX_TRANSACTION) {
                probes.add(new MySqlGtid(g.source(), g.tag(), g.transaction() + 1));
            }
        }
        for (int i = 0; i < 20; i++) {
            probes.add(mysqlGtid(r));
        }
        return probes;
    }

    @Test
    void mysqlSetsAgreeWithTheModelOfTheirTransactions() {
        forEachCase(r -> {
            MySqlSample a = mysqlSample(r);
            MySqlSample b = mysqlSample(r);
            Set<MySqlGtid> union = new HashSet<>(a.model());
            union.addAll(b.model());
            Set<MySqlGtid> difference = new HashSet<>(a.model());
            difference.removeAll(b.model());

            assertThat(a.set()).as("parse(%s) equals the set built GTID by GTID", a.text()).isEqualTo(mysqlOf(a.model()));
            assertThat(a.set().isEmpty()).isEqualTo(a.model().isEmpty());
            for (MySqlGtid g : mysqlProbes(r, a.model(), b.model())) {
                assertThat(a.set().containsTransaction(g)).as("%s contains %s", a.set(), g).isEqualTo(a.model().contains(g));
            }
            assertThat(a.set().union(b.set())).isEqualTo(mysqlOf(union));
            assertThat(a.set().subtract(b.set())).isEqualTo(mysqlOf(difference));
            assertThat(a.set().contains(b.set())).as("%s contains %s", a.set(), b.set())
                    .isEqualTo(a.model().containsAll(b.model()));
        });
    }

    @Test
    void mysqlUnionIsCommutativeAssociativeAndIdempotent() {
        forEachCase(r -> {
            MySqlGtidSet a = mysqlSample(r).set();
            MySqlGtidSet b = mysqlSample(r).set();
            MySqlGtidSet c = mysqlSample(r).set();

            assertThat(a.union(b)).isEqualTo(b.union(a));
            assertThat(a.union(b).union(c)).isEqualTo(a.union(b.union(c)));
            assertThat(a.union(a)).isEqualTo(a);
            assertThat(a.union(MySqlGtidSet.EMPTY)).isEqualTo(a);
        });
    }

    @Test
    void mysqlUnionContainsBothOperands() {
        forEachCase(r -> {
            MySqlGtidSet a = mysqlSample(r).set();
            MySqlGtidSet b = mysqlSample(r).set();

            assertThat(a.union(b).contains(a)).isTrue();
            assertThat(a.union(b).contains(b)).isTrue();
            assertThat(a.contains(b)).isEqualTo(a.union(b).equals(a));
        });
    }

    @Test
    void mysqlContainsIsReflexiveAntisymmetricAndTransitive() {
        forEachCase(r -> {
            MySqlGtidSet a = mysqlSample(r).set();
            MySqlGtidSet b = mysqlSample(r).set();
            MySqlGtidSet c = mysqlSample(r).set();
            MySqlGtidSet middle = b.union(c);
            MySqlGtidSet top = a.union(middle);

            assertThat(a.contains(a)).isTrue();
            assertThat(a.contains(MySqlGtidSet.EMPTY)).isTrue();
            assertThat(a.contains(b) && b.contains(a)).isEqualTo(a.equals(b));
            assertThat(top.contains(middle) && middle.contains(c)).isTrue();
            assertThat(top.contains(c)).isTrue();
            if (a.contains(b) && b.contains(c)) {
                assertThat(a.contains(c)).isTrue();
            }
        });
    }

    @Test
    void mysqlPrintThenParseGivesTheSameSet() {
        forEachCase(r -> {
            MySqlGtidSet a = mysqlSample(r).set();
            MySqlGtidSet again = MySqlGtidSet.parse(a.toString());

            assertThat(again).isEqualTo(a).hasSameHashCodeAs(a);
            assertThat(again.toString()).isEqualTo(a.toString()).isEqualTo(a.toString().toLowerCase(Locale.ROOT));
            assertThat(GtidSet.parse(a.toString(), Flavour.MYSQL)).isEqualTo(a);
        });
    }

    @Test
    void mysqlGtidsPrintThenParseToTheSameGtid() {
        forEachCase(r -> {
            MySqlGtid g = mysqlGtid(r);

            assertThat(MySqlGtid.parse(g.toString())).isEqualTo(g);
            assertThat(MySqlGtid.parse(randomCase(r, g.toString()))).isEqualTo(g);
            assertThat(MySqlGtidSet.of(g)).hasToString(g.toString());
        });
    }

    @Test
    void mysqlContainsTransactionAgreesWithContainsOfTheSingleton() {
        forEachCase(r -> {
            MySqlGtidSet a = mysqlSample(r).set();
            for (int i = 0; i < 10; i++) {
                MySqlGtid g = mysqlGtid(r);
                assertThat(a.containsTransaction(g)).isEqualTo(a.contains(MySqlGtidSet.of(g)));
            }
        });
    }

    @Test
    void mysqlWithAddsTheTransactionAndKeepsTheRest() {
        forEachCase(r -> {
            MySqlGtidSet a = mysqlSample(r).set();
            MySqlGtid g = mysqlGtid(r);
            MySqlGtidSet after = a.with(g);

            assertThat(after.containsTransaction(g)).isTrue();
            assertThat(after.contains(a)).isTrue();
            assertThat(after).isEqualTo(a.union(MySqlGtidSet.of(g)));
            assertThat(after.subtract(a)).isEqualTo(a.containsTransaction(g) ? MySqlGtidSet.EMPTY : MySqlGtidSet.of(g));
            assertThat(after == a).isEqualTo(a.containsTransaction(g));
        });
    }

    @Test
    void mysqlSubtractionLaws() {
        forEachCase(r -> {
            MySqlGtidSet a = mysqlSample(r).set();
            MySqlGtidSet b = mysqlSample(r).set();
            MySqlGtidSet difference = a.subtract(b);

            assertThat(a.union(b).subtract(b).contains(a.union(b).subtract(b))).isTrue();
            assertThat(a.contains(a.union(b).subtract(b))).isTrue();
            assertThat(a.subtract(a).isEmpty()).isTrue();
            assertThat(a.contains(difference)).isTrue();
            assertThat(difference.union(b)).isEqualTo(a.union(b));
            assertThat(difference.subtract(b)).isEqualTo(difference);
            assertThat(b.contains(a)).isEqualTo(difference.isEmpty());
        });
    }

    @Test
    void mysqlStreamOfWithsMatchesTheModel() {
        forEachCase(r -> {
            MySqlGtidSet set = MySqlGtidSet.EMPTY;
            Set<MySqlGtid> model = new HashSet<>();
            for (int i = 0; i < 20; i++) {
                MySqlGtid g = mysqlGtid(r);
                set = set.with(g);
                model.add(g);
            }
            assertThat(set).isEqualTo(mysqlOf(model));
            assertThat(MySqlGtidSet.parse(set.toString())).isEqualTo(set);
            for (MySqlGtid g : mysqlProbes(r, model, Set.of())) {
                assertThat(set.containsTransaction(g)).isEqualTo(model.contains(g));
            }
        });
    }

    /* -------------------------------------------------------------- MariaDB */

    /** A random MariaDB set and its model: the highest sequence per (domain, server). */
    private record MariaDbSample(MariaDbGtidSet set, Map<List<Long>, Long> model, String text) {

        long highest(long domain) {
            long max = 0;
            for (Map.Entry<List<Long>, Long> e : model.entrySet()) {
                if (e.getKey().get(0) == domain) {
                    max = Math.max(max, e.getValue());
                }
            }
            return max;
        }
    }

    private static long mariadbSequence(Random r) {
        return r.nextInt(12) == 0 ? Long.MAX_VALUE - r.nextInt(3) : 1 + r.nextInt(25);
    }

    private static MariaDbGtid mariadbGtid(Random r) {
        return new MariaDbGtid(r.nextInt(4), SERVERS[r.nextInt(SERVERS.length)], mariadbSequence(r));
    }

    private static MariaDbSample mariadbSample(Random r) {
        Map<List<Long>, Long> model = new HashMap<>();
        StringBuilder text = new StringBuilder(blank(r));
        int count = r.nextInt(6);
        for (int i = 0; i < count; i++) {
            long domain = r.nextInt(4);
            long server = SERVERS[r.nextInt(SERVERS.length)];
            long sequence = r.nextInt(15) == 0 ? 0 : mariadbSequence(r);
            if (i > 0) {
                text.append(blank(r)).append(',').append(blank(r));
            }
            text.append(domain).append('-').append(server).append('-').append(sequence);
            if (sequence > 0) {
                model.merge(List.of(domain, server), sequence, Math::max);
            }
        }
        text.append(blank(r));
        return new MariaDbSample(MariaDbGtidSet.parse(text.toString()), model, text.toString());
    }

    private static MariaDbGtidSet mariadbOf(Map<List<Long>, Long> model) {
        List<MariaDbGtid> gtids = new ArrayList<>();
        model.forEach((key, sequence) -> gtids.add(new MariaDbGtid(key.get(0), key.get(1), sequence)));
        return MariaDbGtidSet.of(gtids.toArray(MariaDbGtid[]::new));
    }

    @Test
    void mariadbSetsAgreeWithTheModelOfTheirPositions() {
        forEachCase(r -> {
            MariaDbSample a = mariadbSample(r);
            MariaDbSample b = mariadbSample(r);
            Map<List<Long>, Long> union = new HashMap<>(a.model());
            b.model().forEach((key, sequence) -> union.merge(key, sequence, Math::max));

            assertThat(a.set()).as("parse(%s)", a.text()).isEqualTo(mariadbOf(a.model()));
            assertThat(a.set().isEmpty()).isEqualTo(a.model().isEmpty());
            for (long domain = 0; domain < 5; domain++) {
                assertThat(a.set().sequence(domain)).isEqualTo(a.highest(domain));
            }
            for (int i = 0; i < 20; i++) {
                MariaDbGtid g = mariadbGtid(r);
                assertThat(a.set().containsTransaction(g)).as("%s contains %s", a.set(), g)
                        .isEqualTo(a.highest(g.domain()) >= g.sequence());
            }
            assertThat(a.set().union(b.set())).isEqualTo(mariadbOf(union));
            boolean contains = true;
            for (long domain = 0; domain < 5; domain++) {
                contains &= a.highest(domain) >= b.highest(domain);
            }
            assertThat(a.set().contains(b.set())).as("%s contains %s", a.set(), b.set()).isEqualTo(contains);
            boolean perServer = b.model().entrySet().stream()
                    .allMatch(e -> a.model().getOrDefault(e.getKey(), 0L) >= e.getValue());
            assertThat(a.set().containsPerServer(b.set())).isEqualTo(perServer);
        });
    }

    @Test
    void mariadbUnionIsCommutativeAssociativeAndIdempotent() {
        forEachCase(r -> {
            MariaDbGtidSet a = mariadbSample(r).set();
            MariaDbGtidSet b = mariadbSample(r).set();
            MariaDbGtidSet c = mariadbSample(r).set();

            assertThat(a.union(b)).isEqualTo(b.union(a));
            assertThat(a.union(b).union(c)).isEqualTo(a.union(b.union(c)));
            assertThat(a.union(a)).isEqualTo(a);
            assertThat(a.union(MariaDbGtidSet.EMPTY)).isEqualTo(a);
        });
    }

    @Test
    void mariadbUnionContainsBothOperands() {
        forEachCase(r -> {
            MariaDbGtidSet a = mariadbSample(r).set();
            MariaDbGtidSet b = mariadbSample(r).set();

            assertThat(a.union(b).contains(a)).isTrue();
            assertThat(a.union(b).contains(b)).isTrue();
            assertThat(a.union(b).containsPerServer(a)).isTrue();
            assertThat(a.union(b).containsPerServer(b)).isTrue();
        });
    }

    @Test
    void mariadbContainsIsReflexiveAndTransitive() {
        forEachCase(r -> {
            MariaDbGtidSet a = mariadbSample(r).set();
            MariaDbGtidSet b = mariadbSample(r).set();
            MariaDbGtidSet c = mariadbSample(r).set();
            MariaDbGtidSet middle = b.union(c);
            MariaDbGtidSet top = a.union(middle);

            assertThat(a.contains(a)).isTrue();
            assertThat(a.containsPerServer(a)).isTrue();
            assertThat(a.contains(MariaDbGtidSet.EMPTY)).isTrue();
            assertThat(top.contains(middle) && middle.contains(c)).isTrue();
            assertThat(top.contains(c)).isTrue();
            if (a.contains(b) && b.contains(c)) {
                assertThat(a.contains(c)).isTrue();
            }
            if (a.containsPerServer(b)) {
                assertThat(a.contains(b)).as("per server implies per domain").isTrue();
            }
        });
    }

    @Test
    void mariadbPrintThenParseGivesTheSameSet() {
        forEachCase(r -> {
            MariaDbGtidSet a = mariadbSample(r).set();
            MariaDbGtidSet again = MariaDbGtidSet.parse(a.toString());

            assertThat(again).isEqualTo(a).hasSameHashCodeAs(a);
            assertThat(again.toString()).isEqualTo(a.toString());
            assertThat(GtidSet.parse(a.toString(), Flavour.MARIADB)).isEqualTo(a);
            MariaDbGtid g = mariadbGtid(r);
            assertThat(MariaDbGtid.parse(g.toString())).isEqualTo(g);
        });
    }

    @Test
    void mariadbPositionHoldsTheSameTransactions() {
        forEachCase(r -> {
            MariaDbGtidSet a = mariadbSample(r).set();
            MariaDbGtidSet position = a.position();

            assertThat(position.contains(a)).isTrue();
            assertThat(a.contains(position)).isTrue();
            assertThat(a.containsPerServer(position)).isTrue();
            assertThat(position.gtids()).extracting(MariaDbGtid::domain).doesNotHaveDuplicates();
            List<String> lastOfEachDomain = new ArrayList<>();
            List<MariaDbGtid> gtids = a.gtids();
            for (int i = 0; i < gtids.size(); i++) {
                if (i == gtids.size() - 1 || gtids.get(i + 1).domain() != gtids.get(i).domain()) {
                    lastOfEachDomain.add(gtids.get(i).toString());
                }
            }
            assertThat(position.toString()).isEqualTo(String.join(",", lastOfEachDomain));
        });
    }

    @Test
    void mariadbContainsTransactionAgreesWithContainsOfTheSingleton() {
        forEachCase(r -> {
            MariaDbGtidSet a = mariadbSample(r).set();
            for (int i = 0; i < 10; i++) {
                MariaDbGtid g = mariadbGtid(r);
                assertThat(a.containsTransaction(g)).isEqualTo(a.contains(MariaDbGtidSet.of(g)));
            }
        });
    }

    @Test
    void mariadbWithAddsTheTransactionAndKeepsTheRest() {
        forEachCase(r -> {
            MariaDbGtidSet a = mariadbSample(r).set();
            MariaDbGtid g = mariadbGtid(r);
            MariaDbGtidSet after = a.with(g);

            assertThat(after.containsTransaction(g)).isTrue();
            assertThat(after.contains(a)).isTrue();
            assertThat(after.containsPerServer(a)).isTrue();
            assertThat(after.containsPerServer(MariaDbGtidSet.of(g))).isTrue();
            assertThat(after).isEqualTo(a.union(MariaDbGtidSet.of(g)));
            assertThat(MariaDbGtidSet.parse(after.toString())).isEqualTo(after);
        });
    }

    @Test
    void mariadbStreamOfWithsMatchesTheModel() {
        forEachCase(r -> {
            MariaDbGtidSet set = MariaDbGtidSet.EMPTY;
            Map<List<Long>, Long> model = new HashMap<>();
            for (int i = 0; i < 20; i++) {
                MariaDbGtid g = r.nextInt(3) == 0 || set.sequence(0) == Long.MAX_VALUE ? mariadbGtid(r)
                        : new MariaDbGtid(0, SERVERS[r.nextInt(2)], set.sequence(0) + 1);
                set = set.with(g);
                model.merge(List.of(g.domain(), g.server()), g.sequence(), Math::max);
                assertThat(set).isEqualTo(mariadbOf(model));
            }
        });
    }
}
