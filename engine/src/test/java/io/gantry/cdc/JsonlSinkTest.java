package io.gantry.cdc;

import static io.gantry.cdc.SinkFixtures.AT;
import static io.gantry.cdc.SinkFixtures.bytesOf;
import static io.gantry.cdc.SinkFixtures.gtidsOf;
import static io.gantry.cdc.SinkFixtures.lines;
import static io.gantry.cdc.SinkFixtures.marks;
import static io.gantry.cdc.SinkFixtures.rotated;
import static io.gantry.cdc.SinkFixtures.snapshotRow;
import static io.gantry.cdc.SinkFixtures.tx;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonlSinkTest {

    @TempDir
    Path dir;

    private Path path() {
        return dir.resolve("changes.jsonl");
    }

    private JsonlSink recovered(long rotationBytes) throws IOException {
        JsonlSink sink = new JsonlSink(path(), rotationBytes);
        sink.recover();
        return sink;
    }

    @Test
    void refusesARotationSizeThatIsNotPositive() {
        assertThatThrownBy(() -> new JsonlSink(path(), 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rotation size")
                .hasMessageContaining("more than 0 bytes")
                .hasMessageContaining("was 0");
        assertThatThrownBy(() -> new JsonlSink(path(), -5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("was -5");
    }

    @Test
    void writesNothingToTheFileBeforeFlush() throws IOException {
        try (JsonlSink sink = recovered(1 << 20)) {
            sink.append(tx("0-1-1", 2));
            assertThat(path()).isEmptyFile();

            assertThat(sink.flush()).isTrue();

            assertThat(Files.readAllBytes(path())).isEqualTo(bytesOf(tx("0-1-1", 2)));
            assertThat(marks(path())).containsExactly(
                    new ChangeJson.LineMark("0-1-1", 1, OptionalLong.of(2)),
                    new ChangeJson.LineMark("0-1-1", 2, OptionalLong.of(2)));
            assertThat(sink.flush()).isFalse();
        }
    }

    @Test
    void writesNothingForATransactionWithoutChanges() throws IOException {
        try (JsonlSink sink = recovered(1 << 20)) {
            sink.append(new ChangeTransaction("0-1-1", "s", AT, List.of()));

            assertThat(sink.flush()).isFalse();
            assertThat(path()).isEmptyFile();
        }
    }

    @Test
    void buffersNothingOfATransactionWithAnUnwritableValue() throws IOException {
        try (JsonlSink sink = recovered(1 << 20)) {
            sink.append(tx("0-1-1", 1));
            ChangeTransaction bad = new ChangeTransaction("0-1-2", "s", AT, List.of(
                    tx("x", 1).changes().get(0),
                    new RowChange("app", "t1", ChangeOp.INSERT, null, Map.of("when", new java.util.Date()))));

            assertThatThrownBy(() -> sink.append(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("when");
            sink.flush();

            assertThat(gtidsOf(path())).containsExactly("0-1-1");
        }
    }

    @Test
    void closeFlushesAndMayBeCalledTwice() throws IOException {
        JsonlSink sink = recovered(1 << 20);
        sink.append(tx("0-1-1", 1));

        sink.close();
        sink.close();

        assertThat(gtidsOf(path())).containsExactly("0-1-1");
        assertThatThrownBy(() -> sink.append(tx("0-1-2", 1)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void closeBeforeRecoverIsFine() throws IOException {
        new JsonlSink(path(), 1000).close();

        assertThat(path()).doesNotExist();
    }

    @Test
    void rotatesOnlyOncePastTheSizeAndNumbersFilesInOrder() throws IOException {
        long oneTx = bytesOf(tx("0-1-1", 1)).length;
        try (JsonlSink sink = recovered(oneTx)) {
            sink.append(tx("0-1-1", 1));
            sink.flush();
            assertThat(Files.size(path())).isEqualTo(oneTx);
            assertThat(sink.rotateIfDue()).as("exactly the rotation size is not larger").isFalse();

            sink.append(tx("0-1-2", 1));
            sink.flush();
            assertThat(sink.rotateIfDue()).isTrue();
            assertThat(path()).isEmptyFile();
            assertThat(sink.rotateIfDue()).isFalse();

            sink.append(tx("0-1-3", 2));
            sink.flush();
            assertThat(sink.rotateIfDue()).isTrue();
        }

        assertThat(rotated(path())).extracting(p -> p.getFileName().toString())
                .containsExactly("changes.jsonl.000001", "changes.jsonl.000002");
        assertThat(gtidsOf(dir.resolve("changes.jsonl.000001"))).containsExactly("0-1-1", "0-1-2");
        assertThat(gtidsOf(dir.resolve("changes.jsonl.000002"))).containsExactly("0-1-3");
    }

    @Test
    void losesAndRepeatsNoLineAcrossManyRotations() throws IOException {
        List<String> written = new ArrayList<>();
        try (JsonlSink sink = recovered(700)) {
            for (int i = 1; i <= 40; i++) {
                ChangeTransaction tx = tx("0-1-" + i, 1 + i % 3);
                sink.append(tx);
                StringBuilder out = new StringBuilder();
                ChangeJson.appendTransaction(out, tx);
                written.addAll(out.toString().lines().toList());
                if (i % 2 == 0) {
                    sink.flush();
                    sink.rotateIfDue();
                }
            }
        }

        List<Path> files = rotated(path());
        assertThat(files).hasSizeGreaterThan(5);
        List<String> read = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            assertThat(files.get(i).getFileName().toString()).isEqualTo(String.format("changes.jsonl.%06d", i + 1));
            assertThat(Files.size(files.get(i))).isGreaterThan(700);
            List<ChangeJson.LineMark> marks = marks(files.get(i));
            assertThat(marks.get(marks.size() - 1).endsTransaction()).isTrue();
            read.addAll(lines(files.get(i)));
        }
        read.addAll(lines(path()));
        assertThat(read).isEqualTo(written);
    }

    @Test
    void continuesNumberingAfterTheHighestExistingFile() throws IOException {
        Files.write(dir.resolve("changes.jsonl.000007"), bytesOf(tx("0-1-1", 1)));
        Files.writeString(dir.resolve("changes.jsonl.000003"), "");
        Files.writeString(dir.resolve("changes.jsonl.12"), "");
        Files.writeString(dir.resolve("changes.jsonl.000009x"), "");
        Files.writeString(dir.resolve("other.jsonl.000011"), "");

        try (JsonlSink sink = recovered(1)) {
            sink.append(tx("0-1-2", 1));
            sink.flush();
            assertThat(sink.rotateIfDue()).isTrue();
        }

        assertThat(gtidsOf(dir.resolve("changes.jsonl.000008"))).containsExactly("0-1-2");
    }

    @Test
    void refusesToRotateWithSomethingBuffered() throws IOException {
        try (JsonlSink sink = recovered(1)) {
            sink.append(tx("0-1-1", 1));

            assertThatThrownBy(sink::rotateIfDue)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("flush");
            assertThat(rotated(path())).isEmpty();
        }
    }

    @Test
    void putsACommittedSnapshotAfterEverythingWrittenBefore() throws IOException {
        try (JsonlSink sink = recovered(1 << 20)) {
            sink.append(tx("0-1-1", 2));
            sink.flush();
            SnapshotWriter snapshot = sink.beginSnapshot("0-1-5");
            for (long id = 1; id <= 3; id++) {
                snapshot.add("127.0.0.1:3306", AT, snapshotRow(id));
            }
            sink.append(tx("0-1-2", 1));
            assertThat(snapshot.rows()).isEqualTo(3);

            snapshot.commit();

            assertThat(path()).isEmptyFile();
            assertThat(dir.resolve("changes.jsonl.snapshot-partial")).doesNotExist();
            sink.append(tx("0-1-6", 1));
            sink.flush();
        }

        List<Path> files = rotated(path());
        assertThat(files).hasSize(2);
        assertThat(gtidsOf(files.get(0))).containsExactly("0-1-1", "0-1-2");
        assertThat(marks(files.get(1))).containsExactly(
                new ChangeJson.LineMark("0-1-5", 1, OptionalLong.empty()),
                new ChangeJson.LineMark("0-1-5", 2, OptionalLong.empty()),
                new ChangeJson.LineMark("0-1-5", 3, OptionalLong.empty()));
        assertThat(lines(files.get(1))).allMatch(line -> line.contains("\"op\":\"snapshot\""));
        assertThat(gtidsOf(path())).containsExactly("0-1-6");
    }

    @Test
    void commitsASnapshotIntoTheNextNumberWithoutRotatingAnEmptyFile() throws IOException {
        try (JsonlSink sink = recovered(1 << 20)) {
            SnapshotWriter snapshot = sink.beginSnapshot("0-1-5");
            snapshot.add("s", AT, snapshotRow(1));

            snapshot.commit();
        }

        assertThat(rotated(path())).extracting(p -> p.getFileName().toString())
                .containsExactly("changes.jsonl.000001");
        assertThat(gtidsOf(dir.resolve("changes.jsonl.000001"))).containsExactly("0-1-5");
        assertThat(path()).isEmptyFile();
    }

    @Test
    void leavesNoFileForASnapshotWithoutRows() throws IOException {
        try (JsonlSink sink = recovered(1 << 20)) {
            sink.append(tx("0-1-1", 1));
            sink.flush();

            sink.beginSnapshot("0-1-5").commit();

            assertThat(rotated(path())).isEmpty();
            assertThat(dir.resolve("changes.jsonl.snapshot-partial")).doesNotExist();
            assertThat(gtidsOf(path())).containsExactly("0-1-1");
        }
    }

    /** A cluster's feed owner that lost its lease while it copied the tables publishes nothing of its snapshot. */
    @Test
    void aSnapshotWhosePublishingIsRefusedLeavesTheSinkAsItWas() throws IOException {
        Path partial = dir.resolve("changes.jsonl.snapshot-partial");
        try (JsonlSink sink = recovered(1 << 20)) {
            sink.append(tx("0-1-1", 1));
            SnapshotWriter snapshot = sink.beginSnapshot("0-1-5");
            snapshot.add("s", AT, snapshotRow(1));

            assertThatThrownBy(() -> snapshot.commit(() -> false)).isInstanceOf(IOException.class)
                    .hasMessageContaining("no longer owns the cluster's change feed");
            snapshot.abort();

            assertThat(partial).doesNotExist();
            assertThat(rotated(path())).isEmpty();
            sink.flush();
            assertThat(gtidsOf(path())).containsExactly("0-1-1");
        }
    }

    /** A refused snapshot's abort leaves alone the staging file the feed's next owner made under the same name. */
    @Test
    void abortLeavesAStagingFileThatIsNotItsOwn() throws IOException {
        Path partial = dir.resolve("changes.jsonl.snapshot-partial");
        try (JsonlSink sink = recovered(1 << 20)) {
            SnapshotWriter stale = sink.beginSnapshot("0-1-5");
            stale.add("s", AT, snapshotRow(1));
            Files.delete(partial); // the next owner's recovery removed it...
            Files.writeString(partial, "the next owner's snapshot\n"); // ...and staged its own

            assertThatThrownBy(() -> stale.commit(() -> false)).isInstanceOf(IOException.class);
            stale.abort();

            assertThat(partial).hasContent("the next owner's snapshot");
        }
    }

    @Test
    void abortDeletesTheStagingFile() throws IOException {
        Path partial = dir.resolve("changes.jsonl.snapshot-partial");
        try (JsonlSink sink = recovered(1 << 20)) {
            SnapshotWriter snapshot = sink.beginSnapshot("0-1-5");
            snapshot.add("s", AT, snapshotRow(1));
            assertThat(partial).exists();

            snapshot.abort();

            assertThat(partial).doesNotExist();
            assertThat(rotated(path())).isEmpty();
            assertThatThrownBy(() -> snapshot.add("s", AT, snapshotRow(2))).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(snapshot::commit).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void closingTheSinkAbortsAnOpenSnapshot() throws IOException {
        Path partial = dir.resolve("changes.jsonl.snapshot-partial");
        JsonlSink sink = recovered(1 << 20);
        SnapshotWriter snapshot = sink.beginSnapshot("0-1-5");
        snapshot.add("s", AT, snapshotRow(1));

        sink.close();

        assertThat(partial).doesNotExist();
        assertThatThrownBy(snapshot::commit).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void anOldWriterCannotTouchANewerSnapshotsStagingFile() throws IOException {
        Path partial = dir.resolve("changes.jsonl.snapshot-partial");
        try (JsonlSink sink = recovered(1 << 20)) {
            SnapshotWriter first = sink.beginSnapshot("0-1-5");
            first.add("s", AT, snapshotRow(1));
            first.commit();
            SnapshotWriter second = sink.beginSnapshot("0-1-6");
            second.add("s", AT, snapshotRow(1));

            first.close();

            assertThat(partial).exists();
            second.commit();
        }
        assertThat(rotated(path())).hasSize(2);
    }

    @Test
    void refusesASecondSnapshotWhileOneIsOpen() throws IOException {
        try (JsonlSink sink = recovered(1 << 20)) {
            sink.beginSnapshot("0-1-5");

            assertThatThrownBy(() -> sink.beginSnapshot("0-1-6"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("commit or abort");
        }
    }

    @Test
    void beginningASnapshotReplacesALeftoverStagingFile() throws IOException {
        Path partial = dir.resolve("changes.jsonl.snapshot-partial");
        try (JsonlSink sink = recovered(1 << 20)) {
            Files.writeString(partial, "leftover\n");
            SnapshotWriter snapshot = sink.beginSnapshot("0-1-5");
            snapshot.add("s", AT, snapshotRow(1));
            snapshot.commit();
        }

        assertThat(lines(dir.resolve("changes.jsonl.000001"))).hasSize(1).noneMatch(l -> l.contains("leftover"));
    }

    @Test
    void refusesAChangeRowInASnapshot() throws IOException {
        try (JsonlSink sink = recovered(1 << 20)) {
            SnapshotWriter snapshot = sink.beginSnapshot("0-1-5");

            assertThatThrownBy(() -> snapshot.add("s", AT, tx("x", 1).changes().get(0)))
                    .isInstanceOf(IllegalArgumentException.class);
            snapshot.add("s", AT, snapshotRow(1));

            assertThat(snapshot.rows()).isEqualTo(1);
            snapshot.commit();
        }
        assertThat(marks(dir.resolve("changes.jsonl.000001")))
                .containsExactly(new ChangeJson.LineMark("0-1-5", 1, OptionalLong.empty()));
    }
}
