package io.gantry.sandbox;

import java.util.List;

/** The database and accounts every sandbox server has (MariaDB and MySQL alike). */
public final class SandboxAccounts {

    /** The database created for applications and tests. */
    public static final String DATABASE = "app";

    /** The application account; also good as Gantry's service account (it has the replication privileges). */
    public static final Credentials APP = new Credentials("app", "app");

    /** The account replicas use to read the primary's binary log. */
    static final Credentials REPLICATION = new Credentials("repl", "repl");

    private SandboxAccounts() {
    }

    /** MariaDB statements that create the database and the accounts, run once in the template. */
    static List<String> mariaDbSetupStatements() {
        return List.of(
                "CREATE DATABASE " + DATABASE,
                "CREATE USER '" + APP.user() + "'@'%' IDENTIFIED BY '" + APP.password() + "'",
                // Everything, including REPLICATION SLAVE and BINLOG MONITOR for CDC...
                "GRANT ALL PRIVILEGES ON *.* TO '" + APP.user() + "'@'%'",
                // ...except writing to a read_only replica, so a write routed to a replica fails loudly.
                "REVOKE READ_ONLY ADMIN ON *.* FROM '" + APP.user() + "'@'%'",
                "CREATE USER '" + REPLICATION.user() + "'@'%' IDENTIFIED BY '" + REPLICATION.password() + "'",
                "GRANT REPLICATION SLAVE ON *.* TO '" + REPLICATION.user() + "'@'%'");
    }

    /**
     * MySQL statements that create the database and the accounts, run once in the template. The accounts use the
     * server's default plugin ({@code caching_sha2_password} on MySQL 8), so every login of a test goes through it.
     */
    static List<String> mySqlSetupStatements() {
        return List.of(
                // --initialize-insecure makes only root@localhost, which a TCP login with skip-name-resolve is not.
                "CREATE USER 'root'@'127.0.0.1'",
                "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION",
                "GRANT PROXY ON ''@'' TO 'root'@'127.0.0.1' WITH GRANT OPTION",
                "CREATE DATABASE " + DATABASE,
                "CREATE USER '" + APP.user() + "'@'%' IDENTIFIED BY '" + APP.password() + "'",
                // Everything, including REPLICATION SLAVE / CLIENT and RELOAD for CDC and its snapshots...
                "GRANT ALL PRIVILEGES ON *.* TO '" + APP.user() + "'@'%'",
                // ...except what lets an account write to a read_only replica, so a write routed there fails loudly.
                "REVOKE SUPER, CONNECTION_ADMIN ON *.* FROM '" + APP.user() + "'@'%'",
                "CREATE USER '" + REPLICATION.user() + "'@'%' IDENTIFIED BY '" + REPLICATION.password() + "'",
                "GRANT REPLICATION SLAVE ON *.* TO '" + REPLICATION.user() + "'@'%'");
    }
}
