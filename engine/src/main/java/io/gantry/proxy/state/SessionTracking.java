package io.gantry.proxy.state;

import static io.gantry.wire.CapabilityFlags.CLIENT_SESSION_TRACK;
import static io.gantry.wire.ServerStatus.SERVER_SESSION_STATE_CHANGED;

import io.gantry.gtid.Flavour;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.OkPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.ServerStatus;
import io.gantry.wire.ServerVersion;
import io.gantry.wire.SessionStateChange;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Gantry's own session tracking on a session's backend connections, and what of it the client sees.
 *
 * <p>Every backend connection asks for {@code CLIENT_SESSION_TRACK} and, once logged in, for two more tracked
 * items: the GTID each commit produced (MariaDB's {@code last_gtid}, MySQL's {@code session_track_gtids=OWN_GTID}),
 * so read-your-writes waits for exactly the session's own writes, and the transactions' default access mode
 * ({@code transaction_read_only}, {@code tx_read_only} before MariaDB 11.1), so a session
 * whose transactions are read-only by default has them run on a replica. The client sees OK packets as a direct
 * connection would show them: without session state at all if it did not negotiate {@code CLIENT_SESSION_TRACK},
 * and without Gantry's additions if it did, but for those it asked to track itself.
 */
public final class SessionTracking {

    /**
     * The session variable that holds the default access mode of the session's transactions: MariaDB renamed
     * {@code tx_read_only} to {@code transaction_read_only} in 11.1 (10.x knows only the old name, and a tracking
     * list naming a variable the server lacks is refused whole); MySQL 8 knows only the new one.
     */
    static final String READ_ONLY_VARIABLE = "transaction_read_only";
    static final String OLD_READ_ONLY_VARIABLE = "tx_read_only";

    /** Adds Gantry's items to the tracked system variables; {@code *} already tracks every variable. */
    private static final String TRACKED_VARIABLES = "session_track_system_variables = IF("
            + "@@session.session_track_system_variables = '*', '*', CONCAT_WS(',', "
            + "NULLIF(@@session.session_track_system_variables, ''), 'last_gtid', '%s'))";
    private static final String MARIADB_SETUP = "SET SESSION " + TRACKED_VARIABLES.formatted(READ_ONLY_VARIABLE);
    private static final String OLD_MARIADB_SETUP = "SET SESSION "
            + TRACKED_VARIABLES.formatted(OLD_READ_ONLY_VARIABLE);
    /** MySQL reports GTIDs through {@code session_track_gtids} (kept when the client asked for all of them). */
    private static final String MYSQL_SETUP = "SET SESSION session_track_gtids = IF(@@session.session_track_gtids = "
            + "'OFF', 'OWN_GTID', @@session.session_track_gtids), SESSION "
            + TRACKED_VARIABLES.replace(", 'last_gtid'", "").formatted(READ_ONLY_VARIABLE);

    /** Whether the client's own tracking leaves out {@code last_gtid}: then Gantry's is hidden from it. */
    private boolean hideLastGtid = true;
    /** Whether the client's own tracking leaves out {@code transaction_read_only}. */
    private boolean hideReadOnly = true;
    /** Whether the client's {@code session_track_gtids} is OFF (MySQL). */
    private boolean hideGtids = true;
    /** {@code transaction_read_only} of the session as last reported by a server (its transactions' default). */
    private boolean readOnlyByDefault;
    /** GTIDs the current command's commits produced, as reported; null when none was. */
    private List<String> ownGtids;

    /**
     * The statement that adds Gantry's items to what a connection tracks: run on a fresh connection, and again
     * after the client's own {@code SET session_track_...} (which replaces the list) ran or was replayed there.
     */
    public static String setupStatement(ServerVersion server) {
        if (!server.mariaDb()) {
            return MYSQL_SETUP;
        }
        return server.atLeast(11, 1, 0) ? MARIADB_SETUP : OLD_MARIADB_SETUP;
    }

    /** The query that reads what the client itself asked to track, after it set it. */
    public static String clientTrackingQuery(Flavour flavour) {
        return flavour == Flavour.MYSQL
                ? "SELECT @@session.session_track_system_variables, @@session.session_track_gtids"
                : "SELECT @@session.session_track_system_variables";
    }

    /** Whether a session-state statement sets tracking itself ({@code SET session_track_system_variables = ...}). */
    public static boolean setsTracking(String sql) {
        return sql.toLowerCase(Locale.ROOT).contains("session_track_");
    }

    /**
     * The client set its own tracking; {@code values} is what {@link #clientTrackingQuery} read back: from now on
     * the client sees those of Gantry's items it asked for itself.
     */
    public void clientTracks(List<String> values) {
        List<String> variables = new ArrayList<>();
        for (String name : values.get(0).split(",")) {
            variables.add(name.trim().toLowerCase(Locale.ROOT));
        }
        boolean all = variables.contains("*");
        hideLastGtid = !all && !variables.contains("last_gtid");
        hideReadOnly = !all && !variables.contains(READ_ONLY_VARIABLE) && !variables.contains(OLD_READ_ONLY_VARIABLE);
        hideGtids = values.size() < 2 || values.get(1).equalsIgnoreCase("OFF");
    }

