package io.gantry.consistency;

import io.gantry.consistency.Operation.Kind;
import io.gantry.consistency.Operation.Outcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Client sessions that write versioned rows of {@code kv(k INT PRIMARY KEY, v BIGINT)} and read them back, each on
 * its own thread and connection, recording every operation in a {@link History}.
 *
 * <p>Every write carries a new version from one global counter and stores {@code GREATEST(v, version)}, so a key's
 * version only rises in commit order (what {@link HistoryChecker} relies on); some writes insert new keys. Reads run
 * {@code SELECT (SELECT v FROM kv WHERE k = ?), @@server_id}, one row whether the key exists or not, and note the
 * server that answered ({@code @@server_id} is a plain session variable to Gantry's classifier, so the read still
 * goes where any read would). After a write, the next operation is often a read of the same key (read-your-writes).
 * A session whose connection breaks reconnects as a new session: a proxy owes no guarantee across a reconnect.
 */
public final class Workload {

    /** Opens one client connection (through the proxy). */
    @FunctionalInterface
    public interface Opener {
        Connection open() throws SQLException;
    }

    /**
     * One client session.
     *
     * @param name            for the history (a reconnect adds {@code #2}, {@code #3}, ...)
     * @param opener          how it connects
     * @param stalenessMillis its {@code gantry_follower_read_staleness_ms}, 0 for none
     * @param readYourWrites  false to run {@code SET gantry_read_your_writes = OFF}
     */
    public record SessionSpec(String name, Opener opener, long stalenessMillis, boolean readYourWrites) {
    }

    /**
     * The mix.
     *
     * @param writeShare         share of operations that write (when not reading back a write)
     * @param readBackShare      chance that the operation after a write reads the key just written
     * @param newKeyShare        share of writes that insert a new key
     * @param maxStaleBoundMillis the proxy's {@code --max-stale-read-bound-ms} (0 for off): every read's bound is at
     *                           most this
     * @param thinkMillis        each session pauses a random 0 to this many milliseconds between operations, as
     *                           an application does between requests (0: back to back)
     * @param seed               for the choices
     * @param transactionShare   share of writes that run as a transaction of two writes with a read of the first
     *                           in between ({@code BEGIN; write; read; write; COMMIT}): both writes are acknowledged
     *                           at the COMMIT, and the read must see the first
     */
    public record Mix(double writeShare, double readBackShare, double newKeyShare, long maxStaleBoundMillis,
                      int thinkMillis, long seed, double transactionShare) {

        public Mix(double writeShare, double readBackShare, double newKeyShare, long maxStaleBoundMillis,
                   int thinkMillis, long seed) {
            this(writeShare, readBackShare, newKeyShare, maxStaleBoundMillis, thinkMillis, seed, 0);
        }
    }

    static final String CREATE_TABLE = "CREATE TABLE IF NOT EXISTS kv (k INT PRIMARY KEY, v BIGINT NOT NULL)";
    private static final String WRITE = "INSERT INTO kv (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = GREATEST(v, VALUES(v))";
    private static final String READ = "SELECT (SELECT v FROM kv WHERE k = ?), @@server_id";

    private final History history;
    private final Mix mix;
    private final List<Client> clients = new ArrayList<>();
    private final AtomicLong versions = new AtomicLong();
    /** Keys below this may exist. */
    private final AtomicInteger nextKey = new AtomicInteger(1);
    private final AtomicInteger reconnects = new AtomicInteger();
    /** Reads inside a transaction that did not see the transaction's own write. */
    private final List<String> disagreements = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile boolean stopping;

    public Workload(History history, Mix mix, List<SessionSpec> sessions) {
        this.history = history;
        this.mix = mix;
        for (int i = 0; i < sessions.size(); i++) {
            clients.add(new Client(sessions.get(i), new SplittableRandom(mix.seed() * 31 + i)));
        }
    }

    /** Connects every session, applies its settings and runs one read on it (so connect-time reads are settled). */
    public void connect() throws SQLException {
        for (Client client : clients) {
            client.connect();
        }
    }

    /** Runs every session for {@code duration} (or until {@link #stop}); returns the operations recorded. */
    public int runFor(Duration duration) throws InterruptedException {
        stopping = false;
        long deadline = System.nanoTime() + duration.toNanos();
        List<Thread> threads = new ArrayList<>();
        for (Client client : clients) {
            Thread thread = new Thread(() -> client.run(deadline), "history-" + client.spec.name());
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join(duration.plusSeconds(60).toMillis());
        }
        for (Thread thread : threads) {
            if (thread.isAlive()) {
                throw new IllegalStateException(thread.getName() + " did not finish");
            }
        }
        return history.operations().size();
    }

