package io.gantry.cdc;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Transactions and file readers shared by the sink tests. */
final class SinkFixtures {

    static final Instant AT = Instant.parse("2026-12-01T03:04:05Z");

    private SinkFixtures() {
    }

    /** A transaction of {@code rows} inserts whose values hold what a careless reader would trip over. */
    static ChangeTransaction tx(String gtid, int rows) {
        List<RowChange> changes = new ArrayList<>();
        for (int i = 1; i <= rows; i++) {
            Map<String, Object> after = new LinkedHashMap<>();
            after.put("id", (long) i);
            after.put("note", "row " + i + " of " + gtid + ": }\"\n{\"txn_row\":1} é😀");
            after.put("bin", new byte[] {'\n', '}', (byte) i});
            changes.add(new RowChange("app", "t1", ChangeOp.INSERT, null, after));
        }
        return new ChangeTransaction(gtid, "127.0.0.1:3306", AT, changes);
    }

    static RowChange snapshotRow(long id) {
        Map<String, Object> after = new LinkedHashMap<>();
        after.put("id", id);
        after.put("name", "snap\n" + id);
        return new RowChange("app", "t1", ChangeOp.SNAPSHOT, null, after);
    }

    static List<String> lines(Path file) throws IOException {
        return Files.readAllLines(file, UTF_8);
    }

    static List<ChangeJson.LineMark> marks(Path file) throws IOException {
        return lines(file).stream().map(line -> (ChangeJson.LineMark) ChangeJson.parse(line.getBytes(UTF_8))).toList();
    }

    static List<String> gtidsOf(Path file) throws IOException {
        return marks(file).stream().map(ChangeJson.LineMark::gtid).distinct().toList();
    }

    /** The rotated files next to {@code path}, oldest first, by name. */
    static List<Path> rotated(Path path) throws IOException {
        String prefix = path.getFileName() + ".";
        try (Stream<Path> siblings = Files.list(path.getParent())) {
            return siblings.filter(p -> p.getFileName().toString().matches(
                            java.util.regex.Pattern.quote(prefix) + "[0-9]{6}"))
                    .sorted()
                    .collect(Collectors.toList());
        }
    }

    static byte[] bytesOf(ChangeTransaction tx) {
        StringBuilder out = new StringBuilder();
        ChangeJson.appendTransaction(out, tx);
        return out.toString().getBytes(UTF_8);
    }
}
