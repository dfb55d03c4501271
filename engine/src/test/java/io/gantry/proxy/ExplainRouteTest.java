package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.wire.Buffers;
import io.netty.buffer.ByteBuf;
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

    /** The (item, detail) rows of {@code EXPLAIN GANTRY ROUTE statement}, in order. */
    private Map<String, String> explain(String statement) {
        ByteBuf frame = session.queryFrame("EXPLAIN GANTRY ROUTE " + statement);
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
            int columns = (int) Buffers.readLenEncInt(payloads.get(0), "column count");
            assertThat(columns).isEqualTo(2);
            Map<String, String> rows = new LinkedHashMap<>();
            for (ByteBuf row : payloads.subList(1 + columns, payloads.size())) {
                if (row.getUnsignedByte(0) == 0xFE && row.readableBytes() < 0xFFFFFF) {
                    continue; // an EOF or the OK that ends the rows
                }
                rows.put(Buffers.readLenEncString(row, "item"), Buffers.readLenEncString(row, "detail"));
            }
            return rows;
        } finally {
            frame.release();
            payloads.forEach(ByteBuf::release);
        }
    }
}
