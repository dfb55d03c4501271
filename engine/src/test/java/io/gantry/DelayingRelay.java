package io.gantry;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP relay for tests that puts a server farther away: it forwards bytes both ways and holds each chunk it reads
 * for a set time before it writes it on, so a round trip through it is twice that longer (this machine's kernel has
 * no {@code netem}). Each direction of each connection has a reader, which stamps every chunk with the time it is
 * due, and a writer, which sends it then: the delay adds to the round trip without slowing a stream down. A closed
 * side is passed on as a half-close after the chunks before it; a failed one closes both.
 *
 * <p>It can also lose a connection at a chosen moment ({@link #cutAt}): at a command holding a marker, the connection
 * is cut either before the command reaches the server or after the server ran it, its answer never passed on.
 */
public final class DelayingRelay implements AutoCloseable {

    private static final int CHUNK = 64 * 1024;
    /** Stands for the end of a direction's stream in its queue. */
    private static final byte[] END = new byte[0];

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    /** Where the next connection that sends the marker is cut: before the server gets it, or after it answered. */
    public enum Cut { BEFORE_THE_SERVER, AFTER_THE_SERVER_RAN_IT }

    private record Armed(byte[] marker, Cut cut) {
    }

    /** One relayed connection: whether the server's answers are dropped (and the connection cut) from now on. */
    private static final class Pair {
        volatile boolean cutAtNextAnswer;
    }

    private final AtomicReference<Armed> armed = new AtomicReference<>();

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

    /**
     * The next command that holds {@code marker} (its bytes, as sent) cuts its connection, once: {@code cut} says
     * whether the server gets the command first (it runs it; its answer is dropped, then both sides are closed).
     */
    public void cutAt(String marker, Cut cut) {
        armed.set(new Armed(marker.getBytes(StandardCharsets.UTF_8), cut));
    }

    /** Whether the armed cut happened. */
    public boolean cutDone() {
        return armed.get() == null;
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
                Pair pair = new Pair();
                relay(client, server, "to-server", pair);
                relay(server, client, "to-client", pair);
            } catch (IOException e) {
                return; // the listener closed
            }
        }
    }

    private void relay(Socket from, Socket to, String direction, Pair pair) {
        BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        String name = "delaying-relay-" + from.getPort() + "-" + direction;
        boolean toServer = direction.equals("to-server");
        thread(name + "-read", () -> read(from, to, queue, toServer, pair)).start();
        thread(name + "-write", () -> write(from, to, queue)).start();
    }

    private void read(Socket from, Socket to, BlockingQueue<Chunk> queue, boolean toServer, Pair pair) {
        byte[] buffer = new byte[CHUNK];
        try {
            InputStream in = from.getInputStream();
            int read;
            while ((read = in.read(buffer)) >= 0) {
                byte[] bytes = Arrays.copyOf(buffer, read);
                if (!toServer && pair.cutAtNextAnswer) {
                    closeQuietly(from, to); // the server ran the command; its answer goes nowhere
                    return;
                }
                Armed cut = toServer ? armed.get() : null;
                if (cut != null && contains(bytes, cut.marker()) && armed.compareAndSet(cut, null)) {
                    if (cut.cut() == Cut.BEFORE_THE_SERVER) {
                        closeQuietly(from, to);
                        return;
                    }
                    pair.cutAtNextAnswer = true;
                }
                queue.add(new Chunk(System.nanoTime() + delayNanos, bytes));
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

    private static boolean contains(byte[] bytes, byte[] marker) {
        outer:
        for (int i = 0; i + marker.length <= bytes.length; i++) {
            for (int j = 0; j < marker.length; j++) {
                if (bytes[i + j] != marker[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
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
