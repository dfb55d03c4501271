package io.gantry.cli;

import java.io.IOException;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A configuration file of {@code gantry run}: one {@code key = value} per line, keys the long flag names without
 * their dashes, {@code #} starting a comment line, blank lines ignored. Values are taken literally up to the end of
 * the line (trimmed): no quotes, no escapes and no comments after a value, so a URL or a path with a {@code #} stays
 * whole. A key may appear twice only where the flag may be repeated (the server lists); that is checked by
 * {@link ConfigDefaults}, which knows the flags.
 *
 * @param path    the file, as named by {@code --config}
 * @param entries the settings in file order
 */
record ConfigFile(Path path, List<Entry> entries) {

    /** One {@code key = value} line. */
    record Entry(String key, String value, int line) {
    }

    /**
     * Reads and splits the file.
     *
     * @throws IllegalArgumentException naming the file, and the line for a line that is not {@code key = value}
     */
    static ConfigFile read(Path path) {
        List<String> lines;
        try {
            lines = Files.readAllLines(path, StandardCharsets.UTF_8);
        } catch (MalformedInputException e) {
            throw new IllegalArgumentException("--config " + path + " is not UTF-8 text");
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read --config " + path + ": " + describe(e));
        }
        return parse(path, lines);
    }

    static ConfigFile parse(Path path, List<String> lines) {
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int equals = line.indexOf('=');
            String key = equals < 0 ? "" : line.substring(0, equals).strip();
            if (key.isEmpty()) {
                throw new IllegalArgumentException(path + " line " + (i + 1) + ": expected key = value, found '"
                        + abbreviate(line) + "'");
            }
            if (key.startsWith("-")) {
                throw new IllegalArgumentException(path + " line " + (i + 1) + ": write the key without dashes: '"
                        + key.replaceFirst("^-+", "") + " = ...'");
            }
            entries.add(new Entry(key, line.substring(equals + 1).strip(), i + 1));
        }
        return new ConfigFile(path, List.copyOf(entries));
    }

    /** Where an entry comes from, for errors: {@code /etc/gantry/gantry.conf line 12}. */
    String where(Entry entry) {
        return path + " line " + entry.line();
    }

    /** A line as an error may quote it: not the whole of a long line, which may hold a password. */
    private static String abbreviate(String line) {
        return line.length() <= 40 ? line : line.substring(0, 37) + "...";
    }

    private static String describe(IOException e) {
        return e instanceof java.nio.file.NoSuchFileException ? "no such file"
                : e instanceof java.nio.file.AccessDeniedException ? "permission denied" : e.toString();
    }
}
