package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CapabilityFlagsTest {

    @Test
    void bitsMatchTheProtocol() {
        assertThat(CapabilityFlags.CLIENT_CONNECT_WITH_DB).isEqualTo(0x8);
        assertThat(CapabilityFlags.CLIENT_LOCAL_FILES).isEqualTo(0x80);
        assertThat(CapabilityFlags.CLIENT_PROTOCOL_41).isEqualTo(0x200);
        assertThat(CapabilityFlags.CLIENT_SSL).isEqualTo(0x800);
        assertThat(CapabilityFlags.CLIENT_TRANSACTIONS).isEqualTo(0x2000);
        assertThat(CapabilityFlags.CLIENT_SECURE_CONNECTION).isEqualTo(0x8000);
        assertThat(CapabilityFlags.CLIENT_MULTI_STATEMENTS).isEqualTo(0x10000);
        assertThat(CapabilityFlags.CLIENT_MULTI_RESULTS).isEqualTo(0x20000);
        assertThat(CapabilityFlags.CLIENT_PS_MULTI_RESULTS).isEqualTo(0x40000);
        assertThat(CapabilityFlags.CLIENT_PLUGIN_AUTH).isEqualTo(0x80000);
        assertThat(CapabilityFlags.CLIENT_CONNECT_ATTRS).isEqualTo(0x100000);
        assertThat(CapabilityFlags.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA).isEqualTo(0x200000);
        assertThat(CapabilityFlags.CLIENT_SESSION_TRACK).isEqualTo(0x800000);
        assertThat(CapabilityFlags.CLIENT_DEPRECATE_EOF).isEqualTo(0x1000000);
        assertThat(CapabilityFlags.CLIENT_QUERY_ATTRIBUTES).isEqualTo(0x8000000);
        assertThat(CapabilityFlags.CLIENT_REMEMBER_OPTIONS).isEqualTo(0x80000000);
    }

    @Test
    void helpersTestNegotiateAndDescribe() {
        int caps = CapabilityFlags.CLIENT_PROTOCOL_41 | CapabilityFlags.CLIENT_SSL;
        assertThat(CapabilityFlags.has(caps, CapabilityFlags.CLIENT_SSL)).isTrue();
        assertThat(CapabilityFlags.has(caps, CapabilityFlags.CLIENT_SSL | CapabilityFlags.CLIENT_COMPRESS)).isFalse();
        assertThat(CapabilityFlags.negotiate(caps, CapabilityFlags.CLIENT_SSL)).isEqualTo(CapabilityFlags.CLIENT_SSL);
        assertThat(CapabilityFlags.describe(caps)).isEqualTo("CLIENT_PROTOCOL_41|CLIENT_SSL");
        assertThat(CapabilityFlags.describe(0)).isEqualTo("0");
        assertThat(CapabilityFlags.describe(CapabilityFlags.CLIENT_REMEMBER_OPTIONS)).isEqualTo("CLIENT_REMEMBER_OPTIONS");
    }
}
