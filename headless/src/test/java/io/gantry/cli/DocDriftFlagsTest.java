package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every flag of every {@code gantry} command has a row in its command's flag table in the manual, read from the
 * commands' own picocli model: a flag added without its line in the manual fails here, naming the flag and the page
 * and section its row belongs in. The flags {@code gantry demo} shares with {@code gantry run} (the same option
 * groups) are documented once, in {@code gantry run}'s table, and the manual's list of the {@code gantry run} flags
 * that {@code gantry demo} does not take must be exactly that.
 */
class DocDriftFlagsTest {

    /** Where each command's flags are documented: the page, and the heading of its section. */
    private static final Map<String, Place> PLACES = Map.of(
            "run", new Place("docs/install-and-run.md", "`gantry run`"),
            "demo", new Place("docs/install-and-run.md", "`gantry demo`"),
            "admin", new Place("docs/console.md", "`gantry admin`"),
            "export-health", new Place("docs/console.md", "`gantry export-health`"));

    /** The subsection of {@code gantry demo} that names the flags of {@code gantry run} it refuses. */
    private static final String DEMO_REFUSES = "Flags of `gantry run` that `gantry demo` takes too";

    private static final Pattern FLAG = Pattern.compile("`(--[a-z0-9][a-z0-9-]*)[` =\\[]");

    private record Place(String page, String heading) {

        @Override
        public String toString() {
            return page + ", section " + heading;
        }
    }

    private final CommandLine gantry = GantryCommand.newCommandLine(Map.of());

    @Test
    void everyCommandHasAPlaceInTheManual() {
        Set<String> commands = new TreeSet<>(gantry.getSubcommands().keySet());
        commands.remove("help");
        assertThat(PLACES.keySet())
                .as("a gantry command without a section for its flags: give it one in docs/ and a line here")
                .containsExactlyInAnyOrderElementsOf(commands);
        for (Place place : PLACES.values()) {
            assertThat(ManualPages.section(ManualPages.root().resolve(place.page()), place.heading()))
                    .as("%s: the section is gone (a heading renamed?)", place).isNotEmpty();
        }
    }

    @Test
    void everyFlagOfEveryCommandHasARowInItsFlagTable() {
        Map<Place, Set<String>> missing = new LinkedHashMap<>();
        CommandSpec run = spec("run");
        for (String command : new TreeSet<>(PLACES.keySet())) {
            CommandSpec spec = spec(command);
            Set<String> documented = rowsOf(PLACES.get(command));
            for (OptionSpec option : flags(spec)) {
                String name = option.longestName();
                if (documented.contains(name)) {
                    continue;
                }
                // A flag of an option group gantry run has too is documented in run's table.
                Place place = sharedWithRun(spec, run, option) ? PLACES.get("run") : PLACES.get(command);
                if (place != PLACES.get(command) && rowsOf(place).contains(name)) {
                    continue;
                }
                missing.computeIfAbsent(place, p -> new TreeSet<>()).add(name + " (gantry " + command + ")");
            }
        }
        assertThat(missing).as(describe(missing,
                "flags without a row in the manual; add a row | `--flag VALUE` | default | meaning | to the flag "
                        + "table of")).isEmpty();
    }

    @Test
    void theDemoSectionNamesExactlyTheFlagsOfRunThatDemoRefuses() {
        Set<String> runFlags = names(flags(spec("run")));
        Set<String> demoFlags = names(flags(spec("demo")));
        Set<String> refused = new TreeSet<>(runFlags);
        refused.removeAll(demoFlags);

        Path page = ManualPages.root().resolve(PLACES.get("demo").page());
        Set<String> named = new TreeSet<>();
        for (String line : ManualPages.section(page, DEMO_REFUSES)) {
            Matcher flag = FLAG.matcher(line);
            while (flag.find()) {
                named.add(flag.group(1));
            }
        }
        Set<String> unnamed = new TreeSet<>(refused);
        unnamed.removeAll(named);
        Set<String> wronglyNamed = new TreeSet<>(named);
        wronglyNamed.removeAll(refused);
        assertThat(unnamed).as("%s, subsection \"%s\": flags of gantry run that gantry demo refuses, not named there: %s",
                PLACES.get("demo").page(), DEMO_REFUSES, unnamed).isEmpty();
        assertThat(wronglyNamed).as("%s, subsection \"%s\": named as refused by gantry demo, but gantry demo takes "
                + "them (or gantry run has no such flag): %s", PLACES.get("demo").page(), DEMO_REFUSES, wronglyNamed)
                .isEmpty();
    }

    private CommandSpec spec(String command) {
        return gantry.getSubcommands().get(command).getCommandSpec();
    }

    /** The flags a command's {@code --help} lists, but the standard {@code --help} and {@code --version}. */
    private static List<OptionSpec> flags(CommandSpec spec) {
        return spec.options().stream().filter(o -> !o.usageHelp() && !o.versionHelp()).toList();
    }

    private static Set<String> names(List<OptionSpec> options) {
        return options.stream().map(OptionSpec::longestName).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Whether the option comes from an option group (a picocli mixin) that {@code gantry run} has too. */
    private static boolean sharedWithRun(CommandSpec spec, CommandSpec run, OptionSpec option) {
        if (spec == run) {
            return false;
        }
        Set<Class<?>> runGroups = run.mixins().values().stream().map(m -> m.userObject().getClass())
                .collect(Collectors.toSet());
        return spec.mixins().values().stream()
                .filter(mixin -> runGroups.contains(mixin.userObject().getClass()))
                .anyMatch(mixin -> mixin.options().stream().anyMatch(o -> o.longestName().equals(option.longestName())));
    }

    /** The flags that have a row of a table (a line starting with {@code |}) in the section, in its first cell. */
    private static Set<String> rowsOf(Place place) {
        Set<String> flags = new TreeSet<>();
        for (String line : ManualPages.section(ManualPages.root().resolve(place.page()), place.heading())) {
            String row = line.strip();
            if (!row.startsWith("|")) {
                continue;
            }
            int end = row.indexOf(" | ", 1);
            String firstCell = end < 0 ? row : row.substring(0, end);
            Matcher flag = FLAG.matcher(firstCell + " ");
            while (flag.find()) {
                flags.add(flag.group(1));
            }
        }
        return flags;
    }

    private static String describe(Map<Place, Set<String>> missing, String what) {
        List<String> lines = new ArrayList<>();
        missing.forEach((place, flags) -> lines.add("  " + place + ": " + String.join(", ", flags)));
        return what + ":\n" + String.join("\n", lines);
    }
}
