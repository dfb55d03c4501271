package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.state.SessionTracking;
import io.gantry.wire.CommandType;
import io.gantry.wire.Packet;
import io.gantry.wire.ServerVersion;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The command handlers through a whole session without sockets or servers ({@link InProcessSession} plays them): what
 * reaches which server, and what Gantry answers itself. The integration tests ask the same of real servers; these
 * run in milliseconds.
 */
class CommandHandlersTest {

    private InProcessSession session;

    @BeforeEach
    void logIn() {
        session = new InProcessSession(true);
        session.received(session.primaryAddress()); // the login's own statements
    }

    @AfterEach
    void close() {
        session.close();
    }

    @Test
    void aPingIsAnsweredByGantryWhenNoConnectionHoldsState() {
        assertThat(answers(session.commandFrame(CommandType.COM_PING, new byte[0]))).containsExactly("OK");
        assertThat(session.backends().keySet()).containsExactly(session.primaryAddress());
        assertThat(session.received(session.primaryAddress())).isEmpty();
    }

    @Test
    void writesGoToThePrimaryAndReadsToTheReplica() throws InterruptedException {
        assertThat(answers(query("INSERT INTO t VALUES (1)"))).containsExactly("OK");
        assertThat(sentTo(session.primaryAddress())).containsExactly("INSERT INTO t VALUES (1)");
        // A sample of the replica taken after the write (the clock counts milliseconds) shows it has the write, so
        // read-your-writes lets it serve the read.
        Thread.sleep(5);
        session.samplePositions();
        assertThat(answers(query("SELECT c FROM t WHERE id = 1"))).first().isEqualTo("ROWS");
        assertThat(sentTo(session.replicaAddress())).containsExactly("SELECT c FROM t WHERE id = 1");
        assertThat(sentTo(session.primaryAddress())).isEmpty();
    }

    @Test
    void gantrysOwnSettingsNeverReachAServerAndChangeWhereReadsGo() {
        assertThat(answers(query("SET gantry_read_from_followers = OFF"))).containsExactly("OK");
        assertThat(answers(query("SELECT c FROM t WHERE id = 1"))).first().isEqualTo("ROWS");
        assertThat(sentTo(session.primaryAddress())).containsExactly("SELECT c FROM t WHERE id = 1");
        assertThat(session.backends()).doesNotContainKey(session.replicaAddress());
        assertThat(answers(query("SET gantry_follower_read_staleness_ms = 1"))).singleElement()
                .asString().startsWith("ERR");
        assertThat(session.received(session.primaryAddress())).isEmpty();
    }

    @Test
    void aSessionSettingIsReplayedOnTheReplicaBeforeItsFirstRead() {
        assertThat(answers(query("SET time_zone = '+01:00'"))).containsExactly("OK");
        assertThat(sentTo(session.primaryAddress())).containsExactly("SET time_zone = '+01:00'");
        answers(query("SELECT c FROM t WHERE id = 1"));
        assertThat(sentTo(session.replicaAddress())).as("replayed before the read")
                .containsExactly("SET time_zone = '+01:00'", "SELECT c FROM t WHERE id = 1");
    }

    @Test
    void connectionIdIsTheSessionsOwnWhicheverServerRunsIt() {
        answers(query("SELECT CONNECTION_ID()"));
        List<String> sent = new ArrayList<>(session.received(session.replicaAddress()));
        sent.addAll(session.received(session.primaryAddress()));
        assertThat(sent).noneMatch(line -> line.contains("CONNECTION_ID()"))
                .anyMatch(line -> line.startsWith("SELECT ") && line.matches("SELECT \\d+.*"));
    }

    @Test
    void aPreparedConnectionIdIsTheSessionsOwnOnEveryServerThatPreparesIt() throws InterruptedException {
        long statement = session.prepare("SELECT CONNECTION_ID() FROM t WHERE id = ?");
        assertThat(sentTo(session.primaryAddress())).singleElement().asString()
                .matches("SELECT \\d+ FROM t WHERE id = \\?");
        Thread.sleep(5);
        session.samplePositions();
        // A read with the id written in: it may run on the replica, which prepares the same text first.
        assertThat(answers(session.executeFrame(statement, 1, true))).first().isEqualTo("ROWS");
        assertThat(sentTo(session.replicaAddress())).first().asString().matches("SELECT \\d+ FROM t WHERE id = \\?");
    }

