package io.gantry.proxy.transport;

import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.unix.Socket;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * A listening socket received from the Gantry this one takes over from, already bound and listening: connections
 * wait in its queue whichever process accepts them, so none is refused while the two change places.
 *
 * <p>Only Netty's epoll transport makes a channel of a descriptor ({@code EpollServerSocketChannel(int)}); its
 * io_uring channels have no such constructor in 4.2. So a Gantry that adopts a listener runs its proxy on epoll
 * ({@code --socket-transport epoll}): the accepted sockets are children of this channel and share its event loops.
 */
public final class AdoptedListener {

    private final FileDescriptor descriptor;
    private final InetSocketAddress address;
    private boolean adopted;
    /** The highest session id the Gantry taken over may give; this one's are above it. */
    private volatile long sessionIdsAfter;

    private AdoptedListener(FileDescriptor descriptor, InetSocketAddress address) {
        this.descriptor = descriptor;
        this.address = address;
    }

    /** The listener behind {@code descriptor}, received over a Unix socket ({@code SCM_RIGHTS}). */
    public static AdoptedListener of(FileDescriptor descriptor) {
        return new AdoptedListener(descriptor, new Socket(descriptor.intValue()).localAddress());
    }

    /** The Gantry taken over gives session ids up to {@code id}: the proxy accepting here gives ids above it. */
    public void sessionIdsAfter(long id) {
        sessionIdsAfter = id;
    }

    public long sessionIdsAfter() {
        return sessionIdsAfter;
    }

    /** Where it listens. */
    public InetSocketAddress address() {
        return address;
    }

    /** Whether it listens where {@code listen} ({@code --listen}) says: the same port, and the same address or any. */
    public boolean serves(InetSocketAddress listen) {
        if (address == null || listen.getPort() != address.getPort() || listen.getAddress() == null) {
            return false;
        }
        return listen.getAddress().isAnyLocalAddress() ? address.getAddress().isAnyLocalAddress()
                : listen.getAddress().equals(address.getAddress());
    }

    /** The channel the proxy accepts on, made once; from then on the channel owns the descriptor. */
    public synchronized ServerSocketChannel channel() {
        if (adopted) {
            throw new IllegalStateException("the listener of " + address + " is adopted already");
        }
        adopted = true;
        return new EpollServerSocketChannel(descriptor.intValue());
    }

    /** Closes the descriptor unless a channel was made of it (which then closes it). */
    public synchronized void closeUnadopted() {
        if (adopted) {
            return;
        }
        adopted = true;
        try {
            descriptor.close();
        } catch (IOException e) {
            // closed already: nothing holds it
        }
    }
}
