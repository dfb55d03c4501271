package io.gantry.topology;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The checks a server list must pass before Gantry uses it, at startup and before an online change: every server
 * has GTIDs (MySQL {@code gtid_mode=ON}; MariaDB binary log on and {@code gtid_strict_mode=ON}), has the database,
 * and agrees with the others on {@code lower_case_table_names}, time zone and server collation. A wrong password or
 * a failed check is fatal and names the server and the check; an unreachable server is only reported, and the list
 * is usable while at least one server passes.
 */
public final class ServerValidator {

    /** The outcome for one server. */
    public sealed interface Outcome {
        UpstreamUrl url();
    }

    /** The server passed every check; the settings others must match. */
    public record Passed(UpstreamUrl url, Settings settings) implements Outcome {
    }

    /** The server could not be reached; it starts marked down. */
    public record Unreachable(UpstreamUrl url, String reason) implements Outcome {
    }

    /** The server answered but failed a check (a wrong password counts): the list is refused. */
    public record Failed(UpstreamUrl url, String check, String message) implements Outcome {
    }

    /** What servers of one list must agree on. */
    public record Settings(String flavour, int lowerCaseTableNames, String timeZone, String collation) {
    }

    /** All outcomes, in list order. */
    public record Report(List<Outcome> outcomes) {

        /** The first fatal problem, as an operator reads it, or null when the list is usable. */
        public String fatalProblem() {
            for (Outcome outcome : outcomes) {
                if (outcome instanceof Failed failed) {
                    return failed.url().address() + " failed the " + failed.check() + " check: " + failed.message();
                }
            }
            if (outcomes.stream().noneMatch(o -> o instanceof Passed)) {
                return "no server passed validation: " + String.join("; ", outcomes.stream()
                        .map(o -> o.url().address() + ": " + ((Unreachable) o).reason()).toList());
            }
            return null;
        }

        public List<Unreachable> unreachable() {
            return outcomes.stream().filter(o -> o instanceof Unreachable).map(o -> (Unreachable) o).toList();
        }
    }

    private final Duration connectTimeout;
    private final int retries;

    /** Without retries: a server that does not answer at once is unreachable. */
    public ServerValidator(Duration connectTimeout) {
        this(connectTimeout, 0);
    }

    /**
     * @param connectTimeout bound on each try, connect and login together (see {@link ServiceConnections#openWithin}),
     *                       and on each answer of the checks after it
     * @param retries        how many more times a server that does not answer is tried, with a short growing pause
     *                       (250 ms, doubling, at most 2 s); a server that answers and refuses is not retried. A
     *                       server that never answers costs at most {@code (retries + 1) * connectTimeout} plus the
     *                       pauses
     */
    public ServerValidator(Duration connectTimeout, int retries) {
        this.connectTimeout = connectTimeout;
        this.retries = retries;
    }

    /** Validates a list: the entries must name one database, then each server is checked against the first. */
    public Report validate(List<UpstreamUrl> urls) {
        List<Outcome> outcomes = new ArrayList<>();
        String database = urls.get(0).database();
        Settings reference = null;
        UpstreamUrl referenceUrl = null;
        for (UpstreamUrl url : urls) {
            if (!url.database().equals(database)) {
                outcomes.add(new Failed(url, "database name", "it names database '" + url.database() + "' but "
                        + urls.get(0).address() + " names '" + database + "'; every server must serve the same one"));
                continue;
            }
            Outcome outcome = check(url);
            if (outcome instanceof Passed passed) {
                if (reference == null) {
                    reference = passed.settings();
                    referenceUrl = url;
                } else {
                    Failed mismatch = compare(url, passed.settings(), referenceUrl, reference);
                    if (mismatch != null) {
                        outcome = mismatch;
                    }
                }
            }
            outcomes.add(outcome);
        }
        return new Report(outcomes);
    }

