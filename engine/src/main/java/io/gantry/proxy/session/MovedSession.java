package io.gantry.proxy.session;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gantry.proxy.login.ClientIdentity;
import io.gantry.proxy.prepared.PreparedStatements;
import io.gantry.proxy.state.NextTransaction;
import io.gantry.proxy.state.SessionStateLog;
import io.gantry.proxy.state.SessionTracking;
import io.gantry.route.ReadBalance;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.ReadYourWritesScope;
import io.gantry.route.ReplicaPreference;
import io.gantry.route.RoutingConfig;
import io.gantry.route.SessionConsistency;
import java.time.Duration;
import java.util.List;

/**
 * A client session between two statements, by value: what a Gantry taking over needs to serve it on the same client
 * socket as if it had served it from the start (docs/ARCHITECTURE.md, "The path of a take-over"). Its server
 * connections do not move: a session moves only when none holds state replay cannot rebuild, and the new process
 * opens its own and brings them to this state, as multiplexing does whenever a session changes connections.
 *
 * <p>No packet sequence number is here: between two statements the client's next command starts a new exchange at 0.
 * What is not here starts afresh: the sticky replica of {@code --read-balance=session} (the read floors keep the
 * guarantees), {@code ROW_COUNT()}, {@code FOUND_ROWS()} and the warnings of the statement before the move, the
 * digests' figures.
 *
 * @param id                 the session id: its {@code CONNECTION_ID()}, kept
 * @param host               the client's address, for logs and the login gate
 * @param client             account, negotiated capabilities and collation, the secret its backend logins use
 * @param settings           the settings, database and user variables to replay, in order
 * @param prepared           the prepared statements with their ids and metadata
 * @param consistency        the read floors and the completions still waiting for a position sample
 * @param tracking           what the client's own session tracking asked for
 * @param routing            its routing settings ({@code SET gantry_...} or the flags')
 * @param guarantees         its read guarantees
 * @param nextTransaction    a held {@code SET TRANSACTION}, or null
 * @param pinnedBy           the statement flag that pinned the session to the primary, or null
 * @param lastInsertId       what {@code LAST_INSERT_ID()} answers
 * @param lastStatus         the status flags of the last answer (autocommit, {@code sql_mode}'s flags)
 * @param waitTimeoutSeconds its own {@code wait_timeout}, 0 for none
 * @param unread             bytes of the client's next command already read, not yet handled
 */
public record MovedSession(long id, String host, ClientIdentity.Kept client, List<SessionStateLog.Recorded> settings,
                           PreparedStatements.Kept prepared, SessionConsistency.Kept consistency,
                           SessionTracking.Kept tracking, Routing routing, Guarantees guarantees,
                           NextTransaction nextTransaction, String pinnedBy, long lastInsertId, int lastStatus,
                           long waitTimeoutSeconds, byte[] unread) {

    private static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);

    /** {@link RoutingConfig} by value. */
    public record Routing(boolean masterPreferred, int readMasterPercentage, String readBalance,
                          boolean readFromFollowers, boolean closest, long toleranceMicros) {

        static Routing of(RoutingConfig config) {
            return new Routing(config.masterPreferred(), config.readMasterPercentage(), config.readBalance().name(),
                    config.readFromFollowers(), config.replicaPreference().closest(),
                    config.replicaPreference().toleranceMicros());
        }

        RoutingConfig config() {
            return new RoutingConfig(masterPreferred, readMasterPercentage, ReadBalance.valueOf(readBalance),
                    readFromFollowers, new ReplicaPreference(closest, toleranceMicros));
        }
    }

    /** {@link ReadGuarantees} by value, durations in nanoseconds. */
    public record Guarantees(boolean readYourWrites, long followerReadStalenessNanos, long maxStaleReadBoundNanos,
                             long sampleIntervalNanos, boolean avoidWaiting, long causalWaitTimeoutNanos,
                             String scope, String causalToken) {

        static Guarantees of(ReadGuarantees guarantees) {
            return new Guarantees(guarantees.readYourWrites(), guarantees.followerReadStaleness().toNanos(),
                    guarantees.maxStaleReadBound().toNanos(), guarantees.sampleInterval().toNanos(),
                    guarantees.avoidWaiting(), guarantees.causalWaitTimeout().toNanos(), guarantees.scope().name(),
                    guarantees.causalToken());
        }

        ReadGuarantees value() {
            return new ReadGuarantees(readYourWrites, Duration.ofNanos(followerReadStalenessNanos),
                    Duration.ofNanos(maxStaleReadBoundNanos), Duration.ofNanos(sampleIntervalNanos), avoidWaiting,
                    Duration.ofNanos(causalWaitTimeoutNanos), ReadYourWritesScope.valueOf(scope), causalToken);
        }
    }

    /** One line of JSON (no line break in it), as the hand-over socket carries it. */
    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("session " + id + ": cannot write its state: " + e.getMessage(), e);
        }
    }

    /**
     * Reads {@link #toJson}'s line.
     *
     * @throws IllegalArgumentException naming what is wrong, when it is not a session's state of this version
     */
    public static MovedSession fromJson(String json) {
        try {
            return JSON.readValue(json, MovedSession.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a session's state: " + e.getOriginalMessage(), e);
        }
    }
}
