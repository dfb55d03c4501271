package io.gantry.admin;

import io.gantry.digest.DigestOrder;
import java.util.Objects;
import java.util.Optional;

/**
 * A statement Gantry answers itself instead of sending it to a server, as recognised by
 * {@link AdminStatements#parse(String)}. docs/sql-reference.md lists them (DocDriftSqlReferenceTest fails when one is
 * missing there); docs/ARCHITECTURE.md says where a new one is added.
 *
 * <p>{@link Invalid} is text that is clearly meant for Gantry but malformed; it is answered with
 * an ERR packet ({@link Invalid#ERROR_CODE}, {@link Invalid#SQL_STATE}) and never reaches a server.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query.html">COM_QUERY</a>
 */
public sealed interface AdminStatement {

    /** {@code SHOW GANTRY STATUS}: one row per status variable, including {@code CDC Server}. */
    record ShowStatus() implements AdminStatement {
    }

    /**
     * {@code ALTER GANTRY CHANGE UPSTREAM TO '<list>'}: replace the proxy's server list.
     *
     * @param urls the string literal's value, unescaped and otherwise untouched: comma-separated
     *             URLs, each with an optional {@code |weight}; never blank
     */
    record ChangeUpstream(String urls) implements AdminStatement {

        /** @throws IllegalArgumentException if {@code urls} is blank */
        public ChangeUpstream {
            requireList(urls);
        }
    }

    /**
     * {@code ALTER GANTRY CHANGE CDC TO '<list>'}: replace the servers the binlog is read from.
     *
     * @param urls as {@link ChangeUpstream#urls()}
     */
    record ChangeCdc(String urls) implements AdminStatement {

        /** @throws IllegalArgumentException if {@code urls} is blank */
        public ChangeCdc {
            requireList(urls);
        }
    }

    /**
     * {@code ALTER GANTRY SET WEIGHT 'host:port' TO n}: change one server's read weight.
     *
     * @param hostPort the server as written, e.g. {@code db2:3306} or {@code [::1]:3306}
     * @param weight   {@value #MIN_WEIGHT} to {@value #MAX_WEIGHT}
     */
    record SetWeight(String hostPort, int weight) implements AdminStatement {

        /** The smallest weight a server can have. */
        public static final int MIN_WEIGHT = 1;
        /** The largest weight a server can have. */
        public static final int MAX_WEIGHT = 100;

        /** @throws IllegalArgumentException if the weight is outside 1..100 */
        public SetWeight {
            Objects.requireNonNull(hostPort, "hostPort");
            if (weight < MIN_WEIGHT || weight > MAX_WEIGHT) {
                throw new IllegalArgumentException("weight must be " + MIN_WEIGHT + ".." + MAX_WEIGHT + ", was " + weight);
            }
        }
    }

    /** {@code STOP GANTRY REPLICATION}: pause reading the binlog (the position is kept). */
    /**
     * A statement that would write to a table of the {@code gantry} schema ({@code DELETE FROM gantry.events}): those
     * tables are Gantry's view of its own state and no server has them, so it is answered, not forwarded.
     */
    record WriteToGantryTables(String verb) implements AdminStatement {

        public WriteToGantryTables {
            Objects.requireNonNull(verb, "verb");
        }
    }

    /** {@code SHOW GANTRY BLOCKED HOSTS}. */
    record ShowBlockedHosts() implements AdminStatement {
    }

    /** {@code SHOW GANTRY CLUSTER}. */
    record ShowCluster() implements AdminStatement {
    }

    /** {@code SHOW GANTRY POOLS}. */
    record ShowPools() implements AdminStatement {
    }

    /**
     * {@code SHOW GANTRY QUERIES [ORDER BY total_time|count|p99|errors] [LIMIT n]}: the statement digests, largest
     * first ({@code total_time} when no order is given), at most {@code limit} rows ({@link #NO_LIMIT}: all).
     */
    record ShowQueries(DigestOrder order, int limit) implements AdminStatement {

        public static final int NO_LIMIT = Integer.MAX_VALUE;

        public ShowQueries {
            Objects.requireNonNull(order, "order");
            if (limit < 0) {
                throw new IllegalArgumentException("LIMIT must not be negative");
            }
        }
    }

    /** {@code FLUSH GANTRY QUERIES}: forgets the statement digests. */
    record FlushQueries() implements AdminStatement {
    }

    /** {@code FLUSH GANTRY HOSTS} (every host: {@code host} empty) or {@code FLUSH GANTRY HOST 'addr'}. */
    record FlushHosts(Optional<String> host) implements AdminStatement {

        public FlushHosts {
            Objects.requireNonNull(host, "host");
        }
    }

    record StopReplication() implements AdminStatement {
    }

    /** {@code START GANTRY REPLICATION}: resume reading the binlog from the saved position. */
    record StartReplication() implements AdminStatement {
    }

    /**
     * A query on the {@code gantry} tables ({@code gantry.upstream_servers}, {@code gantry.events},
     * {@code gantry.health_history}), answered from the Authority.
     *
     * @param sql the statement exactly as the client sent it (comments, quoting and a trailing
     *            {@code ;} included), to run where those tables live in schema {@code GANTRY}
     */
    record TableQuery(String sql) implements AdminStatement {

        public TableQuery {
            Objects.requireNonNull(sql, "sql");
        }
    }

    /**
     * {@code SHOW [FULL] TABLES {FROM | IN} gantry [LIKE 'pattern']}: the names of the
     * {@code gantry} tables (column {@code Tables_in_gantry}, plus {@code Table_type} with FULL).
     *
     * @param full    FULL was given
     * @param pattern the LIKE pattern, {@code %} when none was given
     */
    record ShowTables(boolean full, String pattern) implements AdminStatement {

        public ShowTables {
            Objects.requireNonNull(pattern, "pattern");
        }
    }

    /**
     * Text meant as a Gantry statement but malformed.
     *
     * @param message what was expected and what was found, e.g. {@code ALTER GANTRY SET WEIGHT
     *                expects 'host:port' TO 1..100, got 'TO 0'}
     */
    record Invalid(String message) implements AdminStatement {

        /** The error code to answer with: ER_PARSE_ERROR. */
        public static final int ERROR_CODE = 1064;
        /** The SQLSTATE to answer with: syntax error or access rule violation. */
        public static final String SQL_STATE = "42000";

        public Invalid {
            Objects.requireNonNull(message, "message");
        }
    }

    private static void requireList(String urls) {
        if (urls.isBlank()) {
            throw new IllegalArgumentException("the server list is empty");
        }
    }
}
