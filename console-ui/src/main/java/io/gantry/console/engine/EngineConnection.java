package io.gantry.console.engine;

import io.gantry.admin.client.AdminClient;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.admin.protocol.Topic;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The console's one way to the engine: a connection to its admin socket that subscribes to every server change and
 * timeline entry, runs requests off the caller's thread, and connects again by itself when the engine goes away
 * (a restart, a crash), with a backoff that starts at 200 ms and is capped at 2 s.
 *
 * <p>Listeners hear, in this order for each connection: {@link Listener#connected} (before the subscription, so a
 * listener may start afresh), then every push as the engine sent it; {@link Listener#disconnected} when it ends or
 * an attempt fails. They are called on this class's threads, never the UI's: a listener that updates the UI hands
 * the update to the UI executor. Nothing here knows JavaFX.
 */
public final class EngineConnection implements AdminCalls, AutoCloseable {

    /** What a connection's life sounds like. */
    public interface Listener {
        /** Connected and welcomed; the subscription's pushes follow. */
        default void connected(Reply.Welcome welcome) {
        }

        /** A push of the subscription (a server's state, a server removed, a timeline entry). */
        default void push(Reply push) {
        }

        /**
         * Not connected: the connection ended or an attempt failed.
         *
         * @param reason  why, in words
         * @param retryIn when the next attempt starts
         * @param attempt attempts since the last connection (1 for the first failure)
         */
        default void disconnected(String reason, Duration retryIn, int attempt) {
        }
    }

    static final Duration FIRST_RETRY = Duration.ofMillis(200);
    static final Duration MAX_RETRY = Duration.ofSeconds(2);
    private static final Duration HELLO_TIMEOUT = Duration.ofSeconds(5);
    /** Admin queries run up to 30 s in the engine; a little more here. */
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(35);

    private final Path socket;
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService connector;
    private final ExecutorService calls;
    private final AtomicInteger failures = new AtomicInteger();
    private volatile AdminClient client;
    private volatile boolean closed;

    public EngineConnection(Path socket) {
        this.socket = Objects.requireNonNull(socket, "socket");
        this.connector = Executors.newSingleThreadScheduledExecutor(daemon("gantry-console-connect"));
        AtomicInteger n = new AtomicInteger();
        this.calls = Executors.newFixedThreadPool(4, r -> daemon("gantry-console-engine-" + n.incrementAndGet())
                .newThread(r));
    }

    /** The socket this connects to. */
    public Path socket() {
        return socket;
    }

    public void addListener(Listener listener) {
        listeners.add(listener);
    }

    /** Starts connecting; returns at once. */
    public void start() {
        connector.execute(this::attempt);
    }

    /** Whether a connection is open now. */
    public boolean isConnected() {
        return client != null;
    }

    @Override
    public CompletableFuture<Reply> call(Function<String, Request> request) {
        return CompletableFuture.supplyAsync(() -> {
            AdminClient current = client;
            if (current == null) {
                throw new CompletionException(new IOException("not connected to the engine (" + socket + ")"));
            }
            try {
                return current.call(request, CALL_TIMEOUT);
            } catch (IOException e) {
                throw new CompletionException(e);
            }
        }, calls);
    }

    private void attempt() {
        if (closed) {
            return;
        }
        AdminClient opened;
        try {
            opened = AdminClient.connect(socket, "gantry console", HELLO_TIMEOUT, this::dispatch);
        } catch (IOException e) {
            retry(e.getMessage());
            return;
        }
        failures.set(0);
        client = opened;
        Reply.Welcome welcome = opened.welcome();
        for (Listener listener : listeners) {
            listener.connected(welcome);
        }
        opened.closed().whenComplete((ignored, failure) -> {
            client = null;
            if (!closed) {
                String reason = failure == null ? "the engine closed the admin connection"
                        : (failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure).getMessage();
                try {
                    connector.execute(() -> retry(reason));
                } catch (RejectedExecutionException closing) {
                    // closed meanwhile: no more attempts
                }
            }
        });
        try {
            Reply answer = opened.call(id -> new Request.Subscribe(id, EnumSet.allOf(Topic.class)), CALL_TIMEOUT);
            if (answer instanceof Reply.Error error) {
                System.err.println("gantry console: the engine refused the subscription: " + error.message());
                opened.close();
            }
        } catch (IOException e) {
            // The connection ended while subscribing: its closed() hook retries.
            opened.close();
        }
    }

    private void dispatch(Reply push) {
        for (Listener listener : listeners) {
            listener.push(push);
        }
    }

    private void retry(String reason) {
        if (closed) {
            return;
        }
        int attempt = failures.incrementAndGet();
        long base = backoff(attempt).toMillis();
        // Jitter, so consoles of one engine do not all knock at once when it comes back.
        long delay = base - ThreadLocalRandom.current().nextLong(base / 5 + 1);
        for (Listener listener : listeners) {
            listener.disconnected(reason, Duration.ofMillis(delay), attempt);
        }
        try {
            connector.schedule(this::attempt, delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            // closed meanwhile: no more attempts
        }
    }

    /** The wait before the attempt after {@code failures} failed ones, before jitter: 200 ms, doubling, at most 2 s. */
    static Duration backoff(int failures) {
        return Duration.ofMillis(Math.min(MAX_RETRY.toMillis(),
                FIRST_RETRY.toMillis() << Math.min(Math.max(failures, 1) - 1, 10)));
    }

    @Override
    public void close() {
        closed = true;
        connector.shutdownNow();
        calls.shutdownNow();
        AdminClient current = client;
        if (current != null) {
            current.close();
        }
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread thread = new Thread(r, name);
            thread.setDaemon(true);
            return thread;
        };
    }
}
