package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** {@code gantry run --config FILE} and {@code GANTRY_*} variables, parsed as the flags themselves are. */
class ConfigFileTest {

    @TempDir
    Path directory;

    private final StringWriter err = new StringWriter();

    @Test
    void everyRunFlagHasAKeyAndEachKeyGivesWhatTheFlagGives() throws IOException {
        List<OptionSpec> settings = ConfigDefaults.settingsOf(runSpec());
        assertThat(settings).hasSizeGreaterThan(30);
        for (OptionSpec option : settings) {
            String value = sampleValue(option);
            Path file = write(ConfigDefaults.key(option) + " = " + value);
            Object fromFlag = parse(Map.of(), flagArguments(option, value)).findOption(option.longestName())
                    .getValue();
            Object fromFile = parse(Map.of(), "--config", file.toString()).findOption(option.longestName())
                    .getValue();
            Object fromVariable = parse(Map.of(ConfigDefaults.variable(option), value))
                    .findOption(option.longestName()).getValue();
            Object builtIn = parse(Map.of()).findOption(option.longestName()).getValue();
            assertThat(fromFlag).as("%s %s changes the setting", option.longestName(), value).isNotEqualTo(builtIn);
            assertThat(fromFile).as("key %s", ConfigDefaults.key(option)).isEqualTo(fromFlag);
            assertThat(fromVariable).as("variable %s", ConfigDefaults.variable(option)).isEqualTo(fromFlag);
        }
    }

    @Test
    void commandLineWinsOverEnvironmentWhichWinsOverTheFile() throws IOException {
        Path file = write("listen = 127.0.0.1:4001", "read-master-percentage = 10", "health-retention = 1d");
        CommandLine.Model.CommandSpec run = parse(Map.of("GANTRY_LISTEN", "127.0.0.1:4002",
                "GANTRY_READ_MASTER_PERCENTAGE", "20"), "--config", file.toString(), "--listen", "127.0.0.1:4003");
        assertThat((String) run.findOption("--listen").getValue()).isEqualTo("127.0.0.1:4003");
        assertThat((int) run.findOption("--read-master-percentage").getValue()).isEqualTo(20);
        assertThat((String) run.findOption("--health-retention").getValue()).isEqualTo("1d");
        assertThat((String) run.findOption("--data-dir").getValue().toString()).isEqualTo("gantry-data");
    }

    @Test
    void repeatedListKeysAddUpAsRepeatedFlagsDo() throws IOException {
        Path file = write("upstream-db-url = mysql://app@db1:3306/app", "upstream-db-url = mysql://app@db2:3306/app");
        List<String> urls = parse(Map.of(), "--config", file.toString()).findOption("--upstream-db-url").getValue();
        assertThat(String.join(",", urls)).isEqualTo("mysql://app@db1:3306/app,mysql://app@db2:3306/app");
    }

    @Test
    void unknownKeyIsRefusedNamingTheFileAndLine() throws IOException {
        Path file = write("# comment", "", "listen = 127.0.0.1:4001", "listen-address = 127.0.0.1:4001");
        assertThat(execute(Map.of(), "run", "--config", file.toString())).isEqualTo(2);
        assertThat(err.toString()).contains(file + " line 4: unknown key 'listen-address'")
                // one line to act on, not the whole usage: a service logs it on every failed start
                .contains("See `gantry run --help` for every flag.").doesNotContain("Usage:");
    }

    @Test
    void badValueIsRefusedNamingTheFileAndLine() throws IOException {
        Path file = write("listen = 127.0.0.1:4001", "read-master-percentage = most");
        assertThat(execute(Map.of(), "run", "--config", file.toString())).isEqualTo(2);
        assertThat(err.toString()).contains(file + " line 2: Invalid value for option '--read-master-percentage': "
                + "'most' is not an int");
    }

    @Test
    void flagKeyTakesTrueOrFalse() throws IOException {
        Path file = write("master-preferred = yes");
        assertThat(execute(Map.of(), "run", "--config", file.toString())).isEqualTo(2);
        assertThat(err.toString()).contains(file + " line 1: master-preferred takes true or false, not 'yes'");
    }