    /** Whether the session's transactions are read-only unless they say otherwise ({@code transaction_read_only}). */
    public boolean readOnlyByDefault() {
        return readOnlyByDefault;
    }

    /** The GTIDs reported since the last call (the current command's commits), or null when none was. */
    public List<String> takeOwnGtids() {
        List<String> taken = ownGtids;
        ownGtids = null;
        return taken;
    }

    /** What the session's tracking knows, by value, for a take-over (between commands: no GTIDs of its own wait). */
    public record Kept(boolean hideLastGtid, boolean hideReadOnly, boolean hideGtids, boolean readOnlyByDefault) {
    }

    public Kept kept() {
        return new Kept(hideLastGtid, hideReadOnly, hideGtids, readOnlyByDefault);
    }

    /** Takes on what another process's session tracked ({@link #kept}). */
    public void restore(Kept kept) {
        hideLastGtid = kept.hideLastGtid();
        hideReadOnly = kept.hideReadOnly();
        hideGtids = kept.hideGtids();
        readOnlyByDefault = kept.readOnlyByDefault();
        ownGtids = null;
    }

    /** A COM_RESET_CONNECTION or a new login: the servers' session variables are back to their defaults. */
    public void reset() {
        hideLastGtid = true;
        hideReadOnly = true;
        hideGtids = true;
        readOnlyByDefault = false;
        ownGtids = null;
    }

    /**
     * Reads what an OK packet from a backend connection reports for Gantry and returns the packet as the client
     * should see it (the same packet when nothing changes; otherwise the old one is released, and the new one is
     * from {@code buffers}).
     *
     * @param backendCapabilities the capabilities in effect on the connection the packet came from
     * @param clientCapabilities  the capabilities the client negotiated with Gantry
     */
    public Packet onOk(Packet ok, int status, int backendCapabilities, int clientCapabilities,
                       ByteBufAllocator buffers) {
        if (!CapabilityFlags.has(backendCapabilities, CLIENT_SESSION_TRACK)) {
            return ok; // the client did not negotiate it either (the backend asks for it whenever it can)
        }
        boolean clientTracks = CapabilityFlags.has(clientCapabilities, CLIENT_SESSION_TRACK);
        boolean stateChanged = ServerStatus.has(status, SERVER_SESSION_STATE_CHANGED);
        if (!stateChanged) {
            // The common case, byte for byte what the client expects: servers write the info length-encoded
            // whether or not the client negotiated session tracking.
            return ok;
        }
        OkPacket decoded = OkPacket.decode(ok.payload().duplicate(), backendCapabilities);
        List<SessionStateChange> shown = new ArrayList<>(decoded.sessionStateChanges().size());
        for (SessionStateChange change : decoded.sessionStateChanges()) {
            boolean hidden = learn(change);
            if (clientTracks && !hidden) {
                shown.add(change);
            }
        }
        if (clientTracks && shown.size() == decoded.sessionStateChanges().size()) {
            return ok;
        }
        int shownStatus = shown.isEmpty() ? status & ~SERVER_SESSION_STATE_CHANGED : status;
        OkPacket forClient = new OkPacket(decoded.eofReplacement(), decoded.affectedRows(), decoded.lastInsertId(),
                shownStatus, decoded.warnings(), decoded.info(), shown);
        ByteBuf out = buffers.buffer(ok.payload().readableBytes());
        // Encoded as with tracking (the info length-encoded, as servers send it to every client); without state.
        forClient.encode(out, clientCapabilities | CLIENT_SESSION_TRACK);
        int sequenceId = ok.sequenceId();
        ok.release();
        return new Packet(sequenceId, out);
    }

    /** Notes what a tracked change tells Gantry; true when the client did not ask for it itself. */
    private boolean learn(SessionStateChange change) {
        if (change instanceof SessionStateChange.Gtids gtids) {
            ownGtid(gtids.gtids());
            return hideGtids;
        }
        if (change instanceof SessionStateChange.SystemVariable variable) {
            String name = variable.name().toLowerCase(Locale.ROOT);
            if (name.equals("last_gtid")) {
                ownGtid(variable.value());
                return hideLastGtid;
            }
            if (name.equals(READ_ONLY_VARIABLE) || name.equals(OLD_READ_ONLY_VARIABLE)) {
                String value = variable.value();
                readOnlyByDefault = value.equalsIgnoreCase("ON") || value.equals("1");
                return hideReadOnly;
            }
        }
        return false;
    }

    private void ownGtid(String gtids) {
        if (gtids.isEmpty()) {
            return;
        }
        if (ownGtids == null) {
            ownGtids = new ArrayList<>(1);
        }
        ownGtids.add(gtids);
    }
}
