package io.gantry.admin.protocol;

import java.time.Instant;
import java.util.Objects;

/**
 * A server's live state, as a row of {@code gantry.upstream_servers} has it.
 *
 * @param host        host
 * @param port        port
 * @param database    database Gantry's service account uses
 * @param user        the service account (never a password)
 * @param weight      1..100
 * @param purpose     {@code proxy}, {@code cdc} or {@code cdc, proxy}
 * @param activeCdc   whether the change stream reads from it now
 * @param health      {@code up}, {@code down}, {@code broken}, {@code diverged}; for servers only on the CDC list
 *                    {@code streaming} or {@code unchecked}
 * @param downSince   when it went down, null while up
 * @param lastOk      last good check or connection, null if never
 * @param connections backend connections Gantry holds to it now
 * @param role        {@code primary}, {@code replica} or {@code unknown}
 * @param lagMs       replication lag in milliseconds, null when unknown
 * @param rttMs       round trip of the last check's ping in milliseconds, null when none
 * @param connectMs   how long the last check took to open and log in a new connection, in milliseconds; null when
 *                    none, and from an engine that does not measure it apart
 * @param rttSmoothedMs the checks' round trips smoothed, what {@code --follower-reads-prefer=closest} compares, in
 *                    milliseconds; null when none, and from an engine that does not keep it
 */
public record ServerState(String host, int port, String database, String user, int weight, String purpose,
                          boolean activeCdc, String health, Instant downSince, Instant lastOk, int connections,
                          String role, Long lagMs, Double rttMs, Double connectMs,
                          Double rttSmoothedMs) {

    public ServerState {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(database, "database");
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(purpose, "purpose");
        Objects.requireNonNull(health, "health");
        Objects.requireNonNull(role, "role");
    }

    /** {@code host:port}. */
    public String address() {
        return host + ":" + port;
    }
}
