package io.gantry.proxy.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.ManualPage;
import io.gantry.admin.AdminStatement;
import io.gantry.admin.AdminStatements;
import io.gantry.authority.EventKind;
import io.gantry.cache.CacheStatement;
import io.gantry.cache.CacheStatements;
import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/sql-reference.md holds every statement Gantry answers itself: the admin statements ({@link AdminStatements}),
 * the query-cache statements ({@link CacheStatements}) and the session statements ({@link GantrySessionSql}).
 *
 * <p>The parsers keep no list of their forms, so this test takes the forms from two things they cannot add a
 * statement without changing: the kinds of statement they return (the records of their sealed interfaces) and the
 * keywords they compare the text with (the upper-case string literals of their sources). Every line of the page's
 * {@code sql} blocks is fed to the parsers in the order the proxy port asks them ({@code QueryCommand.answeredByGantry});
 * each must be a statement Gantry answers (not one it refuses or sends on), every kind of statement must come out of
 * at least one example, and every keyword must be written on the page. So a statement added to a parser fails here
 * until the page shows it: a new kind of statement until it has an example, a new keyword of an old kind until the page
 * names it.
 */
class DocDriftSqlReferenceTest {

    private static final String PAGE = "docs/sql-reference.md";
    /** The parsers' sources, whose keywords the page must name. */
    private static final List<Class<?>> PARSERS = List.of(AdminStatements.class, CacheStatements.class,
            GantrySessionSql.class);
    /** An upper-case word as a whole string literal: {@code "GANTRY"}, {@code "BLOCKED"}. */
    private static final Pattern KEYWORD = Pattern.compile("\"([A-Z][A-Z_]+)\"");
    private static final Pattern FENCE = Pattern.compile("^\\s{0,3}```\\s*(\\w*)");
    /** What {@code EXPLAIN LAST STATEMENT} is recognised as: it has no record of its own. */
    private static final String EXPLAIN_LAST_STATEMENT = "CacheStatements.isExplainLastStatement";

    private static String page;
    private static List<String> examples;

    @BeforeAll
    static void readThePage() throws IOException {
        page = ManualPage.read(PAGE);
        examples = sqlExamples(page);
    }

    @Test
    void everyExampleIsAStatementGantryAnswers() {
        assertThat(examples).as("%s has no ```sql blocks", PAGE).hasSizeGreaterThan(20);
        List<String> notAnswered = new ArrayList<>();
        for (String example : examples) {
            Object kind = kindOf(example);
            if (kind instanceof String problem && !problem.equals(EXPLAIN_LAST_STATEMENT)) {
                notAnswered.add(example + "  <- " + problem);
            }
        }
        assertThat(notAnswered).as("%s: examples that are not statements Gantry answers:\n  %s", PAGE,
                String.join("\n  ", notAnswered)).isEmpty();
    }

    @Test
    void everyKindOfStatementHasAnExample() {
        Set<String> shown = new TreeSet<>();
        for (String example : examples) {
            Object kind = kindOf(example);
            shown.add(kind instanceof Class<?> type ? name(type) : (String) kind);
        }
        Set<String> kinds = new TreeSet<>();
        kinds.addAll(kinds(AdminStatement.class, AdminStatement.Invalid.class));
        kinds.addAll(kinds(CacheStatement.class, CacheStatement.Invalid.class));
        kinds.addAll(kinds(GantrySessionSql.Parsed.class, GantrySessionSql.NotOurs.class,
                GantrySessionSql.Refused.class));
        kinds.add(EXPLAIN_LAST_STATEMENT);
        kinds.removeAll(shown);
        assertThat(kinds).as("%s has no example (a line of a ```sql block) of these statements: %s; give each a "
                + "section with its syntax and an example", PAGE, kinds).isEmpty();
    }

