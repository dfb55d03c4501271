package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.wire.Buffers;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code EXPLAIN GANTRY ROUTE} through a whole session ({@link InProcessSession}): every row says in an operator's
 * words what it found, never a record's {@code toString} ({@code StatementClass[kind=READ, ...]}) or an
 * {@code Optional}.
 */
class ExplainRouteTest {

    private InProcessSession session;

    @BeforeEach
    void logIn() {
        session = new InProcessSession();
    }

    @AfterEach
    void close() {
        session.close();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"SELECT c FROM t WHERE id = 1", "INSERT INTO t VALUES (1)", "START TRANSACTION READ ONLY",
            "/*#mode=READONLY*/ SELECT c FROM t", "SELECT 1; SELECT @x", "SELECT c FROM t FOR UPDATE", "COMMIT",
            "SET NAMES utf8mb4", "/* nothing but a comment */"})
    void noRowHoldsRecordTextOrAnOptional(String statement) {
        Map<String, String> rows = explain(statement);
        assertThat(rows.keySet()).contains("statement", "session", "settings", "floor", "pending", "connections",
                session.primaryAddress(), session.replicaAddress(), "decision");
        rows.forEach((item, detail) -> assertThat(detail).as(item)
                .doesNotContain("Optional")
                .doesNotContainPattern("[A-Za-z]\\[") // Xxx[ of a record, or [x, y] of a list
                .doesNotContainPattern("\\[[^\\]]*=")
                .doesNotContain("_READ").doesNotContain("READ_"));
    }

    @Test
    void theStatementRowSaysWhatTheTextIs() {
        assertThat(explain("SELECT c FROM t WHERE id = 1")).containsEntry("statement", "a read, 1 statement, no hint");
        assertThat(explain("INSERT INTO t VALUES (1)")).containsEntry("statement", "a write, 1 statement, no hint");
        assertThat(explain("START TRANSACTION READ ONLY")).containsEntry("statement",
                "begins a read-only transaction, 1 statement, no hint");
        assertThat(explain("/*#mode=READONLY*/ SELECT c FROM t")).containsEntry("statement",
                "a read, 1 statement, hint mode=READONLY");
        assertThat(explain("SELECT 1; SELECT @x")).containsEntry("statement",
                "a read, 2 statements, no hint; it reads a user variable");
        assertThat(explain("SELECT c FROM t FOR UPDATE")).containsEntry("statement",
                "a write, 1 statement, no hint; it takes row locks (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE)");
        assertThat(explain("SET NAMES utf8mb4")).containsEntry("statement", "a session setting, 1 statement, no hint");
    }

    @Test
    void theDecisionRowSaysWhereAndWhy() {
        assertThat(explain("SELECT c FROM t WHERE id = 1")).containsEntry("decision",
                "the replica " + session.replicaAddress() + ": read on a replica picked by weight");
        assertThat(explain("SELECT c FROM t FOR UPDATE")).containsEntry("decision", "the primary "
                + session.primaryAddress() + ": not a read, as it takes row locks (FOR UPDATE, FOR SHARE, LOCK IN SHARE "
                + "MODE)");
        assertThat(explain("CREATE TEMPORARY TABLE tt (id INT)")).containsEntry("decision", "the primary "
                + session.primaryAddress() + ": not a read, as it creates or drops a temporary table, which exists on "
                + "one connection only; it pins the session to the primary from now on");
    }

    @Test
    void theSessionRowSaysItsStateInWords() {
        assertThat(explain("SELECT 1")).containsEntry("session",
                "autocommit on, no transaction, not pinned, no replica chosen yet, no statement run yet");
        session.command(session.queryFrame("SET @x = 1")).forEach(ByteBuf::release);
        assertThat(explain("SELECT 1").get("session")).isEqualTo("autocommit on, no transaction, pinned to the "
                + "primary: an earlier statement sets a user variable, no replica chosen yet, previous statement on "
                + session.primaryAddress());
        assertThat(explain("SELECT c FROM t")).containsEntry("decision", "the primary " + session.primaryAddress()
                + ": session pinned to the primary by an earlier statement that sets a user variable");
    }

    @Test
    void theReplicaChoiceSaysWhichPreferenceAppliesAndWhichReplicasAreClose() {
        Map<String, String> byWeight = explain("SELECT c FROM t");
        assertThat(byWeight.get("settings")).contains("gantry_follower_reads_prefer=weight");
        assertThat(byWeight).containsEntry("replica choice", "weight: a replica that qualifies is picked by weight");
        assertThat(byWeight.get(session.replicaAddress())).contains("round trip 0.10 ms smoothed");

        assertThat(rows("SET gantry_follower_reads_prefer = closest")).isEmpty();
        Map<String, String> closest = explain("SELECT c FROM t");
        assertThat(closest.get("settings")).contains("gantry_follower_reads_prefer=closest");
        assertThat(closest).containsEntry("replica choice", "closest: among the replicas that qualify, those whose "
                + "smoothed round trip is within 1.00 ms or 20 % (the larger) of the closest one's, then by weight; "
                + "close now: " + session.replicaAddress() + " (0.10 ms)");
        assertThat(closest).containsEntry("decision", "the replica " + session.replicaAddress()
                + ": read on a replica picked by weight among the closest by round trip");
    }

    @Test
    void showGantrySessionSaysThePreferenceItsChoiceAndDefaultBringsTheFlagBack() {
        assertThat(rows("SHOW GANTRY SESSION")).containsEntry("gantry_follower_reads_prefer", "weight")
                .containsEntry("replica_choice", "weight: a replica that qualifies is picked by weight");
        rows("SET SESSION gantry_follower_reads_prefer = 'CLOSEST'");
        assertThat(rows("SELECT @@gantry_follower_reads_prefer"))
                .containsEntry("closest", null); // one column: its value is the row's first field
        assertThat(rows("SHOW GANTRY SESSION").get("replica_choice")).startsWith("closest: ")
                .endsWith("close now: " + session.replicaAddress() + " (0.10 ms)");
        rows("SET gantry_follower_reads_prefer = DEFAULT");
        assertThat(rows("SHOW GANTRY SESSION")).containsEntry("gantry_follower_reads_prefer", "weight");
    }

    @Test
    void aPreferenceOtherThanClosestOrWeightIsRefusedWithTheValuesItTakes() {
        assertThat(error("SET gantry_follower_reads_prefer = nearest")).isEqualTo("Variable "
                + "'gantry_follower_reads_prefer' can't be set to the value of 'nearest' (closest, weight or DEFAULT)");
    }

    @Test
    void theCausalScopeRowSaysWhoseWritesAReadMustFind() {
        assertThat(explain("SELECT 1")).containsEntry("causal scope", "session: the session's own writes");
        session.command(session.queryFrame("SET gantry_read_your_writes_scope = token")).forEach(ByteBuf::release);
        assertThat(explain("SELECT 1")).containsEntry("causal scope", "token: the session's own writes");
        session.command(session.queryFrame("SET gantry_causal_token = 'user-42'")).forEach(ByteBuf::release);
        assertThat(explain("SELECT 1")).containsEntry("causal scope", "token:user-42: nothing written in it");
        assertThat(rows("SELECT @@gantry_read_your_writes_scope, @@gantry_causal_token"))
                .containsEntry("token", "user-42");
        assertThat(rows("SHOW GANTRY SESSION")).containsEntry("causal_scope", "token:user-42, nothing written");
        session.command(session.queryFrame("SET gantry_read_your_writes_scope = account")).forEach(ByteBuf::release);
        assertThat(explain("SELECT 1").get("causal scope")).startsWith("account:");
        assertThat(error("SET gantry_read_your_writes_scope = global")).isEqualTo("Variable "
                + "'gantry_read_your_writes_scope' can't be set to the value of 'global' (session, account, token or "
                + "DEFAULT)");
        assertThat(error("SET gantry_causal_token = ''")).contains("'gantry_causal_token' can't be set")
                .contains("a token of 1 to 256 characters");
        session.command(session.queryFrame("SET gantry_read_your_writes_scope = DEFAULT")).forEach(ByteBuf::release);
        assertThat(explain("SELECT 1")).containsEntry("causal scope", "session: the session's own writes");
    }

    /** The (item, detail) rows of {@code EXPLAIN GANTRY ROUTE statement}, in order. */
    private Map<String, String> explain(String statement) {
        return rows("EXPLAIN GANTRY ROUTE " + statement);
    }

    /** A text row's next field: 0xFB is SQL NULL. */
    private static String textOrNull(ByteBuf row) {
        if (row.getUnsignedByte(row.readerIndex()) == 0xFB) {
            row.skipBytes(1);
            return null;
        }
        return Buffers.readLenEncString(row, "detail");
    }

    /** The error message Gantry answers {@code sql} with. */
    private String error(String sql) {
        ByteBuf frame = session.queryFrame(sql);
        try {
            List<ByteBuf> written = session.command(frame);
            ByteBuf packet = written.get(0);
            packet.skipBytes(4);
            assertThat((int) packet.readUnsignedByte()).as("an error").isEqualTo(0xFF);
            packet.skipBytes(2 + 6); // the code, '#' and the SQLSTATE
            String message = packet.toString(StandardCharsets.UTF_8);
            written.forEach(ByteBuf::release);
            return message;
        } finally {
            frame.release();
        }
    }

    /**
     * The rows of a result set of one or two columns Gantry answers {@code sql} with, as (first, second) in order
     * (second null with one column); empty for an OK.
     */
    private Map<String, String> rows(String sql) {
        ByteBuf frame = session.queryFrame(sql);
        List<ByteBuf> payloads = new ArrayList<>();
        try {
            for (ByteBuf written : session.command(frame)) {
                while (written.readableBytes() >= 4) {
                    int length = written.readUnsignedMediumLE();
                    written.readByte(); // sequence id
                    payloads.add(written.readBytes(length));
                }
                written.release();
            }
            assertThat(payloads.get(0).getUnsignedByte(0)).as("a result set, not an error").isNotEqualTo(0xFF);
            Map<String, String> rows = new LinkedHashMap<>();
            if (payloads.get(0).getUnsignedByte(0) == 0x00) {
                return rows; // an OK
            }
            int columns = (int) Buffers.readLenEncInt(payloads.get(0), "column count");
            for (ByteBuf row : payloads.subList(1 + columns, payloads.size())) {
                if (row.getUnsignedByte(0) == 0xFE && row.readableBytes() < 0xFFFFFF) {
                    continue; // an EOF or the OK that ends the rows
                }
                rows.put(Buffers.readLenEncString(row, "item"), columns == 2 ? textOrNull(row) : null);
            }
            return rows;
        } finally {
            frame.release();
            payloads.forEach(ByteBuf::release);
        }
    }
}
