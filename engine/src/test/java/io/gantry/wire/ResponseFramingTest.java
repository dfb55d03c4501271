package io.gantry.wire;

import static io.gantry.wire.ResponseFraming.PacketKind.COLUMN_COUNT;
import static io.gantry.wire.ResponseFraming.PacketKind.COLUMN_DEFINITION;
import static io.gantry.wire.ResponseFraming.PacketKind.PARAMETER_DEFINITION;
import static io.gantry.wire.ResponseFraming.PacketKind.ROW;
import static io.gantry.wire.ResponseFraming.PacketKind.STMT_PREPARE_OK;
import static io.gantry.wire.ResponseFraming.Progress.AWAITING_CLIENT;
import static io.gantry.wire.ResponseFraming.Progress.COMPLETE;
import static io.gantry.wire.ResponseFraming.Progress.MORE;
import static io.gantry.wire.ServerStatus.SERVER_MORE_RESULTS_EXISTS;
import static io.gantry.wire.ServerStatus.SERVER_PS_OUT_PARAMS;
import static io.gantry.wire.ServerStatus.SERVER_SESSION_STATE_CHANGED;
import static io.gantry.wire.ServerStatus.SERVER_STATUS_AUTOCOMMIT;
import static io.gantry.wire.ServerStatus.SERVER_STATUS_CURSOR_EXISTS;
import static io.gantry.wire.ServerStatus.SERVER_STATUS_IN_TRANS;
import static io.gantry.wire.ServerStatus.SERVER_STATUS_LAST_ROW_SENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.wire.ResponseFraming.PacketKind;
import io.gantry.wire.ResponseFraming.Progress;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ResponseFramingTest {

    private static final int BASE = CapabilityFlags.CLIENT_PROTOCOL_41 | CapabilityFlags.CLIENT_TRANSACTIONS
            | CapabilityFlags.CLIENT_SECURE_CONNECTION | CapabilityFlags.CLIENT_SESSION_TRACK
            | CapabilityFlags.CLIENT_MULTI_STATEMENTS | CapabilityFlags.CLIENT_MULTI_RESULTS
            | CapabilityFlags.CLIENT_PS_MULTI_RESULTS | CapabilityFlags.CLIENT_LOCAL_FILES;
    private static final int AUTOCOMMIT = SERVER_STATUS_AUTOCOMMIT;

    // ---- COM_QUERY ---------------------------------------------------------------------------

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void queryAnsweredByOkIsCompleteAtOnce(boolean deprecateEof) {
        Script script = new Script(deprecateEof).complete(ok(AUTOCOMMIT | SERVER_STATUS_IN_TRANS, deprecateEof));
        ResponseFraming framing = script.run(CommandType.COM_QUERY);
        assertThat(framing.lastPacketKind()).isEqualTo(PacketKind.OK);
        assertThat(framing.serverStatus()).isEqualTo(AUTOCOMMIT | SERVER_STATUS_IN_TRANS);
        assertThat(ServerStatus.inTransaction(framing.serverStatus())).isTrue();
        assertThat(framing.resultsCompleted()).isEqualTo(1);
        assertThat(framing.failed()).isFalse();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void queryAnsweredByErrFailsWithoutStatus(boolean deprecateEof) {
        ResponseFraming framing = new Script(deprecateEof).complete(err(1064)).run(CommandType.COM_QUERY);
        assertThat(framing.failed()).isTrue();
        assertThat(framing.lastPacketKind()).isEqualTo(PacketKind.ERR);
        assertThat(framing.serverStatus()).isEqualTo(ResponseFraming.NO_STATUS);
        assertThat(framing.moreResultsExist()).isFalse();
    }

    @Test
    void warningsAreReadFromTheOkThatEndsTheStatement() {
        byte[] okWithWarnings = CodecAssertions.bytes(b -> new OkPacket(false, 1, 0, AUTOCOMMIT, 3, "", List.of())
                .encode(b, BASE));
        assertThat(new Script(false).complete(okWithWarnings).run(CommandType.COM_QUERY).warnings()).isEqualTo(3);
        assertThat(new Script(false).complete(ok(AUTOCOMMIT, false)).run(CommandType.COM_QUERY).warnings()).isZero();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void warningsAreReadFromTheTerminatorAfterTheRows(boolean deprecateEof) {
        byte[] terminator = deprecateEof
                ? CodecAssertions.bytes(b -> new OkPacket(true, 0, 0, AUTOCOMMIT, 2, "", List.of()).encode(b, BASE))
                : CodecAssertions.bytes(new EofPacket(2, AUTOCOMMIT)::encode);
        Script script = new Script(deprecateEof).more(columnCount(1)).more(columnDefinition("a"));
        if (!deprecateEof) {
            script.more(eof(AUTOCOMMIT));
        }
        script.more(textRow("x")).complete(terminator);
        assertThat(script.run(CommandType.COM_QUERY).warnings()).isEqualTo(2);
    }

    /** What ROW_COUNT() and FOUND_ROWS() read after a response: the server's rules, checked against MariaDB 11.4. */
    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void rowCountAndRowsOfTheLastResultSetAreWhatTheServerKeepsForTheSession(boolean deprecateEof) {
        byte[] okOfThree = CodecAssertions.bytes(b -> new OkPacket(false, 3, 0, AUTOCOMMIT, 0, "", List.of())
                .encode(b, BASE));
        ResponseFraming insert = new Script(deprecateEof).complete(okOfThree).run(CommandType.COM_QUERY);
        assertThat(insert.rowCount()).isEqualTo(3);
        assertThat(insert.rowsOfLastResultSet()).isEqualTo(ResponseFraming.NO_RESULT_SET);

        ResponseFraming select = new Script(deprecateEof).textResultSet(2, 4, AUTOCOMMIT).run(CommandType.COM_QUERY);
        assertThat(select.rowCount()).isEqualTo(-1);
        assertThat(select.rowsOfLastResultSet()).isEqualTo(4);

        ResponseFraming empty = new Script(deprecateEof).textResultSet(1, 0, AUTOCOMMIT).run(CommandType.COM_QUERY);
        assertThat(empty.rowCount()).isEqualTo(-1);
        assertThat(empty.rowsOfLastResultSet()).isZero();

        // SELECT (5 rows); UPDATE (3 rows): the UPDATE's count, and the SELECT's rows for FOUND_ROWS()
        byte[] okOfThreeMore = CodecAssertions.bytes(b -> new OkPacket(false, 3, 0, AUTOCOMMIT, 0, "", List.of())
                .encode(b, BASE));
        ResponseFraming both = new Script(deprecateEof).textResultSet(1, 5, AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS)
                .complete(okOfThreeMore).run(CommandType.COM_QUERY);
        assertThat(both.rowCount()).isEqualTo(3);
        assertThat(both.rowsOfLastResultSet()).isEqualTo(5);
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void textResultSetEndsAtTheTerminatorAfterTheRows(boolean deprecateEof) {
        Script script = new Script(deprecateEof).textResultSet(2, 3, AUTOCOMMIT | SERVER_STATUS_IN_TRANS);
        ResponseFraming framing = script.run(CommandType.COM_QUERY);
        List<PacketKind> expected = new ArrayList<>(List.of(COLUMN_COUNT, COLUMN_DEFINITION, COLUMN_DEFINITION));
        if (!deprecateEof) {
            expected.add(PacketKind.EOF);
        }
        expected.addAll(List.of(ROW, ROW, ROW, deprecateEof ? PacketKind.OK : PacketKind.EOF));
        assertThat(script.kinds).containsExactlyElementsOf(expected);
        assertThat(framing.serverStatus()).isEqualTo(AUTOCOMMIT | SERVER_STATUS_IN_TRANS);
        assertThat(framing.resultsCompleted()).isEqualTo(1);
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void emptyResultSetEndsRightAfterTheMetadata(boolean deprecateEof) {
        new Script(deprecateEof).textResultSet(1, 0, AUTOCOMMIT).run(CommandType.COM_QUERY);
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void resultsChainWhileMoreResultsExist(boolean deprecateEof) {
        Script script = new Script(deprecateEof)
                .textResultSet(1, 2, AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS)
                .textResultSet(3, 1, AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS)
                .complete(ok(AUTOCOMMIT, false));
        ResponseFraming framing = script.run(CommandType.COM_QUERY);
        assertThat(framing.resultsCompleted()).isEqualTo(3);
        assertThat(framing.serverStatus()).isEqualTo(AUTOCOMMIT);
        assertThat(framing.moreResultsExist()).isFalse();
    }

    @Test
    void moreResultsExistIsVisibleBetweenResults() {
        ResponseFraming framing = ResponseFraming.forCommand(CommandType.COM_QUERY, BASE);
        assertThat(feed(framing, ok(AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS, false))).isEqualTo(MORE);
        assertThat(framing.moreResultsExist()).isTrue();
        assertThat(framing.isComplete()).isFalse();
        assertThat(feed(framing, ok(AUTOCOMMIT, false))).isEqualTo(COMPLETE);
        assertThat(framing.moreResultsExist()).isFalse();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void anErrEndsAMultiStatementResponse(boolean deprecateEof) {
        ResponseFraming framing = new Script(deprecateEof)
                .more(ok(AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS, false))
                .textResultSet(1, 1, AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS)
                .complete(err(1146))
                .run(CommandType.COM_QUERY);
        assertThat(framing.failed()).isTrue();
        assertThat(framing.resultsCompleted()).isEqualTo(2);
        assertThat(framing.serverStatus()).as("ERR carries no status").isEqualTo(AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS);
        assertThat(framing.moreResultsExist()).isFalse();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void anErrCanReplaceTheTerminatorAfterSomeRows(boolean deprecateEof) {
        Script script = new Script(deprecateEof).more(columnCount(1)).more(columnDefinition("a"));
        if (!deprecateEof) {
            script.more(eof(AUTOCOMMIT));
        }
        ResponseFraming framing = script.more(textRow("1")).complete(err(1317)).run(CommandType.COM_QUERY);
        assertThat(framing.failed()).isTrue();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void localInfileRequestWaitsForTheClientThenTakesOkOrErr(boolean deprecateEof) {
        ResponseFraming framing = new Script(deprecateEof)
                .awaiting(localInfile("/tmp/data.csv"))
                .complete(ok(AUTOCOMMIT, false))
                .run(CommandType.COM_QUERY);
        assertThat(framing.resultsCompleted()).isEqualTo(1);

        ResponseFraming inMulti = new Script(deprecateEof)
                .more(ok(AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS, false))
                .awaiting(localInfile("f"))
                .complete(err(2))
                .run(CommandType.COM_QUERY);
        assertThat(inMulti.failed()).isTrue();
    }

    @Test
    void withoutDeprecateEofA0xFeRowOfNineBytesIsARowNotAnEof() {
        byte[] row = {(byte) 0xFE, 1, 2, 3, 4, 5, 6, 7, 8};
        Script script = new Script(false).more(columnCount(1)).more(columnDefinition("a")).more(eof(AUTOCOMMIT))
                .more(row).complete(eof(AUTOCOMMIT));
        script.run(CommandType.COM_QUERY);
        assertThat(script.kinds.get(3)).isEqualTo(ROW);
    }

    @Test
    void withDeprecateEofA0xFeRowIsAtLeast16MiBAndStillARow() {
        ResponseFraming framing = ResponseFraming.forCommand(CommandType.COM_QUERY, caps(true));
        feed(framing, columnCount(1));
        feed(framing, columnDefinition("blob"));
        // A text value of 2^24 bytes has the 0xFE length prefix: the row starts with 0xFE.
        ByteBuf row = Unpooled.buffer(1 + 8 + (1 << 24));
        row.writeByte(0xFE);
        row.writeLongLE(1L << 24);
        row.writerIndex(row.capacity());
        assertThat(framing.accept(row)).isEqualTo(MORE);
        assertThat(framing.lastPacketKind()).isEqualTo(ROW);
        row.release();
        assertThat(feed(framing, okEof(AUTOCOMMIT))).isEqualTo(COMPLETE);
    }

    @Test
    void withDeprecateEofALongOkCarryingSessionStateStillEndsTheRows() {
        OkPacket ok = new OkPacket(true, 0, 0, AUTOCOMMIT | SERVER_SESSION_STATE_CHANGED, 0, "",
                List.of(new SessionStateChange.SystemVariable("last_gtid", "0-33061-47")));
        byte[] terminator = CodecAssertions.bytes(b -> ok.encode(b, caps(true)));
        assertThat(terminator.length).isGreaterThan(9);
        ResponseFraming framing = new Script(true).more(columnCount(1)).more(columnDefinition("a")).more(textRow("x"))
                .complete(terminator).run(CommandType.COM_QUERY);
        assertThat(framing.lastPacketKind()).isEqualTo(PacketKind.OK);
        assertThat(framing.serverStatus()).isEqualTo(AUTOCOMMIT | SERVER_SESSION_STATE_CHANGED);
    }

    @Test
    void progressReportsDoNotEndTheResponse() {
        byte[] progress = {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 1, 1, 2, 0x10, 0x27, 0, 0};
        Script script = new Script(false).more(progress).more(progress).complete(ok(AUTOCOMMIT, false));
        ResponseFraming framing = script.run(CommandType.COM_QUERY);
        assertThat(script.kinds).startsWith(PacketKind.PROGRESS_REPORT, PacketKind.PROGRESS_REPORT);
        assertThat(framing.failed()).isFalse();
    }

    // ---- prepared statements -----------------------------------------------------------------

    @ParameterizedTest(name = "params={0} columns={1} deprecateEof={2}")
    @CsvSource({
        "2, 3, false", "2, 3, true", "0, 2, false", "0, 2, true", "1, 0, false", "1, 0, true", "0, 0, false",
        "0, 0, true",
    })
    void prepareResponseHasParameterThenColumnDefinitions(int params, int columns, boolean deprecateEof) {
        Script script = new Script(deprecateEof);
        script.packet(prepareOk(params, columns));
        for (int i = 0; i < params; i++) {
            script.packet(columnDefinition("?"));
        }
        if (params > 0 && !deprecateEof) {
            script.packet(eof(AUTOCOMMIT));
        }
        for (int i = 0; i < columns; i++) {
            script.packet(columnDefinition("c" + i));
        }
        if (columns > 0 && !deprecateEof) {
            script.packet(eof(AUTOCOMMIT));
        }
        script.lastCompletes();
        script.run(CommandType.COM_STMT_PREPARE);
        assertThat(script.kinds.get(0)).isEqualTo(STMT_PREPARE_OK);
        assertThat(script.kinds.stream().filter(k -> k == PARAMETER_DEFINITION)).hasSize(params);
    }

    @Test
    void prepareAnsweredByErr() {
        assertThat(new Script(false).complete(err(1064)).run(CommandType.COM_STMT_PREPARE).failed()).isTrue();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void executeReturnsABinaryResultSetOrOk(boolean deprecateEof) {
        new Script(deprecateEof).binaryResultSet(3, 2, AUTOCOMMIT).run(CommandType.COM_STMT_EXECUTE);
        new Script(deprecateEof).complete(ok(AUTOCOMMIT, false)).run(CommandType.COM_STMT_EXECUTE);
        new Script(deprecateEof).binaryResultSet(1, 1, AUTOCOMMIT).run(CommandType.COM_STMT_BULK_EXECUTE);
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void executeOpeningACursorEndsAfterTheColumnDefinitions(boolean deprecateEof) {
        int status = AUTOCOMMIT | SERVER_STATUS_CURSOR_EXISTS;
        Script script = new Script(deprecateEof).more(columnCount(2)).more(columnDefinition("a"))
                .more(columnDefinition("b")).complete(deprecateEof ? okEof(status) : eof(status));
        ResponseFraming framing = script.run(CommandType.COM_STMT_EXECUTE);
        assertThat(ServerStatus.has(framing.serverStatus(), SERVER_STATUS_CURSOR_EXISTS)).isTrue();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void fetchReturnsRowsUntilTheTerminator(boolean deprecateEof) {
        int status = AUTOCOMMIT | SERVER_STATUS_CURSOR_EXISTS | SERVER_STATUS_LAST_ROW_SENT;
        ResponseFraming framing = new Script(deprecateEof).more(binaryRow(2)).more(binaryRow(2))
                .complete(end(status, deprecateEof)).run(CommandType.COM_STMT_FETCH);
        assertThat(ServerStatus.has(framing.serverStatus(), SERVER_STATUS_LAST_ROW_SENT)).isTrue();
        assertThat(new Script(deprecateEof).complete(err(1243)).run(CommandType.COM_STMT_FETCH).failed()).isTrue();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void callWithOutParametersChainsTheOutParameterResultAndTheFinalOk(boolean deprecateEof) {
        ResponseFraming framing = new Script(deprecateEof)
                .binaryResultSet(2, 1, AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS)
                .binaryResultSet(1, 1, AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS | SERVER_PS_OUT_PARAMS)
                .complete(ok(AUTOCOMMIT, false))
                .run(CommandType.COM_STMT_EXECUTE);
        assertThat(framing.resultsCompleted()).isEqualTo(3);
    }

    // ---- other commands ----------------------------------------------------------------------

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void fieldListIsColumnDefinitionsUntilTheTerminator(boolean deprecateEof) {
        Script script = new Script(deprecateEof).more(columnDefinition("id")).more(columnDefinition("name"))
                .complete(end(AUTOCOMMIT, deprecateEof));
        script.run(CommandType.COM_FIELD_LIST);
        assertThat(script.kinds).startsWith(COLUMN_DEFINITION, COLUMN_DEFINITION);
        assertThat(new Script(deprecateEof).complete(err(1146)).run(CommandType.COM_FIELD_LIST).failed()).isTrue();
    }

    @Test
    void statisticsIsExactlyOneStringPacket() {
        byte[] text = "Uptime: 10  Threads: 1  Questions: 5".getBytes(StandardCharsets.US_ASCII);
        ResponseFraming framing = new Script(false).complete(text).run(CommandType.COM_STATISTICS);
        assertThat(framing.lastPacketKind()).isEqualTo(PacketKind.STATISTICS);
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void simpleCommandsAreAnsweredByOneOkEofOrErr(boolean deprecateEof) {
        new Script(deprecateEof).complete(ok(AUTOCOMMIT, false)).run(CommandType.COM_PING);
        new Script(deprecateEof).complete(ok(AUTOCOMMIT | SERVER_SESSION_STATE_CHANGED, false))
                .run(CommandType.COM_INIT_DB);
        new Script(deprecateEof).complete(ok(AUTOCOMMIT, false)).run(CommandType.COM_RESET_CONNECTION);
        new Script(deprecateEof).complete(end(AUTOCOMMIT, deprecateEof)).run(CommandType.COM_SET_OPTION);
        new Script(deprecateEof).complete(err(1047)).run(CommandType.UNKNOWN);
        ResponseFraming reset = new Script(deprecateEof).complete(err(1243)).run(CommandType.COM_STMT_RESET);
        assertThat(reset.failed()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"COM_QUIT", "COM_STMT_CLOSE", "COM_STMT_SEND_LONG_DATA"})
    void commandsWithoutAResponseAreCompleteFromTheStart(CommandType command) {
        assertThat(ResponseFraming.expectsResponse(command)).isFalse();
        ResponseFraming framing = ResponseFraming.forCommand(command, BASE);
        assertThat(framing.isComplete()).isTrue();
        assertThat(framing.progress()).isEqualTo(COMPLETE);
        assertThatThrownBy(() -> feed(framing, ok(AUTOCOMMIT, false)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already complete");
        assertThat(ResponseFraming.expectsResponse(CommandType.COM_QUERY)).isTrue();
    }

    @Test
    void changeUserFollowsTheAuthenticationExchange() {
        byte[] authSwitch = CodecAssertions.bytes(new AuthSwitchRequest(CachingSha2Password.PLUGIN_NAME,
                "01234567890123456789\0".getBytes(StandardCharsets.US_ASCII))::encode);
        ResponseFraming fast = new Script(false)
                .awaiting(authSwitch)
                .more(new byte[] {1, CachingSha2Password.FAST_AUTH_SUCCESS})
                .complete(ok(AUTOCOMMIT, false))
                .run(CommandType.COM_CHANGE_USER);
        assertThat(fast.lastPacketKind()).isEqualTo(PacketKind.OK);

        byte[] pem = "\u0001-----BEGIN PUBLIC KEY-----\n...".getBytes(StandardCharsets.US_ASCII);
        new Script(false)
                .awaiting(new byte[] {1, CachingSha2Password.PERFORM_FULL_AUTHENTICATION})
                .awaiting(pem)
                .complete(err(1045))
                .run(CommandType.COM_CHANGE_USER);
    }

    @Test
    void binlogDumpStreamsEventsUntilEof() {
        byte[] event = {0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
        new Script(false).more(event).more(event).complete(eof(0)).run(CommandType.COM_BINLOG_DUMP_GTID);
        new Script(false).more(event).complete(err(1236)).run(CommandType.COM_BINLOG_DUMP);
    }

    // ---- refusals ----------------------------------------------------------------------------

    @Test
    void misplacedPacketsAreMalformedWithTheFieldNamed() {
        ResponseFraming missingEof = ResponseFraming.forCommand(CommandType.COM_QUERY, caps(false));
        feed(missingEof, columnCount(1));
        feed(missingEof, columnDefinition("a"));
        assertThatThrownBy(() -> feed(missingEof, textRow("value")))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessageStartingWith("EOF after column definitions: expected an EOF packet, found header 0x5");

        ResponseFraming empty = ResponseFraming.forCommand(CommandType.COM_QUERY, BASE);
        assertThatThrownBy(() -> feed(empty, new byte[0]))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessage("COM_QUERY response: empty packet while expecting OK, ERR, LOCAL INFILE or a column count");

        assertThatThrownBy(() -> feed(ResponseFraming.forCommand(CommandType.COM_QUERY, BASE), new byte[] {(byte) 0xFC, 1}))
                .isInstanceOf(MalformedPacketException.class).hasMessageStartingWith("column_count: needs 2 bytes");
        assertThatThrownBy(() -> feed(ResponseFraming.forCommand(CommandType.COM_STMT_PREPARE, BASE), new byte[] {5, 1}))
                .hasMessageStartingWith("COM_STMT_PREPARE_OK.status: expected 0x00, found 0x5");
        assertThatThrownBy(() -> feed(ResponseFraming.forCommand(CommandType.COM_QUERY, BASE), new byte[] {(byte) 0xFF, 1}))
                .hasMessageStartingWith("ERR.error_code");
        assertThatThrownBy(() -> feed(ResponseFraming.forCommand(CommandType.COM_PING, BASE), new byte[] {3, 1, 2}))
                .hasMessageStartingWith("COM_PING response: expected OK, EOF or ERR, found header 0x3");
        assertThatThrownBy(() -> feed(ResponseFraming.forCommand(CommandType.COM_QUERY, BASE), new byte[] {0, 0, 0}))
                .hasMessageStartingWith("OK.status_flags: needs 2 bytes");

        ResponseFraming done = ResponseFraming.forCommand(CommandType.COM_PING, BASE);
        feed(done, ok(AUTOCOMMIT, false));
        assertThatThrownBy(() -> feed(done, ok(AUTOCOMMIT, false)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("COM_PING is already complete");
    }

    @Test
    void capabilitiesThatChangeTheShapeAreRefusedUpFront() {
        assertThatThrownBy(() -> ResponseFraming.forCommand(CommandType.COM_QUERY, CapabilityFlags.CLIENT_SECURE_CONNECTION))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CLIENT_PROTOCOL_41");
        assertThatThrownBy(() -> ResponseFraming.forCommand(CommandType.COM_QUERY,
                BASE | CapabilityFlags.CLIENT_OPTIONAL_RESULTSET_METADATA))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CLIENT_OPTIONAL_RESULTSET_METADATA");
        assertThatThrownBy(() -> ResponseFraming.forCommand(CommandType.COM_STMT_EXECUTE, BASE,
                CapabilityFlags.MARIADB_CLIENT_CACHE_METADATA))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MARIADB_CLIENT_CACHE_METADATA");
        assertThat(ResponseFraming.forCommand(CommandType.COM_QUERY, BASE, CapabilityFlags.MARIADB_CLIENT_PROGRESS)
                .isComplete()).isFalse();
    }

    // ---- helpers -----------------------------------------------------------------------------

    private static int caps(boolean deprecateEof) {
        return deprecateEof ? BASE | CapabilityFlags.CLIENT_DEPRECATE_EOF : BASE;
    }

    private static Progress feed(ResponseFraming framing, byte[] payload) {
        ByteBuf buf = Unpooled.wrappedBuffer(payload);
        try {
            return framing.accept(buf);
        } finally {
            buf.release();
        }
    }

    private static byte[] ok(int status, boolean eofHeader) {
        return CodecAssertions.bytes(b -> new OkPacket(eofHeader, 1, 0, status, 0, "", List.of()).encode(b, BASE));
    }

    private static byte[] okEof(int status) {
        return ok(status, true);
    }

    private static byte[] eof(int status) {
        return CodecAssertions.bytes(new EofPacket(0, status)::encode);
    }

    private static byte[] end(int status, boolean deprecateEof) {
        return deprecateEof ? okEof(status) : eof(status);
    }

    private static byte[] err(int code) {
        return CodecAssertions.bytes(ErrPacket.of(code, "HY000", "error " + code)::encode);
    }

    private static byte[] localInfile(String file) {
        return CodecAssertions.bytes(b -> {
            b.writeByte(0xFB);
            b.writeCharSequence(file, StandardCharsets.UTF_8);
        });
    }

    private static byte[] columnCount(int count) {
        return CodecAssertions.bytes(b -> Buffers.writeLenEncInt(b, count));
    }

    /** A Protocol::ColumnDefinition41 for a VARCHAR column. */
    private static byte[] columnDefinition(String name) {
        return CodecAssertions.bytes(b -> {
            Buffers.writeLenEncString(b, "def");
            Buffers.writeLenEncString(b, "shop");
            Buffers.writeLenEncString(b, "t");
            Buffers.writeLenEncString(b, "t");
            Buffers.writeLenEncString(b, name);
            Buffers.writeLenEncString(b, name);
            Buffers.writeLenEncInt(b, 0x0C);
            b.writeShortLE(255);
            b.writeIntLE(1020);
            b.writeByte(0xFD);
            b.writeShortLE(0);
            b.writeByte(0);
            b.writeShortLE(0);
        });
    }

    private static byte[] textRow(String... values) {
        return CodecAssertions.bytes(b -> {
            for (String value : values) {
                Buffers.writeLenEncString(b, value);
            }
        });
    }

    /** A binary row of {@code columns} INT values, none NULL. */
    private static byte[] binaryRow(int columns) {
        return CodecAssertions.bytes(b -> {
            b.writeByte(0x00);
            b.writeZero((columns + 7 + 2) / 8);
            for (int i = 0; i < columns; i++) {
                b.writeIntLE(i);
            }
        });
    }

    private static byte[] prepareOk(int params, int columns) {
        return CodecAssertions.bytes(new StmtPrepareOk(1, columns, params, 0)::encode);
    }

    /** Backend packets and the progress expected after each, fed in order by {@link #run}. */
    private static final class Script {
        private final boolean deprecateEof;
        private final List<byte[]> packets = new ArrayList<>();
        private final List<Progress> expected = new ArrayList<>();
        final List<PacketKind> kinds = new ArrayList<>();

        Script(boolean deprecateEof) {
            this.deprecateEof = deprecateEof;
        }

        Script more(byte[] packet) {
            return add(packet, MORE);
        }

        Script awaiting(byte[] packet) {
            return add(packet, AWAITING_CLIENT);
        }

        Script complete(byte[] packet) {
            return add(packet, COMPLETE);
        }

        Script packet(byte[] packet) {
            return more(packet);
        }

        Script lastCompletes() {
            expected.set(expected.size() - 1, COMPLETE);
            return this;
        }

        Script textResultSet(int columns, int rows, int endStatus) {
            return resultSet(columns, rows, endStatus, false);
        }

        Script binaryResultSet(int columns, int rows, int endStatus) {
            return resultSet(columns, rows, endStatus, true);
        }

        private Script resultSet(int columns, int rows, int endStatus, boolean binary) {
            more(columnCount(columns));
            for (int i = 0; i < columns; i++) {
                more(columnDefinition("c" + i));
            }
            if (!deprecateEof) {
                more(eof(endStatus & ~SERVER_MORE_RESULTS_EXISTS));
            }
            for (int i = 0; i < rows; i++) {
                more(binary ? binaryRow(columns) : textRow("v" + i));
            }
            byte[] terminator = end(endStatus, deprecateEof);
            return ServerStatus.moreResultsExist(endStatus) ? more(terminator) : complete(terminator);
        }

        private Script add(byte[] packet, Progress progress) {
            packets.add(packet);
            expected.add(progress);
            return this;
        }

        ResponseFraming run(CommandType command) {
            ResponseFraming framing = ResponseFraming.forCommand(command, caps(deprecateEof));
            for (int i = 0; i < packets.size(); i++) {
                ByteBuf buf = Unpooled.wrappedBuffer(packets.get(i));
                try {
                    assertThat(framing.accept(buf)).as("progress after packet %d of %s", i, command)
                            .isEqualTo(expected.get(i));
                    assertThat(buf.readerIndex()).as("payload not consumed").isZero();
                    assertThat(buf.refCnt()).as("payload not released").isEqualTo(1);
                } finally {
                    buf.release();
                }
                kinds.add(framing.lastPacketKind());
                assertThat(framing.isComplete()).isEqualTo(i == packets.size() - 1);
            }
            return framing;
        }
    }
}
