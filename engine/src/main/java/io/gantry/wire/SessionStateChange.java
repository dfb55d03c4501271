package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One entry of the session state information an OK packet carries when CLIENT_SESSION_TRACK is
 * negotiated and SERVER_SESSION_STATE_CHANGED is set.
 *
 * <p>On the wire each entry is {@code int<1> type, string<lenenc> data}. Entries of types this
 * class does not know are skipped when decoding.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_ok_packet.html">OK_Packet (Session State Information)</a>
 */
public sealed interface SessionStateChange {

    /** A tracked system variable was set; MariaDB reports {@code last_gtid} this way. */
    int SESSION_TRACK_SYSTEM_VARIABLES = 0;
    /** The default schema changed. */
    int SESSION_TRACK_SCHEMA = 1;
    /** Some session state changed (the value is "1"). */
    int SESSION_TRACK_STATE_CHANGE = 2;
    /** MySQL's GTIDs of the last transaction(s) ({@code session_track_gtids}). */
    int SESSION_TRACK_GTIDS = 3;
    /** Transaction characteristics, as a SQL statement that would restore them. */
    int SESSION_TRACK_TRANSACTION_CHARACTERISTICS = 4;
    /** Transaction state, 8 characters (e.g. {@code T_______}). */
    int SESSION_TRACK_TRANSACTION_STATE = 5;

    /** The entry type byte. */
    int type();

    /** Writes the entry's data (without the type byte and outer length). */
    void writeData(ByteBuf buf);

    /** {@code name = value} for a tracked system variable. */
    record SystemVariable(String name, String value) implements SessionStateChange {
        public SystemVariable {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
        }

        @Override
        public int type() {
            return SESSION_TRACK_SYSTEM_VARIABLES;
        }

        @Override
        public void writeData(ByteBuf buf) {
            Buffers.writeLenEncString(buf, name);
            Buffers.writeLenEncString(buf, value);
        }
    }

    /** The new default schema. */
    record Schema(String name) implements SessionStateChange {
        public Schema {
            Objects.requireNonNull(name, "name");
        }

        @Override
        public int type() {
            return SESSION_TRACK_SCHEMA;
        }

        @Override
        public void writeData(ByteBuf buf) {
            Buffers.writeLenEncString(buf, name);
        }
    }

    /** Session state changed; {@code tracked} is the server's flag, normally "1". */
    record StateChange(String tracked) implements SessionStateChange {
        public StateChange {
            Objects.requireNonNull(tracked, "tracked");
        }

        @Override
        public int type() {
            return SESSION_TRACK_STATE_CHANGE;
        }

        @Override
        public void writeData(ByteBuf buf) {
            Buffers.writeLenEncString(buf, tracked);
        }
    }

    /** MySQL GTID set text; {@code encodingSpecification} is 0 (the only defined encoding). */
    record Gtids(int encodingSpecification, String gtids) implements SessionStateChange {
        public Gtids {
            Checks.range("encodingSpecification", encodingSpecification, 0xFF);
            Objects.requireNonNull(gtids, "gtids");
        }

        @Override
        public int type() {
            return SESSION_TRACK_GTIDS;
        }

        @Override
        public void writeData(ByteBuf buf) {
            buf.writeByte(encodingSpecification);
            Buffers.writeLenEncString(buf, gtids);
        }
    }

    /** Transaction characteristics (possibly empty). */
    record TransactionCharacteristics(String characteristics) implements SessionStateChange {
        public TransactionCharacteristics {
            Objects.requireNonNull(characteristics, "characteristics");
        }

        @Override
        public int type() {
            return SESSION_TRACK_TRANSACTION_CHARACTERISTICS;
        }

        @Override
        public void writeData(ByteBuf buf) {
            Buffers.writeLenEncString(buf, characteristics);
        }
    }

    /** Transaction state flags, e.g. {@code T_______} for an explicit transaction. */
    record TransactionState(String state) implements SessionStateChange {
        public TransactionState {
            Objects.requireNonNull(state, "state");
        }

        @Override
        public int type() {
            return SESSION_TRACK_TRANSACTION_STATE;
        }

        @Override
        public void writeData(ByteBuf buf) {
            Buffers.writeLenEncString(buf, state);
        }
    }

    /**
     * Reads every entry of a session state information block (all readable bytes of
     * {@code block}), skipping unknown types.
     *
     * @throws MalformedPacketException naming the entry field that could not be read
     */
    static List<SessionStateChange> decodeAll(ByteBuf block) {
        List<SessionStateChange> changes = new ArrayList<>();
        while (block.isReadable()) {
            int type = Buffers.readInt1(block, "OK.session_state_info.type");
            ByteBuf data = Buffers.readLenEncSlice(block, "OK.session_state_info.data");
            switch (type) {
                case SESSION_TRACK_SYSTEM_VARIABLES -> {
                    // One entry normally holds one pair; read as many as it holds.
                    do {
                        String name = Buffers.readLenEncString(data, "OK.session_state_info.system_variable.name");
                        String value = Buffers.readLenEncString(data, "OK.session_state_info.system_variable.value");
                        changes.add(new SystemVariable(name, value));
                    } while (data.isReadable());
                }
                case SESSION_TRACK_SCHEMA ->
                    changes.add(new Schema(Buffers.readLenEncString(data, "OK.session_state_info.schema")));
                case SESSION_TRACK_STATE_CHANGE ->
                    changes.add(new StateChange(Buffers.readLenEncString(data, "OK.session_state_info.state_change")));
                case SESSION_TRACK_GTIDS -> {
                    int spec = Buffers.readInt1(data, "OK.session_state_info.gtids.encoding_specification");
                    changes.add(new Gtids(spec, Buffers.readLenEncString(data, "OK.session_state_info.gtids")));
                }
                case SESSION_TRACK_TRANSACTION_CHARACTERISTICS -> changes.add(new TransactionCharacteristics(
                        Buffers.readLenEncString(data, "OK.session_state_info.transaction_characteristics")));
                case SESSION_TRACK_TRANSACTION_STATE -> changes.add(new TransactionState(
                        Buffers.readLenEncString(data, "OK.session_state_info.transaction_state")));
                default -> {
                    // Unknown tracker types are skipped, as the protocol asks of clients.
                }
            }
        }
        return List.copyOf(changes);
    }

    /** Writes entries as a session state information block (without its outer length). */
    static void encodeAll(List<SessionStateChange> changes, ByteBuf buf) {
        ByteBuf data = Unpooled.buffer();
        try {
            for (SessionStateChange change : changes) {
                data.clear();
                change.writeData(data);
                buf.writeByte(change.type());
                Buffers.writeLenEncInt(buf, data.readableBytes());
                buf.writeBytes(data);
            }
        } finally {
            data.release();
        }
    }
}
