package io.gantry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

class DelayingRelayTest {

    /** A server that echoes what it reads until its client half-closes, then closes. */
    private static ServerSocket echoServer() throws IOException {
        ServerSocket echo = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
        Thread thread = new Thread(() -> {
            try (Socket socket = echo.accept()) {
                socket.getInputStream().transferTo(socket.getOutputStream());
            } catch (IOException e) {
                // the test fails on what it does not get back
            }
        });
        thread.setDaemon(true);
        thread.start();
        return echo;
    }

    @Test
    void aRoundTripTakesTwiceTheDelayAndEveryByteArrivesInOrder() throws IOException {
        byte[] sent = new byte[1 << 20];
        new Random(5).nextBytes(sent);
        try (ServerSocket echo = echoServer();
             DelayingRelay relay = DelayingRelay.start("127.0.0.1", echo.getLocalPort(), Duration.ofMillis(10));
             Socket client = new Socket(relay.host(), relay.port())) {
            OutputStream out = client.getOutputStream();
            DataInputStream in = new DataInputStream(client.getInputStream());
            long started = System.nanoTime();
            out.write(1);
            assertThat(in.read()).isEqualTo(1);
            long roundTripMillis = (System.nanoTime() - started) / 1_000_000;
            assertThat(roundTripMillis).isBetween(20L, 200L);

            Thread writer = new Thread(() -> {
                try {
                    out.write(sent);
                    client.shutdownOutput();
                } catch (IOException e) {
                    // the read below fails
                }
            });
            writer.start();
            byte[] received = new byte[sent.length];
            in.readFully(received);
            assertThat(received).isEqualTo(sent);
            InputStream rest = client.getInputStream();
            assertThat(rest.read()).as("the half-close came through, and the server's close").isEqualTo(-1);
        }
    }
}
