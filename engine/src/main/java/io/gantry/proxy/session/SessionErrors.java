package io.gantry.proxy.session;

import io.gantry.admin.AdminResult;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.login.LoginGate;
import io.gantry.topology.AccountLookup;
import io.gantry.topology.UpstreamServer;
import io.gantry.wire.CommandType;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.ServerVersion;
import java.util.Optional;

/**
 * Every error a client session answers with, in one place: the code, SQLState and words a client sees for each
 * failure Gantry itself detects. Codes and SQLStates are the server's own for the same situation, so drivers and
 * pools react as they would to a direct connection (08xxx: the connection is gone, retry elsewhere; 28000: bad
 * credentials, do not retry). Errors a server sent are forwarded as they are and never pass through here.
 */
public final class SessionErrors {

    /** ER_NO_SUCH_THREAD: what a server answers a KILL of a thread that has ended. */
    public static final int UNKNOWN_THREAD = 1094;
    /** ER_KILL_DENIED_ERROR. */
    public static final int NOT_OWNER_OF_THREAD = 1095;

    private SessionErrors() {
    }

    // ---- before login ------------------------------------------------------------------------------------------

    public static ErrPacket tooManySessions(int maxClientConnections) {
        return ErrPacket.of(1040, "08004", "Too many connections (Gantry's --max-client-connections is "
                + maxClientConnections + ")");
    }

    public static ErrPacket tooManyPendingLogins(LoginGate.Refusal.TooManyPending pending, String host) {
        return ErrPacket.of(1040, "08004", "Too many connections (" + pending.pending() + " connections "
                + (pending.perHost() ? "from " + host + " " : "") + "are still logging in; Gantry's "
                + pendingLoginFlag(pending) + " is " + pending.limit() + ")");
    }

    public static String pendingLoginFlag(LoginGate.Refusal.TooManyPending pending) {
        return pending.perHost() ? "--max-pending-logins-per-host" : "--max-pending-logins";
    }

    public static ErrPacket hostBlocked(String host, long secondsLeft) {
        return ErrPacket.of(1129, "HY000", "Host '" + host + "' is blocked because of many connection errors "
                + "(Gantry: malformed or unfinished handshakes; retry in " + secondsLeft + " s)");
    }

    public static ErrPacket tlsNotEnabled() {
        return ErrPacket.of(1045, "28000",
                "TLS is not enabled on this Gantry (start it with --tls-cert/--tls-key); connect without TLS");
    }

    /**
     * Never 1045/28000: pools take that for bad credentials and stop retrying. SQLState class 08 (connection
     * exception) is what drivers and pools treat as "cannot reach the server, retry".
     */
    /**
     * The account could not be looked up: "too many connections" (1040) when every server asked was full, else the
     * servers could not be reached (1105); the message says what each server answered.
     */
    public static ErrPacket accountLookupFailed(String user, Throwable cause) {
        if (cause instanceof AccountLookup.ServersUnreachableException unreachable && unreachable.full()) {
            return ErrPacket.of(1040, "08004", "Too many connections: Gantry cannot check the account '" + user
                    + "' (" + cause.getMessage() + ")");
        }
        return ErrPacket.of(1105, "08S01", "Gantry cannot check the account '" + user
                + "': the servers cannot be reached (" + cause.getMessage() + ")");
    }

    public static ErrPacket noServerForLogin(String why) {
        return ErrPacket.of(1105, "HY000", "Gantry: no server is available: " + why);
    }

    // ---- packets Gantry cannot read ----------------------------------------------------------------------------

    public static ErrPacket malformedPacket(String why) {
        return ErrPacket.of(1835, "HY000", "Malformed communication packet: " + why);
    }

