package io.gantry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

class ListenAddressesTest {

    @Test
    void aTakenAddressIsRefusedNamingTheFlagTheAddressAndHowToFindWhoHasIt() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            assertThatThrownBy(() -> ListenAddresses.requireFree("--listen", new InetSocketAddress("127.0.0.1", port)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("--listen 127.0.0.1:" + port + ": cannot listen there: another process listens on "
                            + "that address already (ss -ltnp 'sport = :" + port + "' names it)");
        }
    }

    @Test
    void aFreeAddressIsLeftFreeAndPortZeroIsNeverChecked() throws IOException {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", port);
        ListenAddresses.requireFree("--listen", address);
        try (ServerSocket again = new ServerSocket()) {
            again.bind(address);
            assertThat(again.isBound()).isTrue();
        }
        assertThatCode(() -> ListenAddresses.requireFree("--listen", new InetSocketAddress("127.0.0.1", 0)))
                .doesNotThrowAnyException();
    }

    @Test
    void aFailedBindAfterTheCheckIsSaidAsTheTakenAddressAndOtherFailuresStand() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", taken.getLocalPort());
            IOException nettys = new IOException("bind(..) failed with error(-98): Address already in use");
            assertThatThrownBy(() -> ListenAddresses.requireFreeAfter(nettys, "--listen", address))
                    .hasMessageStartingWith("--listen 127.0.0.1:" + address.getPort() + ": cannot listen there: "
                            + "another process listens on that address already")
                    .satisfies(e -> assertThat(e.getSuppressed()).containsExactly(nettys));
            assertThatCode(() -> ListenAddresses.requireFreeAfter(new IllegalStateException("no upstream server "
                    + "answers"), "--listen", address)).doesNotThrowAnyException();
        }
    }
}
