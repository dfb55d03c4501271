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
    static List<String> setupStatements() {
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
}
