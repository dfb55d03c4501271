package io.gantry.wire;

import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** A template's copy is byte for byte what the greeting with that connection id and seed encodes to. */
class GreetingTemplateTest {

    private static final int SECURE = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION;

    /** MariaDB's (extended capabilities, plugin auth), MySQL's, one without plugin auth, a version beyond ASCII. */
    private static final List<HandshakeV10> SHAPES = List.of(
            new HandshakeV10("5.5.5-11.4.5-MariaDB-log", 0, new byte[20], SECURE | CLIENT_PLUGIN_AUTH, 45, 2,
                    CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA, "mysql_native_password"),
            new HandshakeV10("8.4.3", 0, new byte[20], SECURE | CLIENT_PLUGIN_AUTH | CLIENT_MYSQL, 255, 2, 0,
                    "caching_sha2_password"),
            new HandshakeV10("10.11.6-MariaDB-0+deb12u1", 0, new byte[20], SECURE, 8, 2, 0, ""),
            new HandshakeV10("5.5.5-11.4.5-MariaDB-Ünïcödé", 0, new byte[20], SECURE | CLIENT_PLUGIN_AUTH, 45, 2, 0,
                    "mysql_native_password"));

    @Test
    void eachCopyIsTheGreetingWithItsIdAndSeed() {
        Random random = new Random(47);
        for (HandshakeV10 shape : SHAPES) {
            GreetingTemplate template = new GreetingTemplate(shape);
            for (int i = 0; i < 200; i++) {
                long id = random.nextInt() & 0xFFFF_FFFFL;
                byte[] seed = new byte[20];
                random.nextBytes(seed);
                ByteBuf copy = Unpooled.buffer();
                ByteBuf expected = Unpooled.buffer();
                try {
                    copy.writeByte(0x7E); // a copy goes after whatever the buffer holds already
                    template.writeTo(copy, id, seed);
                    new HandshakeV10(shape.serverVersion(), id, seed, shape.capabilities(), shape.characterSet(),
                            shape.statusFlags(), shape.mariaDbCapabilities(), shape.authPluginName()).encode(expected);
                    assertThat(ByteBufUtil.hexDump(copy.skipBytes(1))).as(shape.serverVersion())
                            .isEqualTo(ByteBufUtil.hexDump(expected));
                    assertThat(template.size()).isEqualTo(expected.readableBytes());
                } finally {
                    copy.release();
                    expected.release();
                }
            }
        }
    }

    @Test
    void aSeedOfAnotherLengthOrAnIdBeyond32BitsIsRefused() {
        GreetingTemplate template = new GreetingTemplate(SHAPES.get(0));
        ByteBuf out = Unpooled.buffer();
        try {
            assertThatThrownBy(() -> template.writeTo(out, 1, new byte[8]))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("20 bytes, was 8");
            assertThatThrownBy(() -> template.writeTo(out, 1L << 32, new byte[20]))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("32 unsigned bits");
            assertThat(out.readableBytes()).as("nothing written by a refused copy").isZero();
        } finally {
            out.release();
        }
    }
}