    public void stop() {
        stopping = true;
    }

    public int reconnects() {
        return reconnects.get();
    }

    /** Reads inside a transaction that did not see the transaction's own earlier write. */
    public List<String> disagreements() {
        return disagreements;
    }

    /** Closes every connection. */
    public void close() {
        clients.forEach(Client::closeQuietly);
    }

    /** One session's thread, connection and choices. */
    private final class Client {
        final SessionSpec spec;
        final SplittableRandom random;
        int epoch;
        String session;
        Connection connection;
        PreparedStatement write;
        PreparedStatement read;
        final List<Integer> ownKeys = new ArrayList<>();

        Client(SessionSpec spec, SplittableRandom random) {
            this.spec = spec;
            this.random = random;
        }

        void connect() throws SQLException {
            epoch++;
            session = epoch == 1 ? spec.name() : spec.name() + "#" + epoch;
            connection = spec.opener().open();
            try (Statement statement = connection.createStatement()) {
                if (spec.stalenessMillis() > 0) {
                    statement.execute("SET gantry_follower_read_staleness_ms = " + spec.stalenessMillis());
                }
                if (!spec.readYourWrites()) {
                    statement.execute("SET gantry_read_your_writes = OFF");
                }
                try (ResultSet rows = statement.executeQuery("SELECT 1")) {
                    rows.next();
                }
            }
            write = connection.prepareStatement(WRITE);
            read = connection.prepareStatement(READ);
        }

        void run(long deadline) {
            Integer readBack = null;
            while (!stopping && System.nanoTime() < deadline) {
                if (connection == null) {
                    reconnect(deadline);
                    continue;
                }
                think();
                if (readBack != null && random.nextDouble() < mix.readBackShare()) {
                    read(readBack);
                    readBack = null;
                } else if (random.nextDouble() < mix.writeShare()) {
                    int key = pickWriteKey();
                    if (random.nextDouble() < mix.transactionShare()) {
                        int second = pickWriteKey();
                        readBack = second != key && transaction(key, second) ? key : null;
                    } else {
                        readBack = write(key) ? key : null;
                    }
                } else {
                    readBack = null;
                    read(pickReadKey());
                }
            }
        }

        void think() {
            if (mix.thinkMillis() <= 0) {
                return;
            }
            long micros = random.nextLong(mix.thinkMillis() * 1000L + 1);
            java.util.concurrent.locks.LockSupport.parkNanos(micros * 1000);
        }

        int pickWriteKey() {
            if (nextKey.get() == 1 || random.nextDouble() < mix.newKeyShare()) {
                int key = nextKey.getAndIncrement();
                ownKeys.add(key);
                return key;
            }
            if (!ownKeys.isEmpty() && random.nextBoolean()) {
                return ownKeys.get(random.nextInt(Math.max(0, ownKeys.size() - 8), ownKeys.size()));
            }
            return 1 + random.nextInt(nextKey.get() - 1);
        }

        int pickReadKey() {
            if (!ownKeys.isEmpty() && random.nextBoolean()) {
                return ownKeys.get(random.nextInt(ownKeys.size()));
            }
            return 1 + random.nextInt(Math.max(1, nextKey.get() - 1));
        }

        long bound() {
            long staleness = spec.stalenessMillis();
            long max = mix.maxStaleBoundMillis();
            if (staleness <= 0) {
                return max;
            }
            return max <= 0 ? staleness : Math.min(staleness, max);
        }

        /** Returns whether the write committed. */
        boolean write(int key) {
            long version = versions.incrementAndGet();
            long wall = System.currentTimeMillis();
            long invoked = System.nanoTime();
            try {
                write.setInt(1, key);
                write.setLong(2, version);
                write.executeUpdate();
                long completed = System.nanoTime();
                history.record(new Operation(session, Kind.WRITE, key, version, invoked, completed, wall, Outcome.OK,
                        null, 0, 0, null));
                return true;
            } catch (SQLException e) {
                long completed = System.nanoTime();
                // A refusal on a connection that still works did not commit; after a broken one nobody knows.
                boolean broken = afterError() || brokenConnection(e);
                history.record(new Operation(session, Kind.WRITE, key, version, invoked, completed, wall,
                        broken ? Outcome.UNKNOWN : Outcome.FAILED, null, 0, e.getErrorCode(), e.getMessage()));
                return false;
            }
        }

