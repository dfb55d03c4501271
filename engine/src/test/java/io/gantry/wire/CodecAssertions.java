package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import org.assertj.core.api.ObjectAssert;

/** Helpers shared by the codec tests: encoding to bytes, truncation and byte-flip sweeps. */
final class CodecAssertions {

    private static final int[] FLIP_MASKS = {0x01, 0x80, 0xFF};

    private CodecAssertions() {
    }

    /** The bytes {@code writer} produces. */
    static byte[] bytes(Consumer<ByteBuf> writer) {
        ByteBuf buf = Unpooled.buffer();
        try {
            writer.accept(buf);
            byte[] out = new byte[buf.readableBytes()];
            buf.readBytes(out);
            return out;
        } finally {
            buf.release();
        }
    }

    /** A buffer holding {@code values}, each taken as one unsigned byte. */
    static ByteBuf buf(int... values) {
        ByteBuf buf = Unpooled.buffer(values.length);
        for (int v : values) {
            buf.writeByte(v);
        }
        return buf;
    }

    /** Decodes {@code bytes} with {@code decoder}, releasing the buffer afterwards. */
    static <T> T decode(byte[] bytes, Function<ByteBuf, T> decoder) {
        ByteBuf buf = Unpooled.wrappedBuffer(bytes);
        try {
            return decoder.apply(buf);
        } finally {
            buf.release();
        }
    }

    /** Decodes {@code bytes} and starts an assertion on the result. */
    static <T> ObjectAssert<T> assertDecoded(byte[] bytes, Function<ByteBuf, T> decoder) {
        return assertThat(decode(bytes, decoder));
    }

    /**
     * Decodes every strict prefix of {@code encoded}. Each must either decode (optional trailing
     * fields) or throw {@link MalformedPacketException} whose message starts with the field name;
     * nothing else may escape. Returns the exceptions, in prefix order.
     */
    static List<MalformedPacketException> assertTruncationsFailClearly(byte[] encoded, Function<ByteBuf, ?> decoder) {
        List<MalformedPacketException> failures = new ArrayList<>();
        for (int length = 0; length < encoded.length; length++) {
            MalformedPacketException e = decodeClearly(Arrays.copyOf(encoded, length), decoder,
                    "prefix of " + length + " bytes");
            if (e != null) {
                failures.add(e);
            }
        }
        return failures;
    }

    /**
     * Flips bits of every byte of {@code encoded} (several masks). Each variant must decode to
     * some value or throw {@link MalformedPacketException} naming a field; nothing else may
     * escape. Returns how many variants were rejected.
     */
    static int assertFlipsFailClearly(byte[] encoded, Function<ByteBuf, ?> decoder) {
        int rejected = 0;
        for (int i = 0; i < encoded.length; i++) {
            for (int mask : FLIP_MASKS) {
                byte[] flipped = encoded.clone();
                flipped[i] ^= (byte) mask;
                if (decodeClearly(flipped, decoder, "byte " + i + " xor 0x" + Integer.toHexString(mask)) != null) {
                    rejected++;
                }
            }
        }
        return rejected;
    }

    private static MalformedPacketException decodeClearly(byte[] input, Function<ByteBuf, ?> decoder, String what) {
        ByteBuf buf = Unpooled.wrappedBuffer(input);
        try {
            decoder.apply(buf);
            return null;
        } catch (MalformedPacketException e) {
            assertThat(e.field()).as("field named for %s", what).isNotBlank();
            assertThat(e.getMessage()).as("message for %s", what).startsWith(e.field() + ": ");
            return e;
        } catch (RuntimeException e) {
            throw new AssertionError(what + " escaped as " + e + " instead of MalformedPacketException", e);
        } finally {
            buf.release();
        }
    }
}
