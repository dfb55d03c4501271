package io.gantry.proxy.session;


import io.gantry.admin.AdminSql;
import io.gantry.cache.QueryCaches;
import io.gantry.digest.SlowStatementLog;
import io.gantry.digest.StatementDigests;
import io.gantry.proxy.backend.BackendPools;
import io.gantry.proxy.routing.ReadCounters;
import io.gantry.proxy.routing.ServerIds;
import io.gantry.route.CausalScopes;
import io.gantry.route.Router;
import io.gantry.topology.Upstreams;
import java.time.Clock;

/**
 * What a client session may use of the proxy that carries it: the servers, routing, the caches, the metrics, the
 * clock, the other sessions and the login door. Handed to every session instead of the listener
 * ({@code io.gantry.proxy.ProxyServer}), so a session cannot reach the listener's lifecycle, and what it depends on
 * is written in one place. Every method is cheap and safe from any event loop.
 */
public interface ProxyServices {

    ProxyConfig config();

    /** The live server list: roles, health, positions. */
    Upstreams upstreams();

    /** The per-statement routing decision. */
    Router router();

    /** The routing id of each server of the current list. */
    ServerIds serverIds();

    /** Where reads went and why, for {@code SHOW GANTRY STATUS}. */
    ReadCounters readCounters();

    /** Transaction replays and how they ended. */
    ReplayCounts replayCounts();

    /** Finds out whether a commit in flight when the primary was lost committed, and counts what it found. */
    InDoubtCommits inDoubtCommits();

    /** Where each statement's route, answer time and Gantry's own errors are counted. */
    ProxyMetrics metrics();

    /** The query caches sessions look statements up in; null when this proxy has none. */
    QueryCaches caches();

    /** The causal scopes wider than a session ({@code gantry_read_your_writes_scope}), shared by every session. */
    CausalScopes causalScopes();

    /** Where every statement is counted under its shape. */
    StatementDigests digests();

    /** Where statements slower than {@code --slow-statement-ms} are written; one that writes nothing without it. */
    SlowStatementLog slowStatements();

    /** Answers Gantry's own SQL on the proxy port. */
    AdminSql adminSql();

    /**
     * How a new connection to a server is opened and logged in, for a session and for the pools' warm minimum alike:
     * over TCP, unless the in-process session says otherwise. It reads the proxy's current channels at each open.
     */
    BackendPools.Opener backendOpener();

    /** The idle backend connections sessions share (connection multiplexing), one pool per event loop. */
    BackendPools backendPools();

    /** Warnings a peer can cause at will: at most 20 of a kind a minute. */
    RateLimitedLog peerWarnings();

    /** The time the read guarantees and the caches measure with. */
    Clock clock();

    /** A session needs positions sampled soon (it just read or wrote). */
    void nudgeSampler();

    /** Every session of this proxy, by id; admission and the drain. */
    SessionRegistry sessions();

    /** What a connection logging in needs: the gate, TLS, the RSA key, account look-ups, the greeting. */
    LoginDoor login();
}
