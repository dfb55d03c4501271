package io.gantry.gtid;

/**
 * The two GTID dialects Gantry streams from. They are not interchangeable: a MySQL GTID names a transaction by the
 * originating server's UUID (and, from 8.3, a tag) and a per-server number; a MariaDB GTID by a replication domain,
 * the originating server id and a per-domain sequence number.
 */
public enum Flavour {
    MYSQL("MySQL"),
    MARIADB("MariaDB");

    private final String displayName;

    Flavour(String displayName) {
        this.displayName = displayName;
    }

    /** The product name as written in messages: {@code MySQL} or {@code MariaDB}. */
    public String displayName() {
        return displayName;
    }
}
