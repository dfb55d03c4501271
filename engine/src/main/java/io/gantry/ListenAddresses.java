package io.gantry;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * The addresses Gantry listens on ({@code --listen}, {@code --metrics-listen}), checked before anything starts. A
 * taken address would otherwise be found only when the proxy binds, once the Authority is open and every server has
 * been checked (seconds, tens of seconds with an unreachable server), and Netty's native transports say it as
 * {@code bind(..) failed with error(-98): Address already in use}, without the address.
 */
final class ListenAddresses {

    private ListenAddresses() {
    }

    /**
     * Binds the address for a moment and lets it go. Port 0 (any free port) is always free.
     *
     * @throws IllegalStateException naming the flag and the address when nothing can listen there now
     */
    static void requireFree(String flag, InetSocketAddress address) {
        if (address.getPort() == 0) {
            return;
        }
        try (ServerSocket probe = new ServerSocket()) {
            probe.bind(address);
        } catch (IOException e) {
            throw cannotListen(flag, address, e);
        }
    }

    /**
     * After a start failed with {@code failure}: when it is an I/O error (the exception of a failed bind, which
     * Netty's transports word in their own ways) and the address is taken now, another process took it since
     * {@link #requireFree}, and that is what is thrown; otherwise nothing is, and {@code failure} stands.
     */
    static void requireFreeAfter(Exception failure, String flag, InetSocketAddress address) {
        if (failure instanceof IOException) {
            try {
                requireFree(flag, address);
            } catch (IllegalStateException taken) {
                taken.addSuppressed(failure);
                throw taken;
            }
        }
    }

    private static IllegalStateException cannotListen(String flag, InetSocketAddress address, IOException e) {
        String where = address.getHostString() + ":" + address.getPort();
        String why = e instanceof BindException && String.valueOf(e.getMessage()).contains("already in use")
                ? "another process listens on that address already (ss -ltnp 'sport = :" + address.getPort()
                        + "' names it)"
                : e.getMessage();
        return new IllegalStateException(flag + " " + where + ": cannot listen there: " + why, e);
    }
}