        /**
         * {@code BEGIN; write first; read first; write second; COMMIT}: both writes go into the history as written
         * from the BEGIN to the COMMIT's answer; returns whether they committed.
         */
        boolean transaction(int first, int second) {
            long firstVersion = versions.incrementAndGet();
            long secondVersion = versions.incrementAndGet();
            long wall = System.currentTimeMillis();
            long invoked = System.nanoTime();
            try (Statement statement = connection.createStatement()) {
                statement.execute("BEGIN");
                write.setInt(1, first);
                write.setLong(2, firstVersion);
                write.executeUpdate();
                read.setInt(1, first);
                try (ResultSet rows = read.executeQuery()) {
                    rows.next();
                    if (rows.getLong(1) < firstVersion) {
                        disagreements.add(session + " read " + rows.getLong(1) + " of key " + first
                                + " inside its transaction after writing " + firstVersion);
                    }
                }
                write.setInt(1, second);
                write.setLong(2, secondVersion);
                write.executeUpdate();
                statement.execute("COMMIT");
                long completed = System.nanoTime();
                history.record(new Operation(session, Kind.WRITE, first, firstVersion, invoked, completed, wall,
                        Outcome.OK, null, 0, 0, null));
                history.record(new Operation(session, Kind.WRITE, second, secondVersion, invoked, completed, wall,
                        Outcome.OK, null, 0, 0, null));
                return true;
            } catch (SQLException e) {
                long completed = System.nanoTime();
                boolean broken = afterError() || brokenConnection(e);
                if (!broken) {
                    try (Statement statement = connection.createStatement()) {
                        statement.execute("ROLLBACK");
                    } catch (SQLException rollbackFailed) {
                        broken = true;
                        afterError();
                    }
                }
                Outcome outcome = broken ? Outcome.UNKNOWN : Outcome.FAILED;
                history.record(new Operation(session, Kind.WRITE, first, firstVersion, invoked, completed, wall,
                        outcome, null, 0, e.getErrorCode(), e.getMessage()));
                history.record(new Operation(session, Kind.WRITE, second, secondVersion, invoked, completed, wall,
                        outcome, null, 0, e.getErrorCode(), e.getMessage()));
                return false;
            }
        }

        void read(int key) {
            long wall = System.currentTimeMillis();
            long invoked = System.nanoTime();
            try {
                read.setInt(1, key);
                long seen;
                String server;
                try (ResultSet rows = read.executeQuery()) {
                    rows.next();
                    long v = rows.getLong(1);
                    seen = rows.wasNull() ? Operation.ABSENT : v;
                    server = rows.getString(2);
                }
                long completed = System.nanoTime();
                history.record(new Operation(session, Kind.READ, key, seen, invoked, completed, wall, Outcome.OK,
                        server, bound(), 0, null));
            } catch (SQLException e) {
                long completed = System.nanoTime();
                history.record(new Operation(session, Kind.READ, key, Operation.ABSENT, invoked, completed, wall,
                        Outcome.FAILED, null, bound(), e.getErrorCode(), e.getMessage()));
                afterError();
            }
        }

        /** Drops the connection if it no longer works; returns whether it was dropped. */
        boolean afterError() {
            boolean valid;
            try {
                valid = connection.isValid(2);
            } catch (SQLException e) {
                valid = false;
            }
            if (!valid) {
                closeQuietly();
                connection = null;
            }
            return !valid;
        }

        void reconnect(long deadline) {
            while (!stopping && System.nanoTime() < deadline) {
                try {
                    connect();
                    reconnects.incrementAndGet();
                    history.note(session + " reconnected");
                    return;
                } catch (SQLException e) {
                    closeQuietly();
                    connection = null;
                    try {
                        Thread.sleep(100);
                    } catch (InterruptedException interrupted) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }
        }

        void closeQuietly() {
            if (connection != null) {
                try {
                    connection.close();
                } catch (SQLException ignored) {
                    // it is being dropped
                }
            }
        }
    }

    /** A broken connection, after which a write may or may not have committed. */
    static boolean brokenConnection(SQLException e) {
        String state = e.getSQLState();
        return (state != null && state.startsWith("08")) || e instanceof java.sql.SQLNonTransientConnectionException
                || e instanceof java.sql.SQLRecoverableException;
    }
}
