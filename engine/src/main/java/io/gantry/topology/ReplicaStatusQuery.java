package io.gantry.topology;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The statement that shows a server's replication status and the names of its columns, in the form the server's
 * version knows. MariaDB (every version) and MySQL before 8.0.22: {@code SHOW SLAVE STATUS} with
 * {@code Master_Host}, {@code Slave_IO_Running}. MySQL 8.0.22 and later: {@code SHOW REPLICA STATUS} with
 * {@code Source_Host}, {@code Replica_IO_Running}; 8.4 knows only that one, 8.0.15 only the old one.
 *
 * @param sql          the statement
 * @param sourcePrefix the prefix of the source's columns ({@code Master_} or {@code Source_}: {@code Host},
 *                     {@code Port})
 * @param threadPrefix the prefix of the thread columns ({@code Slave_} or {@code Replica_}: {@code IO_Running},
 *                     {@code SQL_Running})
 */
record ReplicaStatusQuery(String sql, String sourcePrefix, String threadPrefix) {

    static final ReplicaStatusQuery SLAVE_FORM = new ReplicaStatusQuery("SHOW SLAVE STATUS", "Master_", "Slave_");
    static final ReplicaStatusQuery REPLICA_FORM = new ReplicaStatusQuery("SHOW REPLICA STATUS", "Source_",
            "Replica_");

    private static final Pattern MYSQL_VERSION = Pattern.compile("^(\\d+)\\.(\\d+)\\.(\\d+)");

    /** The form for a server whose {@code VERSION()} is {@code version}. */
    static ReplicaStatusQuery forVersion(String version) {
        if (version.contains("MariaDB")) {
            return SLAVE_FORM;
        }
        Matcher matcher = MYSQL_VERSION.matcher(version.strip());
        if (!matcher.find()) {
            // A MySQL whose version says no x.y.z: a fork or a cloud build, and those are recent.
            return REPLICA_FORM;
        }
        long number = Long.parseLong(matcher.group(1)) * 1_000_000L + Long.parseLong(matcher.group(2)) * 1_000L
                + Long.parseLong(matcher.group(3));
        return number >= 8_000_022L ? REPLICA_FORM : SLAVE_FORM;
    }
}
