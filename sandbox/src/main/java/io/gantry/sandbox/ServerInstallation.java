package io.gantry.sandbox;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Where a flavour's server program lives and what it needs to run as a sandbox server: its environment, its
 * {@code my.cnf} settings, and how a data directory with the sandbox's accounts is made. {@link LocalServer} and
 * {@link TemplateDataDirectory} run either flavour through this.
 */
public sealed interface ServerInstallation permits MariaDbInstallation, MySqlInstallation {

    /** What runs, for reports and logs: {@code MariaDB 11.4.5 (bundled)}, {@code MySQL 8.0.15 (bundled)}. */
    String label();

    /** The install's root directory. */
    Path home();

    /** The server program ({@code mariadbd}, {@code mysqld}). */
    Path serverBinary();

    /** Environment variables the server program needs besides the JVM's own (libraries it brings along). */
    Map<String, String> environment();

    /** The {@code my.cnf} group the server reads ({@code [mariadbd]}, {@code [mysqld]}). */
    String optionGroup();

    /**
     * The flavour's own {@code my.cnf} lines for a sandbox server named {@code name}: where its files are found,
     * GTIDs and the binary log, memory, TLS. Lines common to both flavours (port, data directory, server id,
     * read-only) are {@link LocalServer}'s.
     *
     * @param first lines that must come before any other (MariaDB's {@code log-basename})
     */
    List<String> serverOptions(String name, boolean first);

    /** SQL run once in the template data directory: the test database and the sandbox's accounts. */
    List<String> setupStatements();

    /**
     * Makes a new data directory {@code data} holding the system tables and the {@link #setupStatements()}, with no
     * GTIDs and no binary log, so that copies of it replicate from each other from the empty position.
     *
     * @param work a directory for logs and scratch files of the initialisation
     */
    void initialise(Path data, Path work);
}
