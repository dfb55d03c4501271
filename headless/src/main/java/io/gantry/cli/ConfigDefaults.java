package io.gantry.cli;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine;

/**
 * Where {@code gantry run} takes a setting the command line does not give: the {@code GANTRY_*} environment
 * variable of the flag, else the {@code --config} file's key, else the flag's built-in default. So the order is
 * command line, then environment, then file: a one-off override never needs the file edited, and a systemd
 * {@code Environment=} line beats the packaged file.
 *
 * <p>Every key of the file and every {@code GANTRY_*} variable named after a flag is checked when the command line
 * is parsed, before anything starts: an unknown key, a key given twice that cannot be repeated, or a value the
 * flag would refuse stops the start with an error naming the file and line (or the variable). Values are checked
 * by parsing them as the flag itself, so the file accepts exactly what the command line accepts.
 */
final class ConfigDefaults implements CommandLine.IDefaultValueProvider {

    private static final Logger LOG = LoggerFactory.getLogger(ConfigDefaults.class);
    static final String CONFIG_FLAG = "--config";
    /** What one start does, not a setting: in the file or the environment it would make every start a take-over. */
    static final String TAKE_OVER_FLAG = "--take-over";
    /** How one take-over runs, so command line only too. */
    static final String DETACH_FLAG = "--detach";
    static final String ENVIRONMENT_PREFIX = "GANTRY_";
    /**
     * {@code GANTRY_*} variables that are not run flags: passwords, what the sandbox and other commands read, and what
     * the {@code ./gantry} launcher reads or sets.
     */
    static final Set<String> OTHER_VARIABLES = Set.of(Secrets.UPSTREAM_PASSWORD_VARIABLE,
            Secrets.CDC_PASSWORD_VARIABLE, "GANTRY_ADMIN_PASSWORD", "GANTRY_CACHE_DIR", "GANTRY_MARIADB_HOME",
            "GANTRY_MYSQL_HOME", "GANTRY_MYSQL_PROVIDER", "GANTRY_JAVA_OPTS", ConsoleProcess.JAR_VARIABLE,
            DetachedTakeOver.PARENT_VARIABLE);

    /** A setting's value and where it was written, for errors. */
    record Setting(String value, String origin) {
    }

    private final Map<String, String> environment;
    private Path loadedFrom;
    private Map<String, Setting> settings;

    ConfigDefaults(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    @Override
    public String defaultValue(ArgSpec argument) {
        if (!(argument instanceof OptionSpec option) || !isSetting(option)) {
            return null;
        }
        Setting setting = settings(option.command()).get(option.longestName());
        return setting == null ? null : setting.value();
    }

    /**
     * {@code message} with the origin of every flag it names that was set in the file or the environment, so an
     * error found after parsing (a listen address without a port) still points at the line to fix.
     */
    String withOrigins(CommandSpec command, String message) {
        StringBuilder out = new StringBuilder(message);
        for (Map.Entry<String, Setting> entry : settings(command).entrySet()) {
            boolean named = message.matches("(?s).*(?<![\\w-])" + java.util.regex.Pattern.quote(entry.getKey())
                    + "(?![\\w-]).*");
            if (named && !command.commandLine().getParseResult().hasMatchedOption(entry.getKey())) {
                out.append(" (").append(entry.getKey()).append(" is set in ").append(entry.getValue().origin())
                        .append(')');
            }
        }
        return out.toString();
    }

    /**
     * The flags a file key or variable may set: every option but help, version, {@value #CONFIG_FLAG},
     * {@value #TAKE_OVER_FLAG} and {@value #DETACH_FLAG}.
     */
    static boolean isSetting(OptionSpec option) {
        return !option.usageHelp() && !option.versionHelp() && option.longestName().startsWith("--")
                && !Set.of(CONFIG_FLAG, TAKE_OVER_FLAG, DETACH_FLAG).contains(option.longestName());
    }

    static List<OptionSpec> settingsOf(CommandSpec command) {
        return command.options().stream().filter(ConfigDefaults::isSetting).toList();
    }

    /** A flag's key in the file: its long name without the dashes. */
    static String key(OptionSpec option) {
        return option.longestName().substring(2);
    }

    /** A flag's environment variable: {@code --upstream-db-url} is {@code GANTRY_UPSTREAM_DB_URL}. */
    static String variable(OptionSpec option) {
        return ENVIRONMENT_PREFIX + key(option).toUpperCase(Locale.ROOT).replace('-', '_');
    }

    private Map<String, Setting> settings(CommandSpec command) {
        Path config = command.findOption(CONFIG_FLAG).getValue();
        if (settings == null || !java.util.Objects.equals(config, loadedFrom)) {
            try {
                settings = load(command, config);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(command.commandLine(), e.getMessage());
            }
            loadedFrom = config;
        }
        return settings;
    }

    private Map<String, Setting> load(CommandSpec command, Path config) {
        Map<String, Setting> loaded = new LinkedHashMap<>();
        if (config != null) {
            ConfigFile file = ConfigFile.read(config);
            Map<String, ConfigFile.Entry> seen = new LinkedHashMap<>();
            for (ConfigFile.Entry entry : file.entries()) {
                OptionSpec option = command.findOption("--" + entry.key());
                if (option == null || !isSetting(option) || !key(option).equals(entry.key())) {
                    throw new IllegalArgumentException(file.where(entry) + ": unknown key '" + entry.key()
                            + "' (the keys are the long flags of `gantry run --help` without their dashes)");
                }
                ConfigFile.Entry earlier = seen.put(entry.key(), entry);
                check(option, entry.value(), file.where(entry));
                if (earlier != null && !option.isMultiValue()) {
                    throw new IllegalArgumentException(file.where(entry) + ": '" + entry.key()
                            + "' is already set on line " + earlier.line());
                }
                Setting before = loaded.get(option.longestName());
                loaded.put(option.longestName(), before == null ? new Setting(entry.value(), file.where(entry))
                        : new Setting(before.value() + "," + entry.value(), before.origin() + " and "
                                + entry.line()));
            }
        }
        Map<String, OptionSpec> byVariable = new TreeMap<>();
        settingsOf(command).forEach(option -> byVariable.put(variable(option), option));
        for (Map.Entry<String, String> variable : new TreeMap<>(environment).entrySet()) {
            String name = variable.getKey();
            if (!name.startsWith(ENVIRONMENT_PREFIX) || OTHER_VARIABLES.contains(name)) {
                continue;
            }
            OptionSpec option = byVariable.get(name);
            if (option == null) {
                LOG.warn("gantry: ignoring the environment variable {}: no `gantry run` flag has that name", name);
                continue;
            }
            String origin = "the environment variable " + name;
            check(option, variable.getValue(), origin);
            loaded.put(option.longestName(), new Setting(variable.getValue(), origin));
        }
        return loaded;
    }

    /** Refuses a value the flag itself would refuse, naming where it was written. */
    private static void check(OptionSpec option, String value, String where) {
        if (option.arity().max() == 0) {
            if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
                throw new IllegalArgumentException(where + ": " + key(option) + " takes true or false, not '"
                        + value + "'");
            }
            return;
        }
        CommandLine probe = new CommandLine(option.command().userObject().getClass());
        try {
            probe.parseArgs(option.longestName(), value);
        } catch (CommandLine.ParameterException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage());
        }
    }
}