    @Test
    void everyKeywordOfTheParsersIsOnThePage() throws IOException {
        Map<String, Set<String>> missing = new LinkedHashMap<>();
        for (Class<?> parser : PARSERS) {
            Path source = Path.of("src", "main", "java", parser.getName().replace('.', '/') + ".java");
            assertThat(source).as("the source of %s, read for its keywords", parser.getSimpleName()).exists();
            Matcher keyword = KEYWORD.matcher(Files.readString(source, StandardCharsets.UTF_8));
            while (keyword.find()) {
                if (!Pattern.compile("\\b" + keyword.group(1) + "\\b").matcher(page).find()) {
                    missing.computeIfAbsent(parser.getSimpleName(), p -> new TreeSet<>()).add(keyword.group(1));
                }
            }
        }
        assertThat(missing).as("%s does not name these keywords the parsers read (a statement or a form of one "
                + "that is not documented?): %s", PAGE, missing).isEmpty();
    }

    @Test
    void everyGantryTableEventKindAndSessionSettingIsNamed() {
        List<String> missing = new ArrayList<>();
        for (String table : AdminStatements.GANTRY_TABLES) {
            if (!page.contains("### `gantry." + table + "`")) {
                missing.add("the table gantry." + table + " (a section ### `gantry." + table + "`)");
            }
        }
        for (EventKind kind : EventKind.values()) {
            if (!page.contains("| `" + kind.sqlName() + "` |")) {
                missing.add("the event kind " + kind.sqlName() + " (a row of the kinds of gantry.events)");
            }
        }
        for (GantrySessionSql.Setting setting : GantrySessionSql.Setting.values()) {
            if (!page.contains("| `" + setting.sqlName() + "` |")) {
                missing.add("the session setting " + setting.sqlName() + " (a row of the settings of SET gantry_...)");
            }
        }
        assertThat(missing).as("%s does not name:\n  %s", PAGE, String.join("\n  ", missing)).isEmpty();
    }

    /**
     * What the proxy port makes of {@code sql}, asking as {@code QueryCommand.answeredByGantry} does: the class of the
     * statement, {@link #EXPLAIN_LAST_STATEMENT}, or else a string saying why it is not a statement Gantry answers.
     */
    private static Object kindOf(String sql) {
        QueryText text = QueryText.of(sql, SqlMode.DEFAULT);
        GantrySessionSql.Parsed own = GantrySessionSql.parse(text);
        if (own instanceof GantrySessionSql.Refused refused) {
            return "refused: " + refused.error().errorCode() + " " + refused.error().message();
        }
        if (!(own instanceof GantrySessionSql.NotOurs)) {
            return own.getClass();
        }
        if (CacheStatements.isExplainLastStatement(text)) {
            return EXPLAIN_LAST_STATEMENT;
        }
        Optional<AdminStatement> admin = AdminStatements.parse(text);
        if (admin.isPresent()) {
            return admin.get() instanceof AdminStatement.Invalid invalid ? "invalid: " + invalid.message()
                    : admin.get().getClass();
        }
        Optional<CacheStatement> cache = CacheStatements.parse(text);
        if (cache.isPresent()) {
            return cache.get() instanceof CacheStatement.Invalid invalid ? "invalid: " + invalid.message()
                    : cache.get().getClass();
        }
        return "not Gantry's: it would go to a server";
    }

    /** The records of a sealed interface, but those that are not statements. */
    private static Set<String> kinds(Class<?> sealed, Class<?>... notStatements) {
        Set<Class<?>> excluded = Set.of(notStatements);
        return Arrays.stream(sealed.getPermittedSubclasses()).filter(c -> !excluded.contains(c))
                .map(DocDriftSqlReferenceTest::name).collect(Collectors.toCollection(TreeSet::new));
    }

    private static String name(Class<?> type) {
        return type.getName().substring(type.getPackageName().length() + 1).replace('$', '.');
    }

    /** The lines of the page's {@code ```sql} blocks, but blank lines and {@code --} comments. */
    static List<String> sqlExamples(String markdown) {
        List<String> lines = new ArrayList<>();
        boolean inSql = false;
        boolean inOther = false;
        for (String line : markdown.split("\n", -1)) {
            Matcher fence = FENCE.matcher(line);
            if (fence.find()) {
                if (inSql || inOther) {
                    inSql = false;
                    inOther = false;
                } else if (fence.group(1).equals("sql")) {
                    inSql = true;
                } else {
                    inOther = true;
                }
                continue;
            }
            if (inSql && !line.isBlank() && !line.strip().startsWith("--")) {
                lines.add(line.strip());
            }
        }
        return lines;
    }
}
