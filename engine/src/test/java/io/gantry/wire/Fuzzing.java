package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * What the property-based fuzz tests ({@code *FuzzTest}) share: a bounded runner that fails a case that hangs or
 * allocates beyond a bound, the check that a decoder failed only in the documented way, and a byte-level mutator of
 * valid encodings.
 *
 * <p>How many cases each property runs is jqwik's {@code jqwik.tries.default}, set from the Maven property
 * {@code gantry.fuzz.tries} (engine/pom.xml; 1000 by default, e.g. {@code -Dgantry.fuzz.tries=100000} for a soak).
 * The time limit per case is {@code gantry.fuzz.caseTimeoutSeconds} (default 10).
 *
 * <p>Composite arbitraries here and in {@link WireArbitraries} are {@code withoutEdgeCases()}: jqwik combines the edge
 * cases of every component, a number that grows with the tries and took 6 GB of heap at 15 000 tries. The components'
 * own edge cases (empty arrays, 0, 0xFF, ...) still show up through ordinary generation and the mutator.
 */
public final class Fuzzing {

    /** A case that has not finished after this long counts as a hang. */
    public static final Duration CASE_TIMEOUT = Duration.ofSeconds(Long.getLong("gantry.fuzz.caseTimeoutSeconds", 10));

    /**
     * Allocation allowed per case besides the factor per input byte: class loading and the first use of a code path
     * allocate a few hundred KB once; a decoder that trusts a length field allocates megabytes.
     */
    public static final long ALLOCATION_BASE = 1 << 20;

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private static volatile ExecutorService worker = newWorker();

    private Fuzzing() {
    }

    /** What a bounded run gave: a value or the exception that escaped, with what it cost. */
    public record Outcome<T>(T value, RuntimeException failure, long allocatedBytes, long nanos) {
    }

