package io.gantry;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP relay for tests that puts a server farther away: it forwards bytes both ways and holds each chunk it reads
 * for a set time before it writes it on, so a round trip through it is twice that longer (this machine's kernel has
 * no {@code netem}). Each direction of each connection has a reader, which stamps every chunk with the time it is
 * due, and a writer, which sends it then: the delay adds to the round trip without slowing a stream down. A closed
 * side is passed on as a half-close after the chunks before it; a failed one closes both.
 */
public final class DelayingRelay implements AutoCloseable {

    private static final int CHUNK = 64 * 1024;
    /** Stands for the end of a direction's stream in its queue. */
    private static final byte[] END = new byte[0];

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final long delayNanos;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    private DelayingRelay(ServerSocket listener, InetSocketAddress target, Duration delayEachWay) {
        this.listener = listener;
        this.target = target;
        this.delayNanos = delayEachWay.toNanos();
    }

    /**
     * Listens on a free loopback port and relays every connection to {@code host:port}, each way {@code delayEachWay}
     * later.
     */
    public static DelayingRelay start(String host, int port, Duration delayEachWay) throws IOException {
        ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        DelayingRelay relay = new DelayingRelay(listener, new InetSocketAddress(host, port), delayEachWay);
        thread("delaying-relay-accept-" + listener.getLocalPort(), relay::accept).start();
        return relay;
    }

    /** The host clients connect to. */
    public String host() {
        return listener.getInetAddress().getHostAddress();
    }

    /** The port clients connect to. */
    public int port() {
        return listener.getLocalPort();
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                sockets.add(client);
                sockets.add(server);
                try {
                    server.connect(target, 5_000);
                } catch (IOException e) {
                    closeQuietly(client, server);
                    continue;
                }
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                relay(client, server, "to-server");
                relay(server, client, "to-client");
            } catch (IOException e) {
                return; // the listener closed
            }
        }
    }

    private void relay(Socket from, Socket to, String direction) {
        BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        String name = "delaying-relay-" + from.getPort() + "-" + direction;
        thread(name + "-read", () -> read(from, to, queue)).start();
        thread(name + "-write", () -> write(from, to, queue)).start();
    }

    private void read(Socket from, Socket to, BlockingQueue<Chunk> queue) {
        byte[] buffer = new byte[CHUNK];
        try {
            InputStream in = from.getInputStream();
            int read;
            while ((read = in.read(buffer)) >= 0) {
                queue.add(new Chunk(System.nanoTime() + delayNanos, Arrays.copyOf(buffer, read)));
            }
            queue.add(new Chunk(System.nanoTime() + delayNanos, END));
        } catch (IOException e) {
            closeQuietly(from, to);
            queue.add(new Chunk(0, END)); // wakes the writer, which then finds the socket closed
        }
    }

    private void write(Socket from, Socket to, BlockingQueue<Chunk> queue) {
        try {
            OutputStream out = to.getOutputStream();
            while (true) {
                Chunk chunk = queue.take();
                long wait;
                while ((wait = chunk.dueNanos() - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                }
                if (chunk.bytes() == END) {
                    to.shutdownOutput();
                    return;
                }
                out.write(chunk.bytes());
                out.flush();
            }
        } catch (IOException e) {
            closeQuietly(from, to);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Thread thread(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        return thread;
    }

    private static void closeQuietly(Socket... toClose) {
        for (Socket socket : toClose) {
            try {
                socket.close();
            } catch (IOException e) {
                // closing is all that is left to do with it
            }
        }
    }

    /** Stops listening and closes every relayed connection; their threads end with them. */
    @Override
    public void close() throws IOException {
        listener.close();
        closeQuietly(sockets.toArray(Socket[]::new));
        sockets.clear();
    }
}
