package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * {@code assets/gantry.conf}, the sample configuration file (also what the package installs as
 * {@code /etc/gantry/gantry.conf}), is the picocli model of {@code gantry run} written out: every key with its
 * description and default. It is compared here with the model, so a flag added, renamed or with a new default
 * cannot leave the sample behind; when they differ the expected file is written to {@code target/gantry.conf}.
 */
class SampleConfigTest {

    private static final Path SAMPLE = Path.of("..", "assets", "gantry.conf");
    private static final int WIDTH = 100;

    @Test
    void sampleFileHoldsEveryKeyWithItsDefault() throws IOException {
        String expected = render(GantryCommand.newCommandLine(Map.of()).getSubcommands().get("run").getCommandSpec());
        String actual = Files.exists(SAMPLE) ? Files.readString(SAMPLE, StandardCharsets.UTF_8) : "";
        if (!actual.equals(expected)) {
            Path written = Path.of("target", "gantry.conf");
            Files.writeString(written, expected, StandardCharsets.UTF_8);
            assertThat(actual).as("assets/gantry.conf is out of date: copy %s over it", written.toAbsolutePath())
                    .isEqualTo(expected);
        }
    }

    @Test
    void theSampleParsesAsAConfigurationFile() {
        CommandLine commandLine = GantryCommand.newCommandLine(Map.of());
        commandLine.parseArgs("run", "--config", SAMPLE.toString());
        assertThat((String) commandLine.getSubcommands().get("run").getCommandSpec().findOption("--listen")
                .getValue()).isEqualTo("127.0.0.1:3307");
    }

    static String render(CommandLine.Model.CommandSpec run) {
        StringBuilder out = new StringBuilder();
        out.append("""
                # Gantry: settings of `gantry run`, read with `gantry run --config FILE`.
                #
                # One `key = value` per line; the keys are the long flags of `gantry run --help` without their
                # dashes. A line starting with # is a comment; a value runs to the end of its line, taken as it is
                # (no quotes, no comment after it). A list key (upstream-db-url, cdc-db-url, admin-users) may be
                # repeated, as its flag may. An unknown key or a bad value stops the start, naming the line.
                #
                # A flag on the command line wins over the environment variable of the same name (GANTRY_LISTEN
                # for listen), which wins over this file. Passwords: write the URLs without one and give it in
                # upstream-password-file (a file only its owner can read) or in GANTRY_UPSTREAM_PASSWORD.
                #
                # Every key is listed below, commented out, with its default.
                """);
        for (OptionSpec option : ownSettingsFirst(run)) {
            out.append("\n");
            // The default is on the key's line; a description's "(default: ...)" says more only when it differs.
            String description = String.join(" ", option.description())
                    .replace(" (default: " + defaultOf(option) + ")", "");
            wrap(description, out);
            String line = "#" + ConfigDefaults.key(option) + " = " + defaultOf(option);
            out.append(line.strip()).append('\n');
        }
        return out.toString();
    }

    /** The settings of {@code run} itself (the server lists first), then those it shares with {@code demo}. */
    private static java.util.List<OptionSpec> ownSettingsFirst(CommandLine.Model.CommandSpec run) {
        java.util.Set<String> shared = new java.util.HashSet<>();
        run.mixins().values().forEach(mixin -> mixin.options().forEach(o -> shared.add(o.longestName())));
        java.util.List<OptionSpec> ordered = new java.util.ArrayList<>();
        ConfigDefaults.settingsOf(run).stream().filter(o -> !shared.contains(o.longestName())).forEach(ordered::add);
        ConfigDefaults.settingsOf(run).stream().filter(o -> shared.contains(o.longestName())).forEach(ordered::add);
        return ordered;
    }

    private static String defaultOf(OptionSpec option) {
        if (option.defaultValue() != null) {
            return option.defaultValue();
        }
        return option.arity().max() == 0 ? "false" : "";
    }

    private static void wrap(String text, StringBuilder out) {
        StringBuilder line = new StringBuilder("#");
        for (String word : text.split(" ")) {
            if (line.length() + 1 + word.length() > WIDTH && line.length() > 1) {
                out.append(line).append('\n');
                line = new StringBuilder("#");
            }
            line.append(' ').append(word);
        }
        out.append(line).append('\n');
    }
}
