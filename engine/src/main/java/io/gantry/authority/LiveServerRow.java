package io.gantry.authority;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;

/**
 * One row of {@code gantry.upstream_servers}: the live state of a server, copied in by
 * {@link Authority#replaceLiveServers} before an admin query reads it. Components are in the table's column order.
 *
 * @param host        server host
 * @param port        server port
 * @param database    the database
 * @param user        Gantry's service account (never a password)
 * @param weight      1..100
 * @param purpose     {@code cdc}, {@code proxy} or {@code cdc, proxy}; see {@link Purpose#describe}
 * @param activeCdc   whether the change stream reads from this server now
 * @param health      {@code up}, {@code down}, {@code broken} or {@code diverged} (replicas that answer but serve
 *                    no reads), or for servers only on the CDC list {@code streaming} or {@code unchecked}
 * @param downSince   when it went down, or null while up
 * @param lastOk      last successful check or connection, or null if never
 * @param connections backend connections Gantry has open to it now
 * @param role        {@code primary}, {@code replica} or {@code unknown}
 * @param lagMs       replication lag in milliseconds, or null if unknown
 * @param rttMs       round trip of the last check's ping, on a connection kept logged in, in milliseconds, or
 *                    null if none
 * @param connectMs   how long the last check took to open and log in a new connection, in milliseconds, or null
 *                    if none
 * @param rttSmoothedMs the checks' round trips smoothed (what {@code --follower-reads-prefer=closest} compares), in
 *                    milliseconds, or null if none
 */
public record LiveServerRow(String host, int port, String database, String user, int weight, String purpose,
                            boolean activeCdc, String health, Instant downSince, Instant lastOk, int connections,
                            String role, Long lagMs, Double rttMs, Double connectMs, Double rttSmoothedMs) {

    public LiveServerRow {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(database, "database");
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(purpose, "purpose");
        Objects.requireNonNull(health, "health");
        Objects.requireNonNull(role, "role");
        downSince = downSince == null ? null : downSince.truncatedTo(ChronoUnit.MILLIS);
        lastOk = lastOk == null ? null : lastOk.truncatedTo(ChronoUnit.MILLIS);
    }

    /** {@code host:port}. */
    public String address() {
        return host + ":" + port;
    }
}