    /**
     * Runs {@code task} on the fuzz worker thread, measuring what it allocates. Fails (AssertionError) if it has not
     * finished within {@link #CASE_TIMEOUT} or if an {@link Error} escapes (StackOverflowError, OutOfMemoryError);
     * a {@link RuntimeException} is returned in the outcome for the caller to judge.
     */
    public static <T> Outcome<T> run(String what, Supplier<T> task) {
        Future<Outcome<T>> future = worker.submit(() -> {
            long allocatedBefore = THREADS.getCurrentThreadAllocatedBytes();
            long started = System.nanoTime();
            T value = null;
            RuntimeException failure = null;
            try {
                value = task.get();
            } catch (RuntimeException e) {
                failure = e;
            }
            long nanos = System.nanoTime() - started;
            return new Outcome<>(value, failure, THREADS.getCurrentThreadAllocatedBytes() - allocatedBefore, nanos);
        });
        try {
            return future.get(CASE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            // The stuck thread may never return: later cases get a fresh worker.
            worker.shutdownNow();
            worker = newWorker();
            throw new AssertionError(what + " did not finish within " + CASE_TIMEOUT.toSeconds() + " s (a hang)");
        } catch (ExecutionException e) {
            throw new AssertionError(what + " escaped as " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /**
     * Decodes {@code input} with {@code decoder} under {@link #run}: the decoder must return a value or throw
     * {@link MalformedPacketException} naming a field, must allocate at most {@link #ALLOCATION_BASE} plus
     * {@code bytesPerInputByte} per input byte, and must finish.
     *
     * @return the outcome, for further checks on the value
     */
    public static <T> Outcome<T> decodeClearly(String what, byte[] input, Function<ByteBuf, T> decoder,
            long bytesPerInputByte) {
        Supplier<T> task = () -> {
            ByteBuf buf = Unpooled.wrappedBuffer(input);
            try {
                return decoder.apply(buf);
            } finally {
                buf.release();
            }
        };
        Outcome<T> outcome = run(what, task);
        String shown = what + " of " + input.length + " bytes " + hex(input);
        assertDocumentedFailure(outcome.failure(), shown);
        if (outcome.allocatedBytes() > ALLOCATION_BASE + bytesPerInputByte * input.length) {
            // The first use of a class (Netty's buffers, a decoder) allocates megabytes once: judge a second run.
            outcome = run(what, task);
        }
        assertThat(outcome.allocatedBytes())
                .as("bytes allocated decoding %s", shown)
                .isLessThanOrEqualTo(ALLOCATION_BASE + bytesPerInputByte * input.length);
        return outcome;
    }

    /** Passes for null or a MalformedPacketException whose message starts with its field; else fails naming it. */
    public static void assertDocumentedFailure(RuntimeException failure, String what) {
        if (failure == null) {
            return;
        }
        if (!(failure instanceof MalformedPacketException malformed)) {
            throw new AssertionError(what + " escaped as " + failure + " instead of MalformedPacketException", failure);
        }
        assertThat(malformed.field()).as("field named for %s", what).isNotBlank();
        assertThat(malformed.getMessage()).as("message for %s", what).startsWith(malformed.field() + ": ");
    }

    /** Up to 64 bytes of {@code bytes} in hex, for failure messages. */
    public static String hex(byte[] bytes) {
        String shown = HexFormat.of().formatHex(bytes, 0, Math.min(bytes.length, 64));
        return "[" + shown + (bytes.length > 64 ? "..." : "") + "]";
    }

    /** The bytes {@code encoder} writes. */
    public static byte[] encode(java.util.function.Consumer<ByteBuf> encoder) {
        return CodecAssertions.bytes(encoder);
    }

    // ---- mutation ----------------------------------------------------------------------------

    /** Byte values that mean something to the protocol: markers, length prefixes, limits. */
    private static final int[] INTERESTING = {0x00, 0x01, 0x03, 0x0C, 0x7F, 0x80, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF};

    private enum Kind { FLIP, SET, INSERT, DELETE, TRUNCATE, DUPLICATE, HUGE_LENGTH }

    /** One edit of a byte array; positions and lengths are taken modulo the array's size when applied. */
    private record Mutation(Kind kind, int position, int value, int length) {

        byte[] apply(byte[] in) {
            int n = in.length;
            int at = n == 0 ? 0 : Math.floorMod(position, n + 1);
            return switch (kind) {
                case FLIP -> {
                    if (n == 0) {
                        yield in;
                    }
                    byte[] out = in.clone();
                    out[at % n] ^= (byte) (value == 0 ? 1 : value);
                    yield out;
                }
                case SET -> {
                    if (n == 0) {
                        yield in;
                    }
                    byte[] out = in.clone();
                    out[at % n] = (byte) INTERESTING[Math.floorMod(value, INTERESTING.length)];
                    yield out;
                }
                case INSERT -> {
                    byte[] extra = new byte[1 + Math.floorMod(length, 8)];
                    for (int i = 0; i < extra.length; i++) {
                        extra[i] = (byte) (value * (i + 31));
                    }
                    yield splice(in, at, 0, extra);
                }
                case DELETE -> splice(in, at, Math.min(n - at, 1 + Math.floorMod(length, 8)), new byte[0]);
                case TRUNCATE -> Arrays.copyOf(in, at);
                case DUPLICATE -> {
                    int count = Math.min(n - at, 1 + Math.floorMod(length, 16));
                    yield splice(in, at, 0, Arrays.copyOfRange(in, at, at + count));
                }
                case HUGE_LENGTH -> {
                    // A length-encoded integer that announces far more than the packet holds.
                    byte[] prefix = switch (Math.floorMod(value, 3)) {
                        case 0 -> new byte[] {(byte) 0xFC, (byte) 0xFF, (byte) 0xFF};
                        case 1 -> new byte[] {(byte) 0xFD, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF};
                        default -> new byte[] {(byte) 0xFE, -1, -1, -1, -1, -1, -1, -1, (byte) (length & 0x7F)};
                    };
                    if (n == 0) {
                        yield prefix;
                    }
                    int start = Math.min(at, n - 1);
                    yield splice(in, start, Math.min(n - start, prefix.length), prefix);
                }
            };
        }

        private static byte[] splice(byte[] in, int at, int remove, byte[] insert) {
            byte[] out = new byte[in.length - remove + insert.length];
            System.arraycopy(in, 0, out, 0, at);
            System.arraycopy(insert, 0, out, at, insert.length);
            System.arraycopy(in, at + remove, out, at + insert.length, in.length - at - remove);
            return out;
        }
    }

    private static Arbitrary<Mutation> mutation() {
        return Combinators.combine(
                Arbitraries.of(Kind.class),
                Arbitraries.integers().between(0, 1 << 16),
                Arbitraries.integers().between(0, 255),
                Arbitraries.integers().between(0, 64))
                .as(Mutation::new);
    }

    /** Valid encodings with one to five mutations applied (flip, set, insert, delete, truncate, duplicate, huge length). */
    public static Arbitrary<byte[]> mutated(Arbitrary<byte[]> valid) {
        return Combinators.combine(valid, mutation().list().ofMinSize(1).ofMaxSize(5)).as(Fuzzing::applyAll)
                .withoutEdgeCases();
    }

    /** Mostly mutated valid encodings, sometimes the valid ones themselves, sometimes arbitrary bytes. */
    public static Arbitrary<byte[]> validMutatedOrArbitrary(Arbitrary<byte[]> valid, int maxArbitraryLength) {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(1, valid),
                net.jqwik.api.Tuple.of(6, mutated(valid)),
                net.jqwik.api.Tuple.of(2, arbitraryBytes(maxArbitraryLength))).withoutEdgeCases();
    }

    /** Arbitrary bytes, biased towards the protocol's interesting values. */
    public static Arbitrary<byte[]> arbitraryBytes(int maxLength) {
        Arbitrary<Byte> oneByte = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.bytes()),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(INTERESTING[0], INTERESTING[1], INTERESTING[2],
                        INTERESTING[3], INTERESTING[4], INTERESTING[5], INTERESTING[6], INTERESTING[7],
                        INTERESTING[8], INTERESTING[9], INTERESTING[10], INTERESTING[11]).map(i -> (byte) i.intValue())));
        return oneByte.list().ofMaxSize(maxLength).map(Fuzzing::toArray);
    }

    /**
     * The same mutations driven by a plain {@link java.util.Random}, for tests outside jqwik (the network fuzz test):
     * one to five edits of {@code valid}.
     */
    public static byte[] mutate(byte[] valid, java.util.Random random) {
        Kind[] kinds = Kind.values();
        byte[] out = valid;
        for (int i = 1 + random.nextInt(5); i > 0; i--) {
            out = new Mutation(kinds[random.nextInt(kinds.length)], random.nextInt(1 << 16), random.nextInt(256),
                    random.nextInt(65)).apply(out);
        }
        return out;
    }

    private static byte[] applyAll(byte[] valid, List<Mutation> mutations) {
        byte[] out = valid;
        for (Mutation m : mutations) {
            out = m.apply(out);
        }
        return out;
    }

    private static byte[] toArray(List<Byte> bytes) {
        byte[] out = new byte[bytes.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = bytes.get(i);
        }
        return out;
    }

    private static ExecutorService newWorker() {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "fuzz-worker");
            t.setDaemon(true);
            return t;
        });
    }
}
