package io.gantry.cdc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** What a JSON-lines sink holds, read the way a consumer would: rotated files in order, then the current file. */
public record SinkContents(List<String> lines) {

    private static final Pattern ID = Pattern.compile("\"after\":\\{\"id\":(\\d+)");
    private static final Pattern SERVER = Pattern.compile("\"server\":\"([^\"]+)\"");
    private static final Pattern OP = Pattern.compile("\"op\":\"([a-z]+)\"");
    private static final Pattern GTID = Pattern.compile("\"gtid\":\"([^\"]*)\"");

    public static SinkContents read(Path current) {
        List<Path> files = new ArrayList<>();
        String prefix = current.getFileName() + ".";
        try (Stream<Path> siblings = Files.list(current.getParent())) {
            siblings.filter(p -> p.getFileName().toString().startsWith(prefix)
                            && p.getFileName().toString().substring(prefix.length()).matches("\\d{6}"))
                    .sorted().forEach(files::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        files.add(current);
        List<String> lines = new ArrayList<>();
        for (Path file : files) {
            if (Files.exists(file)) {
                try {
                    for (String line : Files.readAllLines(file)) {
                        if (!line.isEmpty()) {
                            lines.add(line);
                        }
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        return new SinkContents(lines);
    }

    /** The {@code id} of each line's row after the change, for lines of {@code table} with op {@code op}. */
    public List<Long> ids(String table, String op) {
        List<Long> ids = new ArrayList<>();
        for (String line : lines) {
            if (line.contains("\"table\":\"" + table + "\"") && op.equals(field(OP, line))) {
                Matcher id = ID.matcher(line);
                if (id.find()) {
                    ids.add(Long.parseLong(id.group(1)));
                }
            }
        }
        return ids;
    }

    /** The servers the lines were read from, in order, without repeats in a row. */
    public List<String> serverRuns() {
        List<String> runs = new ArrayList<>();
        for (String line : lines) {
            String server = field(SERVER, line);
            if (runs.isEmpty() || !runs.get(runs.size() - 1).equals(server)) {
                runs.add(server);
            }
        }
        return runs;
    }

    public List<String> gtids(String op) {
        List<String> gtids = new ArrayList<>();
        for (String line : lines) {
            if (op.equals(field(OP, line))) {
                gtids.add(field(GTID, line));
            }
        }
        return gtids;
    }

    static String field(Pattern pattern, String line) {
        Matcher matcher = pattern.matcher(line);
        return matcher.find() ? matcher.group(1) : null;
    }
}
