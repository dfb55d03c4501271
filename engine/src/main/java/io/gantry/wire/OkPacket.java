package io.gantry.wire;

import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SESSION_TRACK;
import static io.gantry.wire.CapabilityFlags.CLIENT_TRANSACTIONS;
import static io.gantry.wire.ServerStatus.SERVER_SESSION_STATE_CHANGED;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code OK_Packet}: a command succeeded. Under CLIENT_DEPRECATE_EOF the same layout with header
 * 0xFE also ends a result set in place of an EOF packet ({@link #eofReplacement()}).
 *
 * <p>With CLIENT_SESSION_TRACK the info string is length-encoded and may be left out when empty,
 * and, when SERVER_SESSION_STATE_CHANGED is set, session state changes follow (schema, system
 * variables such as MariaDB's {@code last_gtid}, MySQL GTIDs, transaction state).
 *
 * @param eofReplacement      header 0xFE (ends a result set) instead of 0x00
 * @param affectedRows        rows changed, unsigned 64 bits
 * @param lastInsertId        last AUTO_INCREMENT value, unsigned 64 bits
 * @param statusFlags         {@link ServerStatus} flags
 * @param warnings            warning count
 * @param info                human-readable status text, possibly empty
 * @param sessionStateChanges tracked changes; non-empty only with SERVER_SESSION_STATE_CHANGED
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_ok_packet.html">OK_Packet</a>
 */
public record OkPacket(
        boolean eofReplacement,
        long affectedRows,
        long lastInsertId,
        int statusFlags,
        int warnings,
        String info,
        List<SessionStateChange> sessionStateChanges) implements AuthExchangePacket {

    /** Header of an ordinary OK packet. */
    public static final int HEADER = 0x00;
    /** Header of an OK packet that replaces an EOF packet (CLIENT_DEPRECATE_EOF). */
    public static final int EOF_HEADER = 0xFE;

    /**
     * @throws IllegalArgumentException if a field is out of range, or session state changes are
     *                                  given without SERVER_SESSION_STATE_CHANGED
     */
    public OkPacket {
        Objects.requireNonNull(info, "info");
        sessionStateChanges = List.copyOf(sessionStateChanges);
        Checks.range("statusFlags", statusFlags, 0xFFFF);
        Checks.range("warnings", warnings, 0xFFFF);
        if (!sessionStateChanges.isEmpty() && !ServerStatus.has(statusFlags, SERVER_SESSION_STATE_CHANGED)) {
            throw new IllegalArgumentException("session state changes need SERVER_SESSION_STATE_CHANGED in statusFlags");
        }
    }

    /** An ordinary OK with no info and no session state changes. */
    public static OkPacket of(long affectedRows, long lastInsertId, int statusFlags, int warnings) {
        return new OkPacket(false, affectedRows, lastInsertId, statusFlags, warnings, "", List.of());
    }

    /**
     * The last insert id of an OK packet's payload, read in place without decoding the rest (and without moving the
     * buffer's reader index): what a session's {@code LAST_INSERT_ID()} is after the statement.
     */
    public static long lastInsertIdOf(ByteBuf payload) {
        int at = payload.readerIndex() + 1; // after the header
        at += lenEncLength(payload.getUnsignedByte(at)); // affected rows
        int first = payload.getUnsignedByte(at);
        return switch (first) {
            case 0xFC -> payload.getUnsignedShortLE(at + 1);
            case 0xFD -> payload.getUnsignedMediumLE(at + 1);
            case 0xFE -> payload.getLongLE(at + 1);
            default -> first;
        };
    }

    /**
     * Where an OK packet's outcome ends in its payload (an absolute index): the header, the affected rows and the
     * last insert id come before it, the status flags and the warning count right after it. Read in place.
     */
    public static int outcomeEnd(ByteBuf payload) {
        int at = payload.readerIndex() + 1;
        at += lenEncLength(payload.getUnsignedByte(at));
        return at + lenEncLength(payload.getUnsignedByte(at));
    }

    /** The length of a length-encoded integer that starts with {@code first}. */
    private static int lenEncLength(int first) {
        return switch (first) {
            case 0xFC -> 3;
            case 0xFD -> 4;
            case 0xFE -> 9;
            default -> 1;
        };
    }

    /**
     * Reads an OK packet (header 0x00 or 0xFE).
     *
     * @param capabilities the capabilities negotiated for the connection
     * @throws MalformedPacketException naming the field that could not be read
     */
    public static OkPacket decode(ByteBuf buf, int capabilities) {
        int header = Buffers.readInt1(buf, "OK.header");
        if (header != HEADER && header != EOF_HEADER) {
            throw new MalformedPacketException("OK.header", "expected 0x00 or 0xFE, found 0x" + Integer.toHexString(header));
        }
        long affected = Buffers.readLenEncInt(buf, "OK.affected_rows");
        long insertId = Buffers.readLenEncInt(buf, "OK.last_insert_id");
        int status = 0;
        int warnings = 0;
        if (CapabilityFlags.has(capabilities, CLIENT_PROTOCOL_41)) {
            status = Buffers.readInt2(buf, "OK.status_flags");
            warnings = Buffers.readInt2(buf, "OK.warnings");
        } else if (CapabilityFlags.has(capabilities, CLIENT_TRANSACTIONS)) {
            status = Buffers.readInt2(buf, "OK.status_flags");
        }
        String info;
        List<SessionStateChange> changes = List.of();
        if (CapabilityFlags.has(capabilities, CLIENT_SESSION_TRACK)) {
            // Servers leave the info out entirely when it is empty and no state changed.
            info = buf.isReadable() ? Buffers.readLenEncString(buf, "OK.info") : "";
            if (ServerStatus.has(status, SERVER_SESSION_STATE_CHANGED)) {
                changes = SessionStateChange.decodeAll(Buffers.readLenEncSlice(buf, "OK.session_state_info"));
            }
        } else {
            info = Buffers.readRestString(buf);
        }
        return new OkPacket(header == EOF_HEADER, affected, insertId, status, warnings, info, changes);
    }

    /**
     * Writes this packet.
     *
     * @param capabilities the capabilities negotiated for the connection
     * @throws IllegalArgumentException if session state changes are present but CLIENT_SESSION_TRACK
     *                                  is not negotiated
     */
    public void encode(ByteBuf buf, int capabilities) {
        boolean sessionTrack = CapabilityFlags.has(capabilities, CLIENT_SESSION_TRACK);
        if (!sessionStateChanges.isEmpty() && !sessionTrack) {
            throw new IllegalArgumentException("session state changes need CLIENT_SESSION_TRACK");
        }
        buf.writeByte(eofReplacement ? EOF_HEADER : HEADER);
        Buffers.writeLenEncInt(buf, affectedRows);
        Buffers.writeLenEncInt(buf, lastInsertId);
        if (CapabilityFlags.has(capabilities, CLIENT_PROTOCOL_41)) {
            buf.writeShortLE(statusFlags);
            buf.writeShortLE(warnings);
        } else if (CapabilityFlags.has(capabilities, CLIENT_TRANSACTIONS)) {
            buf.writeShortLE(statusFlags);
        }
        if (sessionTrack) {
            boolean stateChanged = ServerStatus.has(statusFlags, SERVER_SESSION_STATE_CHANGED);
            if (stateChanged || !info.isEmpty()) {
                Buffers.writeLenEncString(buf, info);
            }
            if (stateChanged) {
                ByteBuf block = buf.alloc().buffer();
                try {
                    SessionStateChange.encodeAll(sessionStateChanges, block);
                    Buffers.writeLenEncInt(buf, block.readableBytes());
                    buf.writeBytes(block);
                } finally {
                    block.release();
                }
            }
        } else {
            buf.writeCharSequence(info, StandardCharsets.UTF_8);
        }
    }

    /** True if a transaction is active after this statement. */
    public boolean inTransaction() {
        return ServerStatus.inTransaction(statusFlags);
    }

    /** True if another result follows this OK. */
    public boolean moreResultsExist() {
        return ServerStatus.moreResultsExist(statusFlags);
    }

    /** The last value reported for a tracked system variable, by name (case-insensitive). */
    public Optional<String> systemVariable(String name) {
        String found = null;
        for (SessionStateChange change : sessionStateChanges) {
            if (change instanceof SessionStateChange.SystemVariable v && v.name().equalsIgnoreCase(name)) {
                found = v.value();
            }
        }
        return Optional.ofNullable(found);
    }

    /**
     * The GTID(s) the session just committed, from either flavour: MySQL's SESSION_TRACK_GTIDS
     * entry or MariaDB's tracked {@code last_gtid} variable (e.g. {@code 0-33061-47}).
     */
    public Optional<String> trackedGtids() {
        for (SessionStateChange change : sessionStateChanges) {
            if (change instanceof SessionStateChange.Gtids g) {
                return Optional.of(g.gtids());
            }
        }
        return systemVariable("last_gtid").filter(v -> !v.isEmpty());
    }

    /** The new default schema, if this OK reports one. */
    public Optional<String> schema() {
        String found = null;
        for (SessionStateChange change : sessionStateChanges) {
            if (change instanceof SessionStateChange.Schema s) {
                found = s.name();
            }
        }
        return Optional.ofNullable(found);
    }
}