    private Outcome check(UpstreamUrl url) {
        Connection connection = null;
        for (int attempt = 0; connection == null; attempt++) {
            try {
                connection = ServiceConnections.openWithin(url, connectTimeout);
            } catch (SQLException e) {
                // 28000: the server answered and refused the account; anything else: it did not answer.
                if ("28000".equals(e.getSQLState()) || e.getErrorCode() == 1045) {
                    return new Failed(url, "login", "the server refused '" + url.user() + "': " + ServerErrors.describe(e));
                }
                // A TLS refusal (no TLS offered, an untrusted certificate) is a wrong set-up, not an outage.
                String tlsProblem = ServiceConnections.tlsProblem(url, e);
                if (tlsProblem != null) {
                    return new Failed(url, "TLS", tlsProblem);
                }
                if (attempt >= retries) {
                    return new Unreachable(url, ServerErrors.describe(e)
                            + (retries > 0 ? " (tried " + (retries + 1) + " times)" : ""));
                }
                pause(Math.min(2000L, 250L << attempt));
            }
        }
        try (Connection open = connection; Statement statement = open.createStatement()) {
            String version = single(statement, "SELECT VERSION()");
            boolean mariaDb = version.contains("MariaDB");
            if (mariaDb) {
                if (!"1".equals(single(statement, "SELECT @@GLOBAL.log_bin"))) {
                    return new Failed(url, "GTID", "the binary log is off (MariaDB needs log_bin and "
                            + "gtid_strict_mode=ON for GTID positions)");
                }
                if (!"1".equals(single(statement, "SELECT @@GLOBAL.gtid_strict_mode"))) {
                    return new Failed(url, "GTID", "gtid_strict_mode is OFF (MariaDB needs it ON)");
                }
            } else if (!"ON".equalsIgnoreCase(single(statement, "SELECT @@GLOBAL.gtid_mode"))) {
                return new Failed(url, "GTID", "gtid_mode is " + single(statement, "SELECT @@GLOBAL.gtid_mode")
                        + " (MySQL needs gtid_mode=ON)");
            }
            try (PreparedStatement schema = open.prepareStatement(
                    "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?")) {
                schema.setString(1, url.database());
                try (ResultSet rows = schema.executeQuery()) {
                    rows.next();
                    if (rows.getInt(1) == 0) {
                        return new Failed(url, "database", "database '" + url.database() + "' does not exist "
                                + "(or '" + url.user() + "' cannot see it)");
                    }
                }
            }
            String timeZone = single(statement, "SELECT @@GLOBAL.time_zone");
            if ("SYSTEM".equalsIgnoreCase(timeZone)) {
                timeZone = "SYSTEM (" + single(statement, "SELECT @@GLOBAL.system_time_zone") + ")";
            }
            Settings settings = new Settings(mariaDb ? "MariaDB" : "MySQL",
                    Integer.parseInt(single(statement, "SELECT @@GLOBAL.lower_case_table_names")), timeZone,
                    single(statement, "SELECT @@GLOBAL.collation_server"));
            return new Passed(url, settings);
        } catch (SQLException e) {
            return new Unreachable(url, "checks interrupted: " + ServerErrors.describe(e));
        }
    }

    private static Failed compare(UpstreamUrl url, Settings settings, UpstreamUrl referenceUrl, Settings reference) {
        if (settings.lowerCaseTableNames() != reference.lowerCaseTableNames()) {
            return new Failed(url, "lower_case_table_names", "it is " + settings.lowerCaseTableNames() + ", "
                    + referenceUrl.address() + " has " + reference.lowerCaseTableNames());
        }
        if (!settings.timeZone().equals(reference.timeZone())) {
            return new Failed(url, "time zone", "it is " + settings.timeZone() + ", " + referenceUrl.address()
                    + " has " + reference.timeZone());
        }
        if (!settings.collation().equals(reference.collation())) {
            return new Failed(url, "server collation", "it is " + settings.collation() + ", "
                    + referenceUrl.address() + " has " + reference.collation());
        }
        return null;
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String single(Statement statement, String sql) throws SQLException {
        try (ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            return rows.getString(1);
        }
    }
}
