package io.gantry.admin;

import io.gantry.authority.Event;
import io.gantry.authority.HealthSample;
import io.gantry.authority.LiveServerRow;
import io.gantry.digest.ShapeDigest;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What an operator can ask of and do to a running Gantry, typed. The admin SQL ({@link AdminSqlRunner}, on the
 * proxy port and the admin socket), the admin socket's own requests and, through the socket, the console and
 * {@code gantry admin} all come down to these calls.
 *
 * <p>Every method blocks (the Authority, server checks): call them off the event loops. A refusal or failure is an
 * {@link AdminException} with its {@link AdminResult.Failure kind}. {@code by} names who asked, for the log and the
 * timeline ("'admin'", "the admin socket").
 */
public interface AdminOperations {

    /** Most samples in one {@link #healthHistory} page. */
    int MAX_HEALTH_PAGE = 10_000;

    /** Most events in one {@link #events} answer. */
    int MAX_EVENTS = 10_000;

    /**
     * Runs a query on the {@code gantry} tables, over the live server state copied in first.
     *
     * @throws AdminException {@code INVALID_STATEMENT} for a statement the Authority does not run (a write,
     *                        several statements), {@code FAILED} when H2 refuses or fails it (with H2's reason)
     */
    AdminResult.Rows query(String sql);

    /** {@code SHOW GANTRY STATUS}: every status variable, in display order. */
    List<StatusVariable> status();

    /** Sets a server's weight on every list that has it (read share on the proxy list, preference for CDC). */
    AdminResult.Done setWeight(String hostPort, int weight, String by);

    /** Replaces the proxy's server list; checked first: a list that fails a check is refused and the old one stays. */
    AdminResult.Done changeUpstream(String urls, String by);

    /** Replaces the change stream's server list, checked the same way. */
    AdminResult.Done changeCdc(String urls, String by);

    /** {@code START GANTRY REPLICATION}. */
    AdminResult.Done startReplication(String by);

    /** {@code STOP GANTRY REPLICATION}. */
    AdminResult.Done stopReplication(String by);

    /** Every server of either list and its live state, proxy list first, in list order. */
    List<LiveServerRow> servers();

    /**
     * Health samples with {@code from <= at < until}, oldest first, at most {@code limit} of them; a page never
     * splits the samples of one instant (one health round), and {@link HealthPage#next()} says where the next
     * page starts.
     *
     * @param from   null for no lower bound
     * @param until  null for no upper bound
     * @param server {@code host:port} to keep only that server's samples
     * @param limit  1..{@value #MAX_HEALTH_PAGE}
     */
    HealthPage healthHistory(Instant from, Instant until, Optional<String> server, int limit);

    /**
     * The failover timeline: the latest {@code limit} events at or after {@code since}, oldest first.
     *
     * @param since null for no lower bound
     * @param limit 1..{@value #MAX_EVENTS}
     */
    List<Event> events(Instant since, int limit);

    /**
     * In a cluster, this instance's name, which its timeline events carry (those pushed as they happen are told
     * with it before their row is written); null outside a cluster.
     */
    String eventsInstance();

    /** {@code SHOW GANTRY BLOCKED HOSTS}: the hosts refused now for failed handshakes, the longest blocked first. */
    List<HostBlocks.BlockedHost> blockedHosts();

    /**
     * {@code CREATE CACHE}: in a cluster, added to the shared configuration.
     *
     * @throws io.gantry.cache.CacheException when the query cannot be cached, or the name or shape is taken
     */
    AdminResult.Done createCache(io.gantry.cache.CacheStatement.Create create, String by);

    /** {@code DROP CACHE name}. @throws io.gantry.cache.CacheException when there is no such cache */
    AdminResult.Done dropCache(String name, String by);

    /** {@code DROP ALL CACHES}. */
    AdminResult.Done dropAllCaches(String by);

    /**
     * {@code SHOW GANTRY CLUSTER}: the instances of this Gantry's cluster as the primary has them.
     *
     * @throws AdminException when this Gantry is not in a cluster, or the primary cannot be read
     */
    io.gantry.cluster.ClusterMember.View cluster();

    /** The pools of shared backend connections, per server and account ({@code SHOW GANTRY POOLS}). */
    List<PoolFigures.Pool> pools();

    /**
     * The statement digests, one row per shape, schema and account, the "other" row last ({@code SHOW GANTRY
     * QUERIES}); none before the proxy listens.
     */
    List<ShapeDigest> queries();

    /** The statement digests merged per shape ({@code SHOW PROXIED QUERIES}); none before the proxy listens. */
    List<ShapeDigest> queryShapes();

    /**
     * The {@code limit} digest rows with the largest total latency, largest first (the admin socket's
     * {@code queries} topic); none before the proxy listens.
     */
    List<ShapeDigest> topQueries(int limit);

    /** {@code FLUSH GANTRY QUERIES}: forgets the statement digests. */
    AdminResult.Done flushQueries(String by);

    /**
     * {@code FLUSH GANTRY HOST 'host'} ({@code host} present) or {@code FLUSH GANTRY HOSTS}: lifts the blocks and
     * forgets the failed handshakes and refused logins counted so far, as MariaDB's {@code FLUSH HOSTS}.
     */
    AdminResult.Done flushHosts(Optional<String> host, String by);

    /** A row of {@code SHOW GANTRY STATUS}. */
    record StatusVariable(String name, String value) {

        public StatusVariable {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
        }
    }

    /**
     * One page of health history.
     *
     * @param samples oldest first
     * @param next    where the next page starts ({@code from} of the next call), empty when this is the last
     */
    record HealthPage(List<HealthSample> samples, Optional<Instant> next) {

        public HealthPage {
            samples = List.copyOf(samples);
            Objects.requireNonNull(next, "next");
        }
    }
}
