package io.gantry.cdc;

import static io.gantry.cdc.SinkFixtures.bytesOf;
import static io.gantry.cdc.SinkFixtures.gtidsOf;
import static io.gantry.cdc.SinkFixtures.snapshotRow;
import static io.gantry.cdc.SinkFixtures.tx;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonlSinkRecoveryTest {

    @TempDir
    Path dir;

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    /** Lines, a last one without a line end counting as one. */
    private static long linesIn(byte[] bytes) {
        long lines = 0;
        for (byte b : bytes) {
            if (b == '\n') {
                lines++;
            }
        }
        return bytes.length > 0 && bytes[bytes.length - 1] != '\n' ? lines + 1 : lines;
    }

    private static int indexOf(byte[] bytes, byte wanted) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == wanted) {
                return i;
            }
        }
        throw new AssertionError("no " + wanted);
    }

    @Test
    void startsEmptyAndCreatesTheDirectories() throws IOException {
        Path path = dir.resolve("a/b/changes.jsonl");

        try (JsonlSink sink = new JsonlSink(path, 1000)) {
            JsonlSink.Recovery recovery = sink.recover();

            assertThat(recovery).isEqualTo(new JsonlSink.Recovery(List.of(), 0, 0, false));
            assertThat(path).exists().isEmptyFile();
        }
    }

    @Test
    void reportsTheDistinctGtidsOfACleanFileInFileOrder() throws IOException {
        Path path = dir.resolve("changes.jsonl");
        Files.write(path, concat(bytesOf(tx("0-1-3", 2)), bytesOf(tx("0-1-1", 1)), bytesOf(tx("0-1-3", 1))));
        long size = Files.size(path);

        try (JsonlSink sink = new JsonlSink(path, 1000)) {
            JsonlSink.Recovery recovery = sink.recover();

            assertThat(recovery.gtids()).containsExactly("0-1-3", "0-1-1");
            assertThat(recovery.droppedBytes()).isZero();
            assertThat(Files.size(path)).isEqualTo(size);
        }
    }

    @Test
    void keepsExactlyTheCompleteTransactionsWhereverTheLastOneIsCut() throws IOException {
        byte[] complete = concat(bytesOf(tx("0-1-1", 2)), bytesOf(tx("0-1-2", 1)));
        byte[] last = bytesOf(tx("0-1-3", 3));
        byte[] whole = concat(complete, last);

        for (int cut = complete.length; cut <= whole.length; cut++) {
            Path path = dir.resolve("cut" + cut).resolve("changes.jsonl");
            Files.createDirectories(path.getParent());
            Files.write(path, Arrays.copyOf(whole, cut));

            try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
                JsonlSink.Recovery recovery = sink.recover();

                if (cut == whole.length) {
                    assertThat(recovery.gtids()).as("cut at %d", cut).containsExactly("0-1-1", "0-1-2", "0-1-3");
                    assertThat(recovery.droppedBytes()).isZero();
                    assertThat(Files.readAllBytes(path)).isEqualTo(whole);
                } else {
                    assertThat(recovery.gtids()).as("cut at %d", cut).containsExactly("0-1-1", "0-1-2");
                    assertThat(recovery.droppedBytes()).as("cut at %d", cut).isEqualTo(cut - complete.length);
                    assertThat(recovery.droppedLines()).as("cut at %d", cut)
                            .isEqualTo(linesIn(Arrays.copyOfRange(whole, complete.length, cut)));
                    assertThat(Files.readAllBytes(path)).as("cut at %d", cut).isEqualTo(complete);
                }
            }
        }
    }

    @Test
    void appendsAfterTheCutAsIfTheTornTransactionNeverHappened() throws IOException {
        Path path = dir.resolve("changes.jsonl");
        byte[] complete = bytesOf(tx("0-1-1", 2));
        byte[] torn = Arrays.copyOf(bytesOf(tx("0-1-2", 2)), 300);
        Files.write(path, concat(complete, torn));

        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            assertThat(sink.recover().droppedBytes()).isEqualTo(300);
            sink.append(tx("0-1-2", 2));
            sink.flush();
        }

        assertThat(Files.readAllBytes(path)).isEqualTo(concat(complete, bytesOf(tx("0-1-2", 2))));
        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            assertThat(sink.recover().gtids()).containsExactly("0-1-1", "0-1-2");
        }
    }

    @Test
    void dropsADamagedLastLineEvenWithALineEnd() throws IOException {
        Path path = dir.resolve("changes.jsonl");
        byte[] complete = bytesOf(tx("0-1-1", 1));
        byte[] started = new String(bytesOf(tx("0-1-2", 2)), UTF_8).lines().findFirst().orElseThrow()
                .concat("\n").getBytes(UTF_8);
        Files.write(path, concat(complete, started, "\0\0\0garbage\n".getBytes(UTF_8)));

        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            JsonlSink.Recovery recovery = sink.recover();

            assertThat(recovery.gtids()).containsExactly("0-1-1");
            assertThat(recovery.droppedLines()).isEqualTo(2);
        }
        assertThat(Files.readAllBytes(path)).isEqualTo(complete);
    }

    @Test
    void dropsALastLineWithoutItsLineEndEvenWhenItParses() throws IOException {
        Path path = dir.resolve("changes.jsonl");
        byte[] complete = bytesOf(tx("0-1-1", 1));
        byte[] last = bytesOf(tx("0-1-2", 1));
        Files.write(path, concat(complete, Arrays.copyOf(last, last.length - 1)));

        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            assertThat(sink.recover().gtids()).containsExactly("0-1-1");
        }
        assertThat(Files.readAllBytes(path)).isEqualTo(complete);
    }

    @Test
    void refusesADamagedLineInTheMiddleNamingFileAndLine() throws IOException {
        Path path = dir.resolve("changes.jsonl");
        byte[] whole = concat(bytesOf(tx("0-1-1", 2)), bytesOf(tx("0-1-2", 1)));
        whole[indexOf(whole, (byte) '\n') + 2] = 'x';
        Files.write(path, whole);

        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            assertThatThrownBy(sink::recover)
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(path.toString())
                    .hasMessageContaining("line 2 ");
        }
        assertThat(Files.readAllBytes(path)).isEqualTo(whole);
    }

    @Test
    void refusesADamagedLineFollowedOnlyByAPartialLine() throws IOException {
        Path path = dir.resolve("changes.jsonl");
        Files.write(path, concat(bytesOf(tx("0-1-1", 1)), "garbage\n{\"gtid\"".getBytes(UTF_8)));

        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            assertThatThrownBy(sink::recover).isInstanceOf(IOException.class).hasMessageContaining("line 2 ");
        }
    }

    @Test
    void refusesLinesOutOfSequence() throws IOException {
        byte[] first = bytesOf(tx("0-1-1", 3));
        List<String> lines = new String(first, UTF_8).lines().toList();
        byte[] missingMiddleRow = (lines.get(0) + "\n" + lines.get(2) + "\n").getBytes(UTF_8);
        byte[] startsAtRowTwo = (lines.get(1) + "\n").getBytes(UTF_8);
        byte[] unfinishedThenNew = concat((lines.get(0) + "\n").getBytes(UTF_8), bytesOf(tx("0-1-2", 1)));

        for (byte[] content : List.of(missingMiddleRow, startsAtRowTwo, unfinishedThenNew)) {
            Path path = Files.createTempDirectory(dir, "seq").resolve("changes.jsonl");
            Files.write(path, content);
            try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
                assertThatThrownBy(sink::recover).isInstanceOf(IOException.class).hasMessageContaining(" line ");
            }
        }
    }

    @Test
    void refusesASnapshotLineInTheCurrentFile() throws IOException {
        Path path = dir.resolve("changes.jsonl");
        Files.writeString(path, ChangeJson.snapshotLine("0-1-5", "s", SinkFixtures.AT, snapshotRow(1), 1) + "\n");

        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            assertThatThrownBy(sink::recover).isInstanceOf(IOException.class).hasMessageContaining("line 1 ");
        }
    }

    @Test
    void discardsALeftoverPartialSnapshot() throws IOException {
        Path path = dir.resolve("changes.jsonl");
        Path partial = dir.resolve("changes.jsonl.snapshot-partial");
        Files.writeString(partial, ChangeJson.snapshotLine("0-1-5", "s", SinkFixtures.AT, snapshotRow(1), 1) + "\n");

        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            JsonlSink.Recovery recovery = sink.recover();

            assertThat(recovery.discardedPartialSnapshot()).isTrue();
            assertThat(recovery.gtids()).isEmpty();
        }
        assertThat(partial).doesNotExist();
        assertThat(SinkFixtures.rotated(path)).isEmpty();
    }

    @Test
    void reportsTheNewestRotatedFilesLastGtidWhenTheCurrentFileIsMissingOrEmpty() throws IOException {
        Path path = dir.resolve("changes.jsonl");
        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            sink.recover();
            sink.append(tx("0-1-1", 1));
            sink.flush();
            SnapshotWriter snapshot = sink.beginSnapshot("0-1-7");
            snapshot.add("s", SinkFixtures.AT, snapshotRow(1));
            snapshot.add("s", SinkFixtures.AT, snapshotRow(2));
            snapshot.commit();
        }
        assertThat(path).isEmptyFile();

        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            assertThat(sink.recover().gtids()).containsExactly("0-1-7");
        }

        // A crash between the rename and the creation of the new file.
        Files.delete(path);
        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            assertThat(sink.recover().gtids()).containsExactly("0-1-7");
            sink.append(tx("0-1-8", 2));
        }

        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            assertThat(sink.recover().gtids()).containsExactly("0-1-8");
        }
    }

    @Test
    void reportsTheNewestRotatedFilesLastGtidWhenOnlyATornTransactionWasInTheCurrentFile() throws IOException {
        Path path = dir.resolve("changes.jsonl");
        Files.write(dir.resolve("changes.jsonl.000001"), bytesOf(tx("0-1-1", 1)));
        Files.write(dir.resolve("changes.jsonl.000002"), concat(bytesOf(tx("0-1-2", 1)), bytesOf(tx("0-1-3", 2))));
        Files.write(path, Arrays.copyOf(bytesOf(tx("0-1-4", 1)), 50));

        try (JsonlSink sink = new JsonlSink(path, 1 << 20)) {
            JsonlSink.Recovery recovery = sink.recover();

            assertThat(recovery.gtids()).containsExactly("0-1-3");
            assertThat(recovery.droppedBytes()).isEqualTo(50);
        }
        assertThat(gtidsOf(dir.resolve("changes.jsonl.000002"))).containsExactly("0-1-2", "0-1-3");
    }

    @Test
    void recoverIsCalledOnceAndFirst() throws IOException {
        Path path = dir.resolve("changes.jsonl");
        try (JsonlSink sink = new JsonlSink(path, 1000)) {
            assertThatThrownBy(() -> sink.append(tx("0-1-1", 1)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("recover()");
            assertThatThrownBy(sink::flush).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(sink::rotateIfDue).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> sink.beginSnapshot("0-1-1")).isInstanceOf(IllegalStateException.class);

            sink.recover();

            assertThatThrownBy(sink::recover).isInstanceOf(IllegalStateException.class);
        }
    }
}
