package io.gantry.authority;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.Properties;
import java.util.function.Function;
import org.h2.api.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JDBC side of the Authority, kept apart so that the stores hold only their SQL: it opens the H2 file (owner
 * login with the data directory's key, schema migration, the reader user), owns the two connections and their
 * locks, and is the one place that runs a transaction and turns an {@link SQLException} into an
 * {@link AuthorityException}.
 *
 * <p>Writes run on the owner's connection under one lock, each in its own transaction; reads run on the
 * {@link Schema#READER} connection under another lock, so reads never wait for writes. {@link #close} takes both.
 */
final class AuthorityDatabase {

    /** The plumbing logs as the Authority: its log lines are the Authority's to operators. */
    private static final Logger LOG = LoggerFactory.getLogger(Authority.class);

    private static final String DATABASE_NAME = "authority";
    private static final String OWNER = "sa";

    private final Path directory;
    private final Clock clock;
    private final Object writeLock = new Object();
    private final Object readLock = new Object();
    /** Replaced when the file comes back from a lend ({@link #takeBack}); read and written under both locks. */
    private Connection writer;
    private Connection reader;
    /** Who holds the file while it is lent ({@link #lend}), null while this process holds it. */
    private String lentTo;
    private volatile boolean closed;

    private AuthorityDatabase(Path directory, Clock clock, Connection writer, Connection reader) {
        this.directory = directory;
        this.clock = clock;
        this.writer = writer;
        this.reader = reader;
    }

    /**
     * Opens the database in {@code directory} (absolute, already prepared) and brings its schema to the current
     * version.
     *
     * @param mustExist whether to refuse to create it
     * @throws AuthorityException if it cannot be opened, is in use by another process, or was made by a newer Gantry
     */
    static AuthorityDatabase open(Path directory, Clock clock, boolean mustExist) {
        Path file = directory.resolve(Authority.FILE_NAME);
        String url = jdbcUrl(directory, mustExist);
        Connection writer = null;
        try {
            String key = DataDirectory.key(directory);
            writer = connectOwner(url, key, file);
            int found = Schema.migrate(writer, clock, file.toString());
            try (Statement statement = writer.createStatement()) {
                // The key is base64url: no quote can be in it.
                statement.execute("ALTER USER " + Schema.READER + " SET PASSWORD '" + key + "'");
            }
            Connection reader = org.h2.Driver.load().connect(url, credentials(Schema.READER, key));
            reader.setReadOnly(true);
            DataDirectory.restrictFiles(directory);
            LOG.debug("authority: opened {} (schema version {}, found {})", file, Schema.CURRENT_VERSION, found);
            return new AuthorityDatabase(directory, clock, writer, reader);
        } catch (SQLException | RuntimeException e) {
            closeQuietly(writer);
            if (e instanceof AuthorityException authority) {
                throw authority;
            }
            if (e instanceof SQLException sql && sql.getErrorCode() == ErrorCode.DATABASE_ALREADY_OPEN_1) {
                throw new AuthorityException("authority: " + file + " is in use by another process (a running "
                        + "Gantry?); a running Gantry's tables are read through its admin socket (gantry admin, "
                        + "gantry export-health --admin-socket PATH) or its proxy port (admin SQL, or "
                        + "gantry export-health --from mysql://ADMIN@HOST:PORT)", e);
            }
            String reason = e instanceof SQLException sql ? h2Message(sql) : e.toString();
            throw new AuthorityException("authority: cannot open " + file + ": " + reason, e);
        }
    }

    /**
     * Logs in as the owner with the key. A database made before keys existed has an empty owner password: it is
     * opened with that once and given the key.
     */
    private static Connection connectOwner(String url, String key, Path file) throws SQLException {
        try {
            return org.h2.Driver.load().connect(url, credentials(OWNER, key));
        } catch (SQLException wrong) {
            if (wrong.getErrorCode() != ErrorCode.WRONG_USER_OR_PASSWORD) {
                throw wrong;
            }
            Connection legacy;
            try {
                legacy = org.h2.Driver.load().connect(url, credentials(OWNER, ""));
            } catch (SQLException stillWrong) {
                throw new AuthorityException("authority: the key in " + DataDirectory.KEY_FILE + " does not open "
                        + file + " (was the key file replaced?)", wrong);
            }
            try (Statement statement = legacy.createStatement()) {
                statement.execute("ALTER USER " + OWNER + " SET PASSWORD '" + key + "'");
            }
            LOG.warn("authority: {} had an empty password; it now has the one in {}", file, DataDirectory.KEY_FILE);
            return legacy;
        }
    }

    static String jdbcUrl(Path directory, boolean mustExist) {
        String base = directory.resolve(DATABASE_NAME).toString();
        if (base.indexOf(';') >= 0) {
            throw new AuthorityException("authority: the data directory " + directory
                    + " contains ';', which H2 cannot take in a file name");
        }
        // NON_KEYWORDS=USER lets a qualified u.user name the user column. No AUTO_SERVER: it would open a database
        // port on every interface. DB_CLOSE_ON_EXIT=FALSE: Gantry closes it itself once its last health samples and
        // events are written; H2's own shutdown hook closed it first when the JVM stopped, and they were lost.
        return "jdbc:h2:file:" + base + ";NON_KEYWORDS=USER;DB_CLOSE_ON_EXIT=FALSE"
                + (mustExist ? ";IFEXISTS=TRUE" : "");
    }

    private static Properties credentials(String user, String password) {
        Properties properties = new Properties();
        properties.setProperty("user", user);
        properties.setProperty("password", password);
        return properties;
    }

    /** The data directory, absolute. */
    Path directory() {
        return directory;
    }

    /**
     * Runs {@code work} as one transaction on the write connection: committed if it returns, rolled back if it
     * throws.
     *
     * @param what what is being done, for the message of a failure ("authority: could not WHAT: H2's reason")
     */
    <T> T write(String what, SqlFunction<Connection, T> work) {
        synchronized (writeLock) {
            ensureOpen();
            try {
                writer.setAutoCommit(false);
                try {
                    T result = work.apply(writer);
                    writer.commit();
                    return result;
                } catch (SQLException | RuntimeException e) {
                    writer.rollback();
                    throw e;
                } finally {
                    writer.setAutoCommit(true);
                }
            } catch (SQLException e) {
                throw couldNot(what, e);
            }
        }
    }

    /**
     * Runs {@code work} on the read connection.
     *
     * @param what what is being done, for the message of a failure ("authority: could not WHAT: H2's reason")
     */
    <T> T read(String what, SqlFunction<Connection, T> work) {
        return onReader(work, e -> couldNot(what, e));
    }

    /**
     * Runs an operator's statement ({@code work}) on the read connection. A failure's message is H2's reason
     * alone: it is about the operator's SQL, not about something Gantry was doing.
     */
    <T> T readForOperator(SqlFunction<Connection, T> work) {
        return onReader(work, e -> new AuthorityException(h2Message(e), e));
    }

    private <T> T onReader(SqlFunction<Connection, T> work, Function<SQLException, AuthorityException> failure) {
        synchronized (readLock) {
            ensureOpen();
            try {
                return work.apply(reader);
            } catch (SQLException e) {
                throw failure.apply(e);
            }
        }
    }

    private static AuthorityException couldNot(String what, SQLException e) {
        return new AuthorityException("authority: could not " + what + ": " + h2Message(e), e);
    }

    private void ensureOpen() {
        ensureNotClosed();
        if (lentTo != null) {
            throw new AuthorityException("authority: " + directory.resolve(Authority.FILE_NAME) + " is held by "
                    + lentTo + " now; ask that process");
        }
    }

    private void ensureNotClosed() {
        if (closed) {
            throw new IllegalStateException("authority: " + directory.resolve(Authority.FILE_NAME) + " is closed");
        }
    }

    /**
     * Closes both connections so that another process can open the file (H2 locks it while one is open), waiting
     * for the read and the write in progress; until {@link #takeBack}, every use fails naming {@code holder}. Lent
     * already (a take-back that failed), it is lent on to {@code holder}.
     */
    void lend(String holder) {
        synchronized (writeLock) {
            synchronized (readLock) {
                ensureNotClosed();
                if (lentTo == null) {
                    closeQuietly(reader);
                    closeQuietly(writer);
                }
                lentTo = holder;
                LOG.info("authority: {} lent to {}", directory.resolve(Authority.FILE_NAME), holder);
            }
        }
    }

    /**
     * Opens the file again after a {@link #lend}, as it is now: the borrower may have written to it. Does nothing
     * when it is not lent.
     *
     * @throws AuthorityException if it cannot be opened (the borrower still holds it)
     */
    void takeBack() {
        synchronized (writeLock) {
            if (lentTo == null) {
                return;
            }
        }
        AuthorityDatabase reopened = open(directory, clock, true);
        synchronized (writeLock) {
            synchronized (readLock) {
                writer = reopened.writer;
                reader = reopened.reader;
                lentTo = null;
                LOG.info("authority: {} taken back", directory.resolve(Authority.FILE_NAME));
            }
        }
    }

    /** Closes both connections, waiting for the read and the write in progress; calling it again does nothing. */
    void close() {
        synchronized (writeLock) {
            synchronized (readLock) {
                if (closed) {
                    return;
                }
                closed = true;
                if (lentTo == null) {
                    closeQuietly(reader);
                    closeQuietly(writer);
                }
                LOG.debug("authority: closed {}", directory.resolve(Authority.FILE_NAME));
            }
        }
    }

    /** H2's reason without the statement it appends ("...; SQL statement: ..." and "[42102-232]"). */
    private static String h2Message(SQLException e) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        int statement = message.indexOf("; SQL statement:");
        if (statement >= 0) {
            message = message.substring(0, statement);
        }
        int newline = message.indexOf('\n');
        if (newline >= 0) {
            message = message.substring(0, newline);
        }
        return message.replaceAll("\\s*\\[\\d+-\\d+]$", "").strip();
    }

    private static void closeQuietly(Connection connection) {
        if (connection == null) {
            return;
        }
        try {
            connection.close();
        } catch (SQLException e) {
            LOG.warn("authority: error while closing a connection: {}", h2Message(e));
        }
    }
}
