package io.gantry.cli;

import io.netty.channel.epoll.Epoll;
import io.netty.channel.unix.Socket;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service manager that started this process, told what Gantry does by systemd's notification protocol
 * ({@code sd_notify}): one datagram of {@code KEY=value} lines to the Unix socket named by {@code NOTIFY_SOCKET}, which
 * systemd sets for a unit of {@code Type=notify}. Without that variable (a shell, a test, another supervisor) nothing
 * is sent. The protocol is stable and public, so Gantry speaks it itself rather than through libsystemd.
 *
 * <p>Java has no Unix datagram socket of its own; Netty's native transport, which Gantry loads for its sockets
 * anyway, has one. Where it cannot load, Gantry says once that systemd will not hear from it.
 */
final class ServiceManager {

    static final String NOTIFY_SOCKET_VARIABLE = "NOTIFY_SOCKET";
    private static final Logger LOG = LoggerFactory.getLogger(ServiceManager.class);

    /** The socket's address as {@code sun_path} bytes: a leading NUL for an abstract address ({@code @name}). */
    private final Optional<byte[]> socket;
    private final String socketName;

    private ServiceManager(Optional<byte[]> socket, String socketName) {
        this.socket = socket;
        this.socketName = socketName;
    }

    static ServiceManager of(Map<String, String> environment) {
        String name = environment.getOrDefault(NOTIFY_SOCKET_VARIABLE, "");
        if (name.isEmpty()) {
            return new ServiceManager(Optional.empty(), "");
        }
        byte[] address = name.getBytes(StandardCharsets.UTF_8);
        if (address[0] == '@') {
            address[0] = 0;
        }
        return new ServiceManager(Optional.of(address), name);
    }

    /** Whether a service manager listens (systemd started this process as a unit of {@code Type=notify}). */
    boolean present() {
        return socket.isPresent();
    }

    /**
     * Sends {@code assignments} ({@code READY=1}, {@code MAINPID=42}) in one message. A failure is logged, never
     * thrown: the proxy serves whatever the service manager heard.
     */
    void tell(String... assignments) {
        if (socket.isEmpty()) {
            return;
        }
        String message = String.join("\n", assignments);
        if (!Epoll.isAvailable()) {
            LOG.warn("systemd: cannot tell it '{}': Netty's native transport, whose Unix datagram socket this needs, "
                    + "did not load ({})", message.replace('\n', ' '), Epoll.unavailabilityCause().toString());
            return;
        }
        byte[] bytes = message.getBytes(StandardCharsets.UTF_8);
        ByteBuffer datagram = ByteBuffer.allocateDirect(bytes.length).put(bytes).flip();
        Socket sender = Socket.newSocketDomainDgram();
        try {
            sender.sendToDomainSocket(datagram, 0, bytes.length, socket.get());
            LOG.debug("systemd: told {}: {}", socketName, message.replace('\n', ' '));
        } catch (IOException e) {
            LOG.warn("systemd: cannot tell it '{}' through {}: {}", message.replace('\n', ' '), socketName,
                    e.getMessage());
        } finally {
            try {
                sender.close();
            } catch (IOException e) {
                LOG.debug("systemd: closing the notification socket: {}", e.toString());
            }
        }
    }
}
