package io.gantry.proxy.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.transport.SocketTransport;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class SocketTransportTest {

    @Test
    void autoPicksTheFastestAvailableTransport() {
        SocketTransport best = SocketTransport.parse("auto");
        assertThat(best).isEqualTo(SocketTransport.best());
        assertThat(best.isAvailable()).isTrue();
        for (SocketTransport faster : SocketTransport.values()) {
            if (faster.ordinal() < best.ordinal()) {
                assertThat(faster.isAvailable()).as(faster + " is faster than " + best).isFalse();
            }
        }
        assertThat(ProxyConfig.defaults(new InetSocketAddress(0)).socketTransport()).isEqualTo(best);
    }

    @Test
    void namesAreCaseInsensitiveAndNioIsAlwaysThere() {
        assertThat(SocketTransport.parse("NIO")).isEqualTo(SocketTransport.NIO);
        assertThat(SocketTransport.parse(" nio ")).isEqualTo(SocketTransport.NIO);
        for (SocketTransport transport : SocketTransport.values()) {
            if (transport.isAvailable()) {
                assertThat(SocketTransport.parse(transport.flagValue())).isEqualTo(transport);
            }
        }
    }

    @Test
    void anUnknownNameIsRefusedWithTheAcceptedOnes() {
        assertThatThrownBy(() -> SocketTransport.parse("kqueue"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--socket-transport must be auto, io_uring, epoll, nio, not 'kqueue'");
    }
}
