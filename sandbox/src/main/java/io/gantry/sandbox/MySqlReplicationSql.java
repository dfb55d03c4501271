package io.gantry.sandbox;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * MySQL's replication statements in the form a server of a given version knows. MySQL 8.0.22 renamed them
 * ({@code SHOW REPLICA STATUS}, {@code CHANGE REPLICATION SOURCE TO ... SOURCE_*}, {@code START/STOP/RESET
 * REPLICA}) and 8.0.23 the options of {@code CHANGE ... TO}; 8.2.0 renamed {@code RESET MASTER} to {@code RESET
 * BINARY LOGS AND GTIDS}; 8.4 removed every old form. Releases before those know only the old ones (8.0.15, the
 * bundled server, among them). The sandbox uses the forms through this class only.
 *
 * @param replicaForms {@code REPLICA}/{@code SOURCE} statements and status columns (8.0.23 and later)
 * @param binaryLogForms {@code RESET BINARY LOGS AND GTIDS} (8.2.0 and later)
 */
public record MySqlReplicationSql(boolean replicaForms, boolean binaryLogForms) {

    private static final Pattern VERSION = Pattern.compile("^(\\d+)\\.(\\d+)\\.(\\d+)");

    /**
     * The forms for a server reporting {@code version} ({@code VERSION()} or {@code mysqld --version}: {@code 8.0.15},
     * {@code 8.4.3}, {@code 8.0.36-log}).
     */
    public static MySqlReplicationSql forVersion(String version) {
        Matcher matcher = VERSION.matcher(version.strip());
        if (!matcher.find()) {
            throw new IllegalArgumentException("not a MySQL version: '" + version + "'");
        }
        int major = Integer.parseInt(matcher.group(1));
        int minor = Integer.parseInt(matcher.group(2));
        int patch = Integer.parseInt(matcher.group(3));
        long number = major * 1_000_000L + minor * 1_000L + patch;
        // CHANGE REPLICATION SOURCE TO came in 8.0.23 (SHOW REPLICA STATUS and START REPLICA in 8.0.22): 8.0.23 is
        // the first release with every new form, so the old ones are used up to 8.0.22.
        return new MySqlReplicationSql(number >= 8_000_023L, number >= 8_002_000L);
    }

    /** {@code SHOW SLAVE STATUS} or {@code SHOW REPLICA STATUS}. */
    public String showStatus() {
        return replicaForms ? "SHOW REPLICA STATUS" : "SHOW SLAVE STATUS";
    }

    /** The status column naming the source's host ({@code Master_Host} or {@code Source_Host}). */
    public String sourceHostColumn() {
        return replicaForms ? "Source_Host" : "Master_Host";
    }

    /** The status column naming the source's port. */
    public String sourcePortColumn() {
        return replicaForms ? "Source_Port" : "Master_Port";
    }

    /** The status column saying whether the IO (receiver) thread runs. */
    public String ioRunningColumn() {
        return replicaForms ? "Replica_IO_Running" : "Slave_IO_Running";
    }

    /** The status column saying whether the SQL (applier) thread runs. */
    public String sqlRunningColumn() {
        return replicaForms ? "Replica_SQL_Running" : "Slave_SQL_Running";
    }

    public String start() {
        return replicaForms ? "START REPLICA" : "START SLAVE";
    }

    public String stop() {
        return replicaForms ? "STOP REPLICA" : "STOP SLAVE";
    }

    public String startSqlThread() {
        return start() + " SQL_THREAD";
    }

    public String stopSqlThread() {
        return stop() + " SQL_THREAD";
    }

    /** Forgets the source entirely (a promoted replica). */
    public String resetAll() {
        return replicaForms ? "RESET REPLICA ALL" : "RESET SLAVE ALL";
    }

    /** Empties the binary log and the executed GTID set. */
    public String resetBinaryLogs() {
        return binaryLogForms ? "RESET BINARY LOGS AND GTIDS" : "RESET MASTER";
    }

    /**
     * Points a replica at a source with GTID auto-positioning, retrying the connection every second, and asking
     * the source for its RSA key (a {@code caching_sha2_password} account over a connection without TLS needs it).
     * Heartbeats every second: a source's dump thread otherwise notices a replica that went away only at its next
     * heartbeat (30 s by default), and a source shutting down waits for it (about 10 s on 8.0.15).
     */
    public String changeSource(String host, int port, Credentials account) {
        String prefix = replicaForms ? "SOURCE_" : "MASTER_";
        return (replicaForms ? "CHANGE REPLICATION SOURCE TO " : "CHANGE MASTER TO ")
                + prefix + "HOST='" + host + "', " + prefix + "PORT=" + port + ", "
                + prefix + "USER='" + account.user() + "', " + prefix + "PASSWORD='" + account.password() + "', "
                + prefix + "AUTO_POSITION=1, " + prefix + "CONNECT_RETRY=1, " + prefix + "HEARTBEAT_PERIOD=1, "
                + (replicaForms ? "GET_SOURCE_PUBLIC_KEY=1" : "GET_MASTER_PUBLIC_KEY=1");
    }

    /** The query whose answer is 0 once the server has executed {@code gtidSet}, 1 after {@code timeout}. */
    public static String awaitExecuted(String gtidSet, Duration timeout) {
        return "SELECT WAIT_FOR_EXECUTED_GTID_SET('" + gtidSet + "', " + timeout.toSeconds() + ")";
    }

    /** The query for the transactions of {@code from} that {@code without} lacks. */
    public static String subtract(String from, String without) {
        return "SELECT GTID_SUBTRACT('" + from + "', '" + without + "')";
    }

    /** The number of transactions in a MySQL GTID set such as {@code uuid:1-5:7,uuid2:3}. */
    public static long countTransactions(String gtidSet) {
        long count = 0;
        for (String member : gtidSet.replace("\n", "").split(",")) {
            if (member.isBlank()) {
                continue;
            }
            String[] parts = member.trim().split(":");
            for (int i = 1; i < parts.length; i++) {
                String[] range = parts[i].split("-");
                long first = Long.parseLong(range[0]);
                long last = range.length == 2 ? Long.parseLong(range[1]) : first;
                count += last - first + 1;
            }
        }
        return count;
    }
}
