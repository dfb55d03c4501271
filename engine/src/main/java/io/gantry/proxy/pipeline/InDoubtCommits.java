package io.gantry.proxy.pipeline;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.cdc.LoggedTransactions;
import io.gantry.gtid.MariaDbGtidSet;
import io.gantry.topology.UpstreamServer;
import io.netty.channel.EventLoop;
import java.io.EOFException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.sql.SQLException;
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
     * Looks on {@code primary} (the new one, or the same one when {@code sameServer}: only the connection was lost)
     * whether the transaction of {@code own} statements committed after
     * {@code before} (the old primary's position before its commit was sent); {@code then} gets the outcome on
     * {@code loop}, within {@code timeout} plus the time to hand it over, or {@code failed} why the primary could not
     * be read.
     */
    void find(UpstreamServer primary, boolean sameServer, MariaDbGtidSet before, List<String> own, Duration timeout,
              EventLoop loop, Consumer<CommitOutcome> then, Consumer<Exception> failed) {
        readers.execute(() -> {
            try {
                CommitOutcome outcome = CommitOutcome.decide(own, LoggedTransactions.after(primary.url(), before,
                        timeout), sameServer);
                loop.execute(() -> then.accept(outcome));
            } catch (Exception e) {
                LOG.warn("reading what the primary {} logged after {} failed: {}", primary.address(), before,
                        e.toString());
                loop.execute(() -> failed.accept(e));
            }
        });
    }

    /**
     * Whether a read failed because the server could not be reached (it may be the old primary, not marked down yet,
     * or a new one going too), not for a reason that stays (privileges, a binlog the server cannot serve).
     */
    static boolean unreachable(Exception failure) {
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
    void counted(Found found) {
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
