package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;

class PacketTest {

    @Test
    void frameCountIncludesTheEmptyTrailingFrameOfExactMultiples() {
        assertThat(Packet.frameCount(0)).isEqualTo(1);
        assertThat(Packet.frameCount(Packet.MAX_FRAME_PAYLOAD - 1)).isEqualTo(1);
        assertThat(Packet.frameCount(Packet.MAX_FRAME_PAYLOAD)).isEqualTo(2);
        assertThat(Packet.frameCount(2 * Packet.MAX_FRAME_PAYLOAD)).isEqualTo(3);
        assertThat(Packet.frameCount(2 * Packet.MAX_FRAME_PAYLOAD + 1)).isEqualTo(3);
    }

    @Test
    void referenceCountingDelegatesToThePayload() {
        Packet packet = new Packet(1, Unpooled.buffer(4).writeInt(7));
        assertThat(packet.retain()).isSameAs(packet);
        assertThat(packet.refCnt()).isEqualTo(2);
        Packet duplicate = packet.retainedDuplicate();
        assertThat(duplicate).isEqualTo(packet);
        assertThat(packet.refCnt()).isEqualTo(3);
        assertThat(ReferenceCountUtil.release(duplicate)).isFalse();
        assertThat(packet.release()).isFalse();
        assertThat(packet.release()).isTrue();
        assertThat(packet.toString()).contains("released");
    }

    @Test
    void sequenceIdMustBeOneByte() {
        assertThatThrownBy(() -> new Packet(256, Unpooled.EMPTY_BUFFER))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("256");
        assertThatThrownBy(() -> new Packet(-1, Unpooled.EMPTY_BUFFER))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(new Packet(255, Unpooled.EMPTY_BUFFER).nextSequenceId()).isZero();
    }
}
