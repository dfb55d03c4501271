package io.gantry.proxy.session;

import io.gantry.topology.LoggedTransactions;
import io.gantry.gtid.MariaDbGtidSet;
import io.gantry.topology.ServiceConnections;
import io.gantry.topology.UpstreamServer;
import io.netty.channel.EventLoop;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * Finds out, for a session whose {@code COMMIT} (or autocommit write) was on its way when the primary was lost,
 * whether it committed: from the new primary's binlog ({@link LoggedTransactions}), read on a few threads of its own
 * (a binlog read blocks), the answer handed back to the session's event loop. Counts the answers for
 * {@code SHOW GANTRY STATUS} and the metrics. One per proxy.
 */
public final class InDoubtCommits implements AutoCloseable {

    /** What a statement in doubt turned out to be. */
    public enum Found {
        /** It had committed: the client got its answer (a COMMIT's OK), or was told so (an autocommit write). */
        COMMITTED,
        /** It had not: the transaction was replayed and committed again, or the write ran again. */
        NOT_COMMITTED,
        /** It could not be told: the session ended with an error saying so. */
        UNKNOWN;

        /** Its row in {@code SHOW GANTRY STATUS}: {@code Commits_in_doubt_not_committed}. */
        public String statusRow() {
            return "Commits_in_doubt_" + name().toLowerCase(Locale.ROOT);
        }
    }

    private static final int ER_NO_SUCH_THREAD = 1094;
    private static final int PROBE_MILLIS = 1000;
    /** At most this many binlog reads at once: a loss of the primary puts every in-flight commit in doubt at once. */
    private static final int READERS = 4;

    private final Map<Found, LongAdder> counts = new EnumMap<>(Found.class);
    private final ThreadPoolExecutor readers;

    public InDoubtCommits() {
        for (Found found : Found.values()) {
            counts.put(found, new LongAdder());
        }
        AtomicInteger threads = new AtomicInteger();
        readers = new ThreadPoolExecutor(READERS, READERS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                task -> {
                    Thread thread = new Thread(task, "gantry-commit-finder-" + threads.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        readers.allowCoreThreadTimeOut(true);
    }

    /**
     * Looks on {@code primary} (the new one, or the same one when {@code lostThreadId} is not -1: only the connection
     * was lost, and the server may still be running the statement on that thread; it is ended first) whether the transaction of {@code own} statements committed after
     * {@code before} (the old primary's position before its commit was sent); {@code then} gets the outcome on
     * {@code loop}, within {@code timeout} plus the time to hand it over, or {@code failed} why the primary could not
     * be read.
     */
    public void find(UpstreamServer primary, long lostThreadId, MariaDbGtidSet before, List<OwnStatement> own,
                     Duration timeout,
              EventLoop loop, Consumer<CommitOutcome> then, Consumer<Exception> failed) {
        readers.execute(() -> {
            try {
                boolean sameServer = lostThreadId != -1;
                if (sameServer && !ended(primary, lostThreadId, timeout)) {
                    loop.execute(() -> then.accept(new CommitOutcome.Unknown("the session's old connection (thread "
                            + lostThreadId + ") could not be ended on " + primary.address())));
                    return;
                }
                CommitOutcome outcome = CommitOutcome.decide(own, LoggedTransactions.after(primary.url(), before,
                        timeout), sameServer);
                loop.execute(() -> then.accept(outcome));
            } catch (Exception e) {
                SessionContext.LOG.warn("reading what the primary {} logged after {} failed: {}", primary.address(), before,
                        e.toString());
                loop.execute(() -> failed.accept(e));
            }
        });
    }

    /**
     * Whether {@code server} still accepts TCP connections (a frozen process does: the kernel completes them), told
     * to {@code then} on {@code loop}; false when it refuses them (nothing listens there) or the check fails.
     */
    public void whenListening(UpstreamServer server, EventLoop loop, Consumer<Boolean> then) {
        readers.execute(() -> {
            boolean listening;
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(server.url().host(), server.url().port()), PROBE_MILLIS);
                listening = true;
            } catch (ConnectException refused) {
                listening = false;
            } catch (IOException e) {
                listening = true; // no answer either way (a timeout, no route): not known to be gone
            }
            boolean answer = listening;
            loop.execute(() -> then.accept(answer));
        });
    }

    /**
     * Ends {@code threadId} on {@code server} and waits until it is gone, so that what it committed, if anything, is
     * in the binlog before it is read: {@code KILL CONNECTION} until the server says it knows no such thread (1094).
     * False when the service account may not end it (1095), or it outlives {@code timeout}.
     */
    private static boolean ended(UpstreamServer server, long threadId, Duration timeout) throws SQLException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Connection connection = ServiceConnections.open(server.url(), timeout, timeout);
             Statement statement = connection.createStatement()) {
            while (System.nanoTime() - deadline < 0) {
                try {
                    statement.execute("KILL CONNECTION " + threadId);
                } catch (SQLException e) {
                    if (e.getErrorCode() == ER_NO_SUCH_THREAD) {
                        return true;
                    }
                    SessionContext.LOG.warn("ending thread {} on {} to find out what it committed failed: {}", threadId,
                            server.address(), e.getMessage());
                    return false;
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return false;
    }

    /**
     * Whether a read failed because the server could not be reached (it may be the old primary, not marked down yet,
     * or a new one going too), not for a reason that stays (privileges, a binlog the server cannot serve).
     */
    public static boolean unreachable(Exception failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("08")
                    || cause instanceof SocketException || cause instanceof EOFException
                    || cause instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /** A statement in doubt turned out so. */
    public void counted(Found found) {
        counts.get(found).increment();
    }

    /** How many statements in doubt turned out so, since the start. */
    public long count(Found found) {
        return counts.get(found).sum();
    }

    /** The rows of {@code SHOW GANTRY STATUS}. */
    public Map<String, String> status() {
        Map<String, String> rows = new LinkedHashMap<>();
        counts.forEach((found, count) -> rows.put(found.statusRow(), Long.toString(count.sum())));
        return rows;
    }

    @Override
    public void close() {
        readers.shutdownNow();
    }
}
