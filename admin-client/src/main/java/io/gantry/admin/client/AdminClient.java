package io.gantry.admin.client;

import io.gantry.admin.protocol.AdminProtocol;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A connection to a Gantry's admin socket: says hello, sends requests and matches their answers by id, and hands
 * pushes to a consumer. Answers and pushes are read on one thread of its own ({@code gantry-admin-client}); the
 * consumer is called there, in the order the engine sent them.
 */
public final class AdminClient implements AutoCloseable {

    /** The socket's file name in the data directory. */
    public static final String SOCKET_FILE = "admin.sock";

    private final SocketChannel channel;
    private final BufferedReader reader;
    private final Consumer<Reply> pushes;
    private final Map<String, CompletableFuture<Reply>> pending = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final CompletableFuture<Reply.Welcome> welcome = new CompletableFuture<>();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final Object writeLock = new Object();
    private final Thread thread;

    private AdminClient(SocketChannel channel, Consumer<Reply> pushes) {
        this.channel = channel;
        this.reader = new BufferedReader(new InputStreamReader(Channels.newInputStream(channel),
                StandardCharsets.UTF_8));
        this.pushes = pushes;
        this.thread = new Thread(this::readLoop, "gantry-admin-client");
        this.thread.setDaemon(true);
    }

    /** The socket of the Gantry whose data directory this is. */
    public static Path socketIn(Path dataDir) {
        return dataDir.resolve(SOCKET_FILE);
    }

    /**
     * Connects and says hello.
     *
     * @param client what this client is, for the engine's log
     * @param pushes hears every push of the topics subscribed to later
     * @throws IOException when the socket cannot be reached, the engine does not answer the hello within
     *                     {@code timeout}, or speaks another protocol version
     */
    public static AdminClient connect(Path socket, String client, Duration timeout, Consumer<Reply> pushes)
            throws IOException {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            channel.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            channel.close();
            throw new IOException("cannot connect to the admin socket " + socket + ": " + e.getMessage(), e);
        }
        AdminClient connection = new AdminClient(channel, pushes);
        connection.thread.start();
        try {
            connection.write(AdminProtocol.encode(new Request.Hello(AdminProtocol.VERSION, client)));
            Reply.Welcome welcome = connection.welcome.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (welcome.protocol() != AdminProtocol.VERSION) {
                throw new IOException("the engine speaks admin protocol " + welcome.protocol() + ", this client "
                        + AdminProtocol.VERSION);
            }
            return connection;
        } catch (IOException | RuntimeException e) {
            connection.close();
            throw e;
        } catch (ExecutionException e) {
            connection.close();
            throw new IOException("the engine refused the hello: " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            connection.close();
            throw new IOException("the engine did not answer the hello within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            connection.close();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while connecting", e);
        }
    }

    /** The engine's hello: its version, proxy address and data directory. */
    public Reply.Welcome welcome() {
        return welcome.join();
    }

    /**
     * Sends a request and waits for its answer (an {@link Reply.Error} is an answer too).
     *
     * @param request makes the request from the id this client gives it
     * @throws IOException when the connection ends or the answer does not come within {@code timeout}
     */
    public Reply call(Function<String, Request> request, Duration timeout) throws IOException {
        String id = Long.toString(ids.incrementAndGet());
        CompletableFuture<Reply> answer = new CompletableFuture<>();
        pending.put(id, answer);
        try {
            write(AdminProtocol.encode(request.apply(id)));
            return answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("no answer from the engine within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the engine", e);
        } finally {
            pending.remove(id);
        }
    }

    /** Completes when the connection ends (the engine stopped, or dropped this client); with the reason. */
    public CompletableFuture<Void> closed() {
        return closed;
    }

    private void write(String line) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
        synchronized (writeLock) {
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
        }
    }

    private void readLoop() {
        IOException end = new IOException("the engine closed the admin connection");
        try {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                AdminProtocol.Decoded<Reply> decoded = AdminProtocol.decodeReply(line);
                if (decoded instanceof AdminProtocol.Decoded.Invalid<Reply> invalid) {
                    end = new IOException("the engine sent a line this client cannot read (" + invalid.message()
                            + ")");
                    break;
                }
                dispatch(((AdminProtocol.Decoded.Valid<Reply>) decoded).message());
            }
        } catch (IOException e) {
            end = new IOException("the admin connection broke: " + e.getMessage(), e);
        } finally {
            welcome.completeExceptionally(end);
            for (CompletableFuture<Reply> answer : pending.values()) {
                answer.completeExceptionally(end);
            }
            closed.completeExceptionally(end);
            try {
                channel.close();
            } catch (IOException ignored) {
                // closing after the end: nothing more to say
            }
        }
    }

    private void dispatch(Reply reply) {
        if (reply instanceof Reply.Welcome hello) {
            welcome.complete(hello);
        } else if (reply.isPush()) {
            pushes.accept(reply);
        } else if (reply.id() != null && pending.containsKey(reply.id())) {
            pending.get(reply.id()).complete(reply);
        } else if (reply instanceof Reply.Error error && !welcome.isDone()) {
            welcome.completeExceptionally(new IOException(error.error() + ": " + error.message()));
        }
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // already closed
        }
        if (Thread.currentThread() != thread) {
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
