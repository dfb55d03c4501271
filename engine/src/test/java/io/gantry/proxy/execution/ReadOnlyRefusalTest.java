package io.gantry.proxy.execution;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.wire.ErrPacket;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.junit.jupiter.api.Test;

/** Which server errors say "read-only", in the words MariaDB and MySQL use (seen on 10.11, 11.4 and 8.0). */
class ReadOnlyRefusalTest {

    @Test
    void theReadOnlyOptionsAndReadOnlyModeAreRefusals() {
        assertThat(ReadOnlyRefusal.is(err(1290, "The MariaDB server is running with the --read-only option so it "
                + "cannot execute this statement"))).isTrue();
        assertThat(ReadOnlyRefusal.is(err(1290, "The MySQL server is running with the --super-read-only option so "
                + "it cannot execute this statement"))).isTrue();
        assertThat(ReadOnlyRefusal.is(err(1836, "Running in read-only mode"))).isTrue();
    }

    @Test
    void otherOptionsAndOtherErrorsAreNot() {
        assertThat(ReadOnlyRefusal.is(err(1290, "The MariaDB server is running with the --secure-file-priv option "
                + "so it cannot execute this statement"))).isFalse();
        assertThat(ReadOnlyRefusal.is(err(1062, "Duplicate entry '1' for key 'PRIMARY'"))).isFalse();
        assertThat(ReadOnlyRefusal.is(err(1792, "Cannot execute statement in a READ ONLY transaction"))).isFalse();
    }

    private static ByteBuf err(int code, String message) {
        ByteBuf buffer = ByteBufAllocator.DEFAULT.heapBuffer();
        ErrPacket.of(code, "HY000", message).encode(buffer);
        return buffer;
    }
}