    public static ErrPacket packetTooLarge(long found, long cap, boolean beforeLogin) {
        return beforeLogin
                ? ErrPacket.of(1153, "08S01", "Got a packet bigger than a login may send (" + found + " > " + cap
                        + " bytes before login)")
                : ErrPacket.of(1153, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes (" + found
                        + " > " + cap + ")");
    }

    public static ErrPacket packetsOutOfOrder() {
        return ErrPacket.of(1156, "08S01", "Got packets out of order");
    }

    /**
     * What the server answers a command it cannot read: nothing for the commands that never get an answer
     * (COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA), 1210 for a COM_STMT_EXECUTE whose parameters are cut off, 1243
     * for a reset or fetch of a cut-off statement id, 1835 for the rest (as MariaDB does; compared in
     * {@code SessionTrustIT}).
     */
    public static Optional<ErrPacket> malformedCommand(CommandType command, boolean statementIdCutOff) {
        return switch (command) {
            case COM_STMT_SEND_LONG_DATA, COM_STMT_CLOSE -> Optional.empty();
            case COM_STMT_EXECUTE -> Optional.of(statementIdCutOff
                    ? ErrPacket.of(1835, "08S01", "Malformed communication packet")
                    : ErrPacket.of(1210, "HY000", "Incorrect arguments to mysqld_stmt_execute"));
            // the server reads a cut-off id as statement 0, which never exists
            case COM_STMT_RESET -> Optional.of(unknownStatement(0, "mysqld_stmt_reset"));
            case COM_STMT_FETCH -> Optional.of(unknownStatement(0, "mysqld_stmt_fetch"));
            default -> Optional.of(ErrPacket.of(1835, "08S01", "Malformed communication packet"));
        };
    }

    public static ErrPacket unknownCommand(CommandType command) {
        return ErrPacket.of(1047, "08S01", "Unknown command " + command + " (Gantry)");
    }

    public static ErrPacket internalError(RuntimeException e) {
        return ErrPacket.of(1105, "HY000", "Gantry internal error: " + e);
    }

    // ---- commands ----------------------------------------------------------------------------------------------

    public static ErrPacket noPrimary(String what, String why) {
        return ErrPacket.of(1290, "HY000", "Gantry cannot run this " + what + ": " + why);
    }

    /**
     * The server's own refusal of a write in a read-only transaction, in the words of the server the client sees
     * ({@code server}, from the mirrored greeting): MySQL ends the sentence with a period, MariaDB does not (the
     * message files of MySQL 8.0.15, MariaDB 10.11 and 11.4.5, and SessionTrackingIT's comparison with a direct
     * 11.4 connection when the transaction ran on a replica).
     */
    public static ErrPacket writeInReadOnlyTransaction(ServerVersion server) {
        String message = "Cannot execute statement in a READ ONLY transaction";
        return ErrPacket.of(1792, "25006", server.mariaDb() ? message : message + ".");
    }

    public static ErrPacket unknownThread(long sessionId) {
        return ErrPacket.of(UNKNOWN_THREAD, "HY000", "Unknown thread id: " + sessionId);
    }

    public static ErrPacket notOwnerOfThread(long sessionId, String sqlState) {
        return ErrPacket.of(NOT_OWNER_OF_THREAD, sqlState, "You are not owner of thread " + sessionId);
    }

    public static ErrPacket adminStatementFailed(Throwable failure) {
        return ErrPacket.of(1105, "HY000", "Gantry admin statement failed: " + failure.getMessage());
    }

    /**
     * An admin statement's failure as a MySQL client expects it: a malformed statement is ER_PARSE_ERROR (1064,
     * 42000), an account outside {@code --admin-users} ER_SPECIFIC_ACCESS_DENIED_ERROR (1227, 42000), a write to
     * the gantry tables ER_OPEN_AS_READONLY (1036, HY000), and a refusal or failure ER_UNKNOWN_ERROR (1105, HY000).
     */
    public static ErrPacket adminStatementRefused(AdminResult.Failed failed) {
        return switch (failed.failure()) {
            case INVALID_STATEMENT -> ErrPacket.of(1064, "42000", failed.message());
            case ACCESS_DENIED -> ErrPacket.of(1227, "42000", failed.message());
            case READ_ONLY -> ErrPacket.of(1036, "HY000", failed.message());
            case REFUSED, FAILED -> ErrPacket.of(1105, "HY000", failed.message());
        };
    }

    public static ErrPacket unknownStatement(long clientId, String where) {
        return ErrPacket.of(1243, "HY000", "Unknown prepared statement handler (" + clientId + ") given to "
                + where);
    }

    public static ErrPacket noOpenCursor(long clientId) {
        return ErrPacket.of(1421, "HY000", "The statement (" + clientId + ") has no open cursor.");
    }

    public static ErrPacket longDataLost(String hostPort) {
        return ErrPacket.of(1105, "HY000", "the long data sent for this statement was lost with the connection to "
                + hostPort + "; send it again");
    }

    // ---- the session ends ------------------------------------------------------------------------------------

    /**
     * The error that ends a session: MariaDB's "connection was killed" (1927) with the connection-failure SQLState,
     * so drivers and pools treat the connection as gone. Not the client-side 2013: a server-sent 2xxx code makes
     * libmariadb (the {@code mariadb} CLI) report "malformed packet" instead of the message.
     */
    public static ErrPacket sessionEnded(String message) {
        return ErrPacket.of(1927, "08S01", message);
    }

    /**
     * The primary was lost during the session's transaction and the transaction could not be run again on the new
     * primary ({@code why}): the session ends as it would have without a replay, the transaction rolled back.
     */
    public static ErrPacket transactionNotReplayed(String lost, String why) {
        return sessionEnded("Gantry: " + lost + " during this session's transaction, and the transaction could not "
                + "be replayed on the new primary: " + why + "; it is rolled back and this session is closed, "
                + "reconnect");
    }

    /**
     * Gantry is draining (SIGTERM) and this session holds no transaction: the server's own error for a connection
     * a shutdown ends, with SQLState class 08 so pools reconnect, to a Gantry that runs.
     */
    static ErrPacket shuttingDown() {
        return ErrPacket.of(1053, "08S01", "Server shutdown in progress: Gantry is stopping and closed this idle "
                + "session; reconnect");
    }

    /** A server closed the idle session's connection: the server's own "closed after wait_timeout" error. */
    public static ErrPacket closedWhileIdle(String hostPort) {
        return ErrPacket.of(4031, "HY000", "Gantry: " + hostPort + " closed this session's connection while it was "
                + "idle (its wait_timeout, or the server went away); this session is closed");
    }

    /** What a failed backend connection means for the client: the server's own refusal, or the session's end. */
    static ErrPacket backendFailed(UpstreamServer server, Throwable cause) {
        if (cause instanceof BackendFailure failure && failure.serverError() != null) {
            ErrPacket refusal = failure.serverError();
            // A full server's refusal says which server: through Gantry the client cannot tell otherwise.
            return refusal.errorCode() == 1040 || refusal.errorCode() == 1203
                    ? ErrPacket.of(refusal.errorCode(), refusal.sqlState(), refusal.message() + " (on "
                            + server.address() + ", through Gantry)")
                    : refusal;
        }
        // A command cut off in flight may or may not have run: say so, as no answer will come to tell.
        String unknownOutcome = cause instanceof BackendFailure failure && failure.serverMarkedDown()
                ? "; the statement it was running may or may not have taken effect" : "";
        return sessionEnded("Gantry lost the backend " + server.address() + ": " + describe(cause) + unknownOutcome
                + "; this session is closed");
    }

    /** Whether {@link #backendFailed} ends the session rather than forwarding a server's refusal. */
    static boolean endsSession(Throwable cause) {
        return !(cause instanceof BackendFailure failure && failure.serverError() != null);
    }

    static String describe(Throwable cause) {
        return cause == null ? "unknown error" : cause.getMessage();
    }
}