    @Test
    void anUnknownCommandIsAnErrorAndTheSessionGoesOn() {
        assertThat(answers(session.commandFrame(CommandType.COM_BINLOG_DUMP_GTID, new byte[8]))).singleElement()
                .isEqualTo("ERR 1047");
        assertThat(answers(query("INSERT INTO t VALUES (2)"))).containsExactly("OK");
    }

    @Test
    void anExecuteOfAStatementNeverPreparedIsRefusedWithoutAServer() {
        assertThat(answers(session.executeFrame(99, 1, true))).singleElement().isEqualTo("ERR 1243");
        assertThat(session.received(session.primaryAddress())).isEmpty();
    }

    @Test
    void aReadWhoseReplicaIsFoundDownBeforeItAnsweredRunsAgainOnThePrimary() throws InterruptedException {
        Thread.sleep(5);
        session.samplePositions();
        assertThat(answers(query("SELECT c FROM t WHERE id = 1"))).first().isEqualTo("ROWS");
        assertThat(sentTo(session.replicaAddress())).containsExactly("SELECT c FROM t WHERE id = 1");
        ByteBuf read = query("SELECT c FROM t WHERE id = 2");
        session.send(read);
        read.release();
        assertThat(sentTo(session.replicaAddress())).isEmpty(); // recorded only once answered: it is in flight
        session.replicaFoundDown();
        assertThat(describe(session.served())).first().isEqualTo("ROWS");
        assertThat(sentTo(session.primaryAddress())).containsExactly("SELECT c FROM t WHERE id = 2");
        assertThat(answers(query("SELECT c FROM t WHERE id = 3"))).first().isEqualTo("ROWS");
    }

    @Test
    void anExecutionWhoseReplicaIsFoundDownBeforeItAnsweredRunsAgainOnThePrimary() throws InterruptedException {
        long statement = session.prepare("SELECT c FROM t WHERE id = ?");
        Thread.sleep(5);
        session.samplePositions();
        assertThat(answers(session.executeFrame(statement, 1, true))).first().isEqualTo("ROWS");
        assertThat(sentTo(session.replicaAddress())).containsExactly("SELECT c FROM t WHERE id = ?",
                "COM_STMT_EXECUTE");
        session.received(session.primaryAddress());
        ByteBuf execute = session.executeFrame(statement, 2, false);
        session.send(execute);
        execute.release();
        session.replicaFoundDown();
        assertThat(describe(session.served())).first().isEqualTo("ROWS");
        // Prepared there at the client's prepare: the execution goes as it is, with the types the replica had got.
        assertThat(sentTo(session.primaryAddress())).containsExactly("COM_STMT_EXECUTE");
    }

    // ---- helpers ---------------------------------------------------------------------------------------------------

    /** What the server at {@code address} was sent for the client, without Gantry's own tracking set-up. */
    private List<String> sentTo(String address) {
        String tracking = SessionTracking.setupStatement(ServerVersion.parse(InProcessSession.SERVER_VERSION));
        return session.received(address).stream().filter(line -> !line.equals(tracking)).toList();
    }

    private ByteBuf query(String sql) {
        return session.queryFrame(sql);
    }

    /** What the client got for one command: "OK", "ERR <code>", or "ROWS" for a result set, a line a packet. */
    private List<String> answers(ByteBuf frames) {
        try {
            return describe(session.command(frames));
        } finally {
            frames.release();
        }
    }

    /** What Gantry wrote to the client, as {@link #answers} says it (the buffers are released). */
    private static List<String> describe(List<ByteBuf> writes) {
        List<String> out = new ArrayList<>();
        for (ByteBuf written : writes) {
            try {
                while (written.readableBytes() >= Packet.HEADER_SIZE) {
                    int length = written.readUnsignedMediumLE();
                    written.readByte(); // sequence id
                    ByteBuf payload = written.readSlice(length);
                    out.add(describe(payload));
                }
            } finally {
                written.release();
            }
        }
        return out.isEmpty() ? out : collapseResultSet(out);
    }

    private static String describe(ByteBuf payload) {
        int header = payload.getUnsignedByte(0);
        if (header == 0x00 && payload.readableBytes() >= 7) {
            return "OK";
        }
        if (header == 0xFF) {
            return "ERR " + payload.getUnsignedShortLE(1);
        }
        return "PACKET " + payload.toString(StandardCharsets.ISO_8859_1).length();
    }

    /** A result set (column count, definitions, rows, end) as the one word "ROWS". */
    private static List<String> collapseResultSet(List<String> packets) {
        return packets.get(0).startsWith("PACKET") ? List.of("ROWS") : packets;
    }
}
