package io.gantry.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every flag {@code gantry console --help} lists has a row in the console's flag table in docs/console.md (section
 * "The console"): a flag added to {@link ConsoleLauncher} and its help without its line in the manual fails here,
 * naming the flag and where its row goes.
 */
class DocDriftConsoleFlagsTest {

    private static final String PAGE = "docs/console.md";
    private static final String HEADING = "## The console";
    private static final Pattern FLAG = Pattern.compile("(?<![\\w-])(--[a-z0-9][a-z0-9-]*)");
    private static final Pattern FLAG_IN_CODE = Pattern.compile("`(--[a-z0-9][a-z0-9-]*)[` =]");

    @Test
    void everyFlagOfTheHelpHasARowInTheConsolesFlagTable() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(ConsoleLauncher.run(new String[] {"--help"}, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))).isZero();
        Set<String> flags = new TreeSet<>();
        Matcher flag = FLAG.matcher(out.toString(StandardCharsets.UTF_8));
        while (flag.find()) {
            flags.add(flag.group(1));
        }
        flags.removeAll(Set.of("--help", "--version"));
        assertThat(flags).as("flags read from gantry console --help").contains("--data-dir", "--socket");

        Set<String> documented = new TreeSet<>();
        for (String line : section(Files.readAllLines(root().resolve(PAGE), StandardCharsets.UTF_8))) {
            String row = line.strip();
            if (row.startsWith("|")) {
                int end = row.indexOf(" | ", 1);
                Matcher cell = FLAG_IN_CODE.matcher((end < 0 ? row : row.substring(0, end)) + " ");
                while (cell.find()) {
                    documented.add(cell.group(1));
                }
            }
        }
        flags.removeAll(documented);
        assertThat(flags).as("%s, section \"The console\": flags of gantry console without a row in its flag table "
                + "(| `--flag VALUE` | default | meaning |): %s", PAGE, flags).isEmpty();
    }

    /** The lines from the section's heading to the next heading of its level, outside nothing but code fences. */
    private static List<String> section(List<String> lines) {
        int start = -1;
        boolean code = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.startsWith("```")) {
                code = !code;
                continue;
            }
            if (code) {
                continue;
            }
            if (start < 0 && line.equals(HEADING)) {
                start = i;
            } else if (start >= 0 && line.startsWith("## ")) {
                return lines.subList(start, i);
            }
        }
        assertThat(start).as("%s has no section %s", PAGE, HEADING).isNotNegative();
        return lines.subList(start, lines.size());
    }

    private static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path at = dir; at != null; at = at.getParent()) {
            if (Files.isRegularFile(at.resolve(PAGE)) && Files.isRegularFile(at.resolve("pom.xml"))) {
                return at;
            }
        }
        throw new IllegalStateException("no " + PAGE + " above " + dir);
    }
}