    @Test
    void valueRefusedAfterParsingStillNamesTheLine() throws IOException {
        Path file = write("", "listen = localhost");
        assertThat(execute(Map.of(), "run", "--config", file.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("--listen must be HOST:PORT, not 'localhost' (--listen is set in " + file
                + " line 2)");
    }

    @Test
    void refreshWorkersOutOfRangeAreRefusedNamingTheFlagAndTheLine() throws IOException {
        Path file = write("upstream-db-url = mysql://app@db1:3306/app", "cache-refresh-workers = 0");
        assertThat(execute(Map.of(), "run", "--config", file.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("--cache-refresh-workers must be 1 to 64, not 0 (--cache-refresh-workers "
                + "is set in " + file + " line 2)");
    }

    @Test
    void singleKeyGivenTwiceIsRefused() throws IOException {
        Path file = write("listen = 127.0.0.1:4001", "listen = 127.0.0.1:4002");
        assertThat(execute(Map.of(), "run", "--config", file.toString())).isEqualTo(2);
        assertThat(err.toString()).contains(file + " line 2: 'listen' is already set on line 1");
    }

    @Test
    void lineWithoutEqualsAndKeyWithDashesAreRefused() throws IOException {
        Path file = write("listen 127.0.0.1:4001");
        assertThat(execute(Map.of(), "run", "--config", file.toString())).isEqualTo(2);
        assertThat(err.toString()).contains(file + " line 1: expected key = value, found 'listen 127.0.0.1:4001'");
        err.getBuffer().setLength(0);
        Path dashed = write("--listen = 127.0.0.1:4001");
        assertThat(execute(Map.of(), "run", "--config", dashed.toString())).isEqualTo(2);
        assertThat(err.toString()).contains(dashed + " line 1: write the key without dashes: 'listen = ...'");
    }

    @Test
    void badEnvironmentValueIsRefusedNamingTheVariable() {
        assertThat(execute(Map.of("GANTRY_MAX_CLIENT_CONNECTIONS", "lots"), "run")).isEqualTo(2);
        assertThat(err.toString()).contains("the environment variable GANTRY_MAX_CLIENT_CONNECTIONS: Invalid value "
                + "for option '--max-client-connections': 'lots' is not an int");
    }

    @Test
    void missingFileIsNamed() {
        Path missing = directory.resolve("nope.conf");
        assertThat(execute(Map.of(), "run", "--config", missing.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("cannot read --config " + missing + ": no such file");
    }

    @Test
    void atFilesAreNotExpanded() throws IOException {
        Path arguments = write("--listen", "127.0.0.1:4001");
        assertThat(execute(Map.of(), "run", "@" + arguments)).isEqualTo(2);
        assertThat(err.toString()).contains("Unmatched argument at index 1: '@" + arguments + "'");
    }

    /** The launcher's own variables are not settings: `./gantry run` would warn about them on every start. */
    @Test
    void theLaunchersVariablesAreNotTakenForSettings() throws Exception {
        String launcher = Files.readString(Path.of("..", "gantry"));
        Matcher variables = Pattern.compile("\\b(GANTRY_[A-Z_]+)\\b").matcher(launcher);
        Set<String> named = new TreeSet<>();
        while (variables.find()) {
            named.add(variables.group(1));
        }
        assertThat(named).contains("GANTRY_JAVA_OPTS", ConsoleProcess.JAR_VARIABLE);
        assertThat(ConfigDefaults.OTHER_VARIABLES).containsAll(named);
    }

    private int execute(Map<String, String> environment, String... arguments) {
        CommandLine commandLine = GantryCommand.newCommandLine(environment);
        commandLine.setErr(new PrintWriter(err, true));
        commandLine.setOut(new PrintWriter(new StringWriter(), true));
        return commandLine.execute(arguments);
    }

    private static CommandLine.Model.CommandSpec runSpec() {
        return GantryCommand.newCommandLine(Map.of()).getSubcommands().get("run").getCommandSpec();
    }

    private static CommandLine.Model.CommandSpec parse(Map<String, String> environment, String... runArguments) {
        CommandLine commandLine = GantryCommand.newCommandLine(environment);
        String[] arguments = new String[runArguments.length + 1];
        arguments[0] = "run";
        System.arraycopy(runArguments, 0, arguments, 1, runArguments.length);
        commandLine.parseArgs(arguments);
        return commandLine.getSubcommands().get("run").getCommandSpec();
    }

    private static String[] flagArguments(OptionSpec option, String value) {
        return option.arity().max() == 0 ? new String[] {option.longestName()}
                : new String[] {option.longestName(), value};
    }

    /** A value of the option's type that differs from its default. */
    private static String sampleValue(OptionSpec option) {
        Class<?> type = option.type();
        if (type == boolean.class || type == Boolean.class) {
            return Boolean.toString(!Boolean.parseBoolean(option.defaultValue()));
        }
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            return "7";
        }
        if (type == double.class) {
            return "7.5";
        }
        if (type == Path.class) {
            return "/tmp/gantry-sample";
        }
        return "sample";
    }

    private Path write(String... lines) throws IOException {
        Path file = Files.createTempFile(directory, "gantry", ".conf");
        Files.write(file, List.of(lines));
        return file;
    }
}
