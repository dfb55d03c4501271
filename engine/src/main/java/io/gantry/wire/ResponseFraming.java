package io.gantry.wire;

import static io.gantry.wire.CapabilityFlags.CLIENT_DEPRECATE_EOF;
import static io.gantry.wire.CapabilityFlags.CLIENT_OPTIONAL_RESULTSET_METADATA;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;

import io.netty.buffer.ByteBuf;

/**
 * Finds where a backend's response to one command ends, without decoding rows.
 *
 * <p>Create one per command with {@link #forCommand(CommandType, int)} and feed it every packet
 * payload the backend sends, in order ({@link #accept(ByteBuf)} reads but never consumes or
 * releases the buffer). After each packet it answers whether the response is complete, whether the
 * server now waits for the client, the status flags of the latest OK/EOF, and whether another
 * result follows (SERVER_MORE_RESULTS_EXISTS).
 *
 * <p>Shapes handled, with and without CLIENT_DEPRECATE_EOF:
 * <ul>
 * <li>COM_QUERY, COM_PROCESS_INFO: OK | ERR | LOCAL INFILE request (0xFB; the server then waits
 *     for the file, and its OK/ERR follows) | a text result set: column count, column definitions,
 *     EOF (unless DEPRECATE_EOF), rows, then EOF or an OK with header 0xFE. Results chain while
 *     the status carries SERVER_MORE_RESULTS_EXISTS; an ERR ends everything.</li>
 * <li>COM_STMT_EXECUTE, COM_STMT_BULK_EXECUTE: the same with binary rows; when the status after
 *     the column definitions has SERVER_STATUS_CURSOR_EXISTS, the response ends there and rows
 *     come later through COM_STMT_FETCH.</li>
 * <li>COM_STMT_FETCH: rows, then EOF/OK, or ERR.</li>
 * <li>COM_STMT_PREPARE: ERR, or COM_STMT_PREPARE_OK, parameter definitions and EOF, column
 *     definitions and EOF (each group only if non-empty, EOFs only without DEPRECATE_EOF).</li>
 * <li>COM_FIELD_LIST: column definitions until EOF/OK, or ERR.</li>
 * <li>COM_STATISTICS: exactly one string packet.</li>
 * <li>COM_CHANGE_USER: the authentication exchange; the server waits for the client after an auth
 *     switch or auth-more-data (except caching_sha2's fast-auth-success, after which OK follows).</li>
 * <li>COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID: events until EOF or ERR.</li>
 * <li>COM_QUIT, COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA: no response; complete from the start.</li>
 * <li>Everything else, including unknown commands: one OK, EOF or ERR.</li>
 * </ul>
 *
 * <p>A 0xFE packet ends rows only when it is short: under 9 bytes without DEPRECATE_EOF (an EOF
 * is 5 bytes), under 0xFFFFFF bytes with it (the replacing OK can carry info and session state). A
 * text row can start with 0xFE only as the prefix of a value of 2^24 bytes or more, so such a row
 * is always longer than either bound. A MariaDB progress report (ERR with code 0xFFFF) never ends
 * a response.
 *
 * <p>Not thread-safe; one instance belongs to one backend connection's event loop.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response.html">COM_QUERY Response</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response_text_resultset.html">Text Resultset</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response_local_infile_request.html">LOCAL INFILE Request</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_binary_resultset.html">Binary Protocol Resultset</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_stmt_prepare.html">COM_STMT_PREPARE</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_stmt_execute.html">COM_STMT_EXECUTE</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_stmt_fetch.html">COM_STMT_FETCH</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_field_list.html">COM_FIELD_LIST</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_statistics.html">COM_STATISTICS</a>
 */
public final class ResponseFraming {

    /** {@link #serverStatus()} before any OK or EOF packet was seen. */
    public static final int NO_STATUS = -1;

    /** {@link #rowsOfLastResultSet()} of a response without a result set whose rows were sent. */
    public static final int NO_RESULT_SET = -1;

    /** What the proxy should do after a packet. */
    public enum Progress {
        /** The server sends more packets of this response. */
        MORE,
        /**
         * The server waits for the client (LOCAL INFILE contents, or an auth reply); feed the
         * server's packets that follow as usual.
         */
        AWAITING_CLIENT,
        /** The response is complete; the connection is ready for the next command. */
        COMPLETE
    }

    /** What the last packet fed was. */
    public enum PacketKind {
        OK, ERR, EOF, PROGRESS_REPORT, LOCAL_INFILE_REQUEST, COLUMN_COUNT, COLUMN_DEFINITION,
        PARAMETER_DEFINITION, ROW, STMT_PREPARE_OK, STATISTICS, AUTH_SWITCH_REQUEST, AUTH_MORE_DATA,
        BINLOG_EVENT
    }

    private static final int OK_HEADER = 0x00;
    private static final int AUTH_MORE_DATA_HEADER = 0x01;
    private static final int LOCAL_INFILE_HEADER = 0xFB;
    private static final int EOF_HEADER = 0xFE;
    private static final int ERR_HEADER = 0xFF;

    private final CommandType command;
    private final boolean deprecateEof;
    private final boolean chainsResults;
    private FramingState state;
    private int definitionsLeft;
    private int preparedColumns;
    private int serverStatus = NO_STATUS;
    /** Warnings of the latest OK or EOF that ended a result. */
    private int warnings;
    private PacketKind lastPacketKind;
    private Progress progress;
    private boolean failed;
    private int resultsCompleted;
    /**
     * Rows of the result set being read, or of the latest one read (at most {@code Integer.MAX_VALUE}); -1 before
     * any. An int, and {@link #rowCount} one field: a framer is made per command, and its size is per query.
     */
    private int rows;
    /** What {@code ROW_COUNT()} reads after the latest completed result: -1 after a result set, else its OK's. */
    private long rowCount;

    private ResponseFraming(CommandType command, int capabilities) {
        this.command = command;
        this.deprecateEof = CapabilityFlags.has(capabilities, CLIENT_DEPRECATE_EOF);
        this.state = FramingState.initial(command);
        this.chainsResults = state == FramingState.RESULT_START;
        this.rows = state == FramingState.ROWS ? 0 : NO_RESULT_SET; // COM_STMT_FETCH: rows from the start
        this.progress = state == FramingState.DONE ? Progress.COMPLETE : Progress.MORE;
    }

    /**
     * A framer for the response to {@code command}.
     *
     * @param negotiatedCapabilities the capabilities in effect on the backend connection
     * @throws IllegalArgumentException without CLIENT_PROTOCOL_41, or with
     *                                  CLIENT_OPTIONAL_RESULTSET_METADATA (result sets without
     *                                  metadata are not framed; do not negotiate it)
     */
    public static ResponseFraming forCommand(CommandType command, int negotiatedCapabilities) {
        if (!CapabilityFlags.has(negotiatedCapabilities, CLIENT_PROTOCOL_41)) {
            throw new IllegalArgumentException("response framing needs CLIENT_PROTOCOL_41");
        }
        if (CapabilityFlags.has(negotiatedCapabilities, CLIENT_OPTIONAL_RESULTSET_METADATA)) {
            throw new IllegalArgumentException("CLIENT_OPTIONAL_RESULTSET_METADATA is not supported; "
                    + "leave it out of the capabilities sent to backends");
        }
        return new ResponseFraming(command, negotiatedCapabilities);
    }

    /**
     * A framer for the response to {@code command} on a MariaDB connection.
     *
     * @param mariaDbCapabilities the MariaDB extended capabilities in effect
     * @throws IllegalArgumentException as {@link #forCommand(CommandType, int)}, and with
     *                                  MARIADB_CLIENT_CACHE_METADATA (binary result sets may then
     *                                  skip their column definitions; do not negotiate it)
     */
    public static ResponseFraming forCommand(CommandType command, int negotiatedCapabilities, int mariaDbCapabilities) {
        if (CapabilityFlags.has(mariaDbCapabilities, CapabilityFlags.MARIADB_CLIENT_CACHE_METADATA)) {
            throw new IllegalArgumentException("MARIADB_CLIENT_CACHE_METADATA is not supported; "
                    + "leave it out of the capabilities sent to backends");
        }
        return forCommand(command, negotiatedCapabilities);
    }

    /** True if the server answers {@code command} at all (false for COM_QUIT, COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA). */
    public static boolean expectsResponse(CommandType command) {
        return FramingState.initial(command) != FramingState.DONE;
    }

    /**
     * Takes the next packet payload of the response (read, not consumed).
     *
     * @return what happens next
     * @throws MalformedPacketException if the packet cannot occur at this point of the response;
     *                                  the backend connection is then out of step and must be closed
     * @throws IllegalStateException    if the response was already complete
     */
    public Progress accept(ByteBuf payload) {
        if (state == FramingState.DONE) {
            throw new IllegalStateException("the response to " + command + " is already complete; unexpected packet of "
                    + payload.readableBytes() + " bytes");
        }
        int length = payload.readableBytes();
        if (length == 0) {
            if (state == FramingState.SINGLE_STRING) {
                return finish(PacketKind.STATISTICS);
            }
            throw new MalformedPacketException(command + " response", "empty packet while expecting "
                    + state.expected());
        }
        int first = payload.getUnsignedByte(payload.readerIndex());
        if (first == ERR_HEADER) {
            return error(payload);
        }
        return switch (state) {
            case RESULT_START -> resultStart(payload, first);
            case COLUMN_DEFINITIONS -> columnDefinition();
            case COLUMNS_EOF -> columnsEof(payload);
            case ROWS -> row(payload);
            case PREPARE_START -> prepareOk(payload);
            case PARAM_DEFINITIONS -> parameterDefinition();
            case PARAMS_EOF -> {
                serverStatus = StatusPackets.requireEof(payload, "EOF after parameter definitions");
                yield afterParameters(PacketKind.EOF);
            }
            case PREPARE_COLUMN_DEFINITIONS -> preparedColumnDefinition();
            case PREPARE_COLUMNS_EOF -> {
                serverStatus = StatusPackets.requireEof(payload, "EOF after column definitions");
                yield finish(PacketKind.EOF);
            }
            case FIELD_LIST -> StatusPackets.isTerminator(payload, deprecateEof)
                    ? endResult(StatusPackets.terminatorKind(payload), StatusPackets.terminatorStatus(payload), payload)
                    : step(PacketKind.COLUMN_DEFINITION, Progress.MORE);
            case SINGLE_STRING -> finish(PacketKind.STATISTICS);
            case SINGLE_STATUS -> singleStatus(payload, first);
            case AUTH_EXCHANGE -> authExchange(payload, first);
            case BINLOG_STREAM -> binlogEvent(payload, first);
            case DONE -> throw new IllegalStateException("unreachable");
        };
    }

    /** The command this response answers. */
    public CommandType command() {
        return command;
    }

    /** True once the response is complete (also true from the start for commands without one). */
    public boolean isComplete() {
        return state == FramingState.DONE;
    }

    /** The outcome of the latest {@link #accept}. */
    public Progress progress() {
        return progress;
    }

    /** True if the server now waits for client data (LOCAL INFILE contents or an auth reply). */
    public boolean awaitingClient() {
        return progress == Progress.AWAITING_CLIENT;
    }

    /** What the latest packet was; {@code null} before the first. */
    public PacketKind lastPacketKind() {
        return lastPacketKind;
    }

    /**
     * Status flags of the latest OK or EOF packet of this response, or {@link #NO_STATUS}. An ERR
     * carries no status, so after one this is still the value from before it.
     */
    public int serverStatus() {
        return serverStatus;
    }

    /** True if the latest OK/EOF said another result follows (SERVER_MORE_RESULTS_EXISTS). */
    public boolean moreResultsExist() {
        return serverStatus != NO_STATUS && ServerStatus.moreResultsExist(serverStatus) && !isComplete();
    }

    /**
     * Warnings the latest completed result left (its OK or EOF said so): what {@code SHOW WARNINGS} would list next
     * on this connection, together with an ERR ({@link #failed}).
     */
    public int warnings() {
        return warnings;
    }

    /** True if the response ended with an ERR packet. */
    public boolean failed() {
        return failed;
    }

    /**
     * What {@code ROW_COUNT()} reads on the connection after this response to a statement: -1 when its last result
     * was a result set, else the {@code affected_rows} of the OK that ended it.
     */
    public long rowCount() {
        return rowCount;
    }

    /**
     * The rows of the latest result set of this response, what {@code FOUND_ROWS()} reads after it (unless the
     * statement asked for {@code SQL_CALC_FOUND_ROWS}); {@link #NO_RESULT_SET} when it sent none (an OK, or a
     * cursor whose rows stay on the server), and {@code FOUND_ROWS()} keeps its value.
     */
    public long rowsOfLastResultSet() {
        return rows;
    }

    /** Results (OK packets or result sets) completed so far; several when results are chained. */
    public int resultsCompleted() {
        return resultsCompleted;
    }

    // ---- states ------------------------------------------------------------------------------

    private Progress resultStart(ByteBuf payload, int first) {
        switch (first) {
            case OK_HEADER -> {
                rowCount = StatusPackets.affectedRowsOfOk(payload);
                return endResult(PacketKind.OK, StatusPackets.statusOfOk(payload), payload);
            }
            case LOCAL_INFILE_HEADER -> {
                // The server waits for the file's contents and an empty packet; then OK or ERR.
                return step(PacketKind.LOCAL_INFILE_REQUEST, Progress.AWAITING_CLIENT);
            }
            case EOF_HEADER -> {
                if (StatusPackets.isTerminator(payload, deprecateEof)) {
                    rowCount = 0;
                    return endResult(StatusPackets.terminatorKind(payload), StatusPackets.terminatorStatus(payload),
                            payload);
                }
                return columnCount(payload);
            }
            default -> {
                return columnCount(payload);
            }
        }
    }

    private Progress columnCount(ByteBuf payload) {
        int start = payload.readerIndex();
        long count;
        try {
            count = Buffers.readLenEncInt(payload, "column_count");
        } finally {
            payload.readerIndex(start);
        }
        if (count <= 0 || count > Integer.MAX_VALUE) {
            throw new MalformedPacketException("column_count", "expected 1 or more columns, found "
                    + Long.toUnsignedString(count));
        }
        definitionsLeft = (int) count;
        rows = 0;
        state = FramingState.COLUMN_DEFINITIONS;
        return step(PacketKind.COLUMN_COUNT, Progress.MORE);
    }

    private Progress columnDefinition() {
        if (--definitionsLeft == 0) {
            state = deprecateEof ? FramingState.ROWS : FramingState.COLUMNS_EOF;
        }
        return step(PacketKind.COLUMN_DEFINITION, Progress.MORE);
    }

    private Progress columnsEof(ByteBuf payload) {
        int status = StatusPackets.requireEof(payload, "EOF after column definitions");
        serverStatus = status;
        if ((command == CommandType.COM_STMT_EXECUTE || command == CommandType.COM_STMT_BULK_EXECUTE)
                && ServerStatus.has(status, ServerStatus.SERVER_STATUS_CURSOR_EXISTS)) {
            // A cursor was opened: rows stay on the server until COM_STMT_FETCH.
            rows = NO_RESULT_SET;
            rowCount = -1;
            return endResult(PacketKind.EOF, status, payload);
        }
        state = FramingState.ROWS;
        return step(PacketKind.EOF, Progress.MORE);
    }

    private Progress row(ByteBuf payload) {
        if (StatusPackets.isTerminator(payload, deprecateEof)) {
            // Under DEPRECATE_EOF this is also where a cursor's metadata ends (0xFE OK, CURSOR_EXISTS).
            int status = StatusPackets.terminatorStatus(payload);
            if (ServerStatus.has(status, ServerStatus.SERVER_STATUS_CURSOR_EXISTS)) {
                rows = NO_RESULT_SET;
            }
            rowCount = -1;
            return endResult(StatusPackets.terminatorKind(payload), status, payload);
        }
        if (rows < Integer.MAX_VALUE) {
            rows++;
        }
        return step(PacketKind.ROW, Progress.MORE);
    }

    private Progress prepareOk(ByteBuf payload) {
        StmtPrepareOk ok = StmtPrepareOk.decode(payload.duplicate());
        preparedColumns = ok.columnCount();
        if (ok.paramCount() > 0) {
            definitionsLeft = ok.paramCount();
            state = FramingState.PARAM_DEFINITIONS;
            return step(PacketKind.STMT_PREPARE_OK, Progress.MORE);
        }
        return afterParameters(PacketKind.STMT_PREPARE_OK);
    }

    private Progress parameterDefinition() {
        if (--definitionsLeft > 0) {
            return step(PacketKind.PARAMETER_DEFINITION, Progress.MORE);
        }
        if (!deprecateEof) {
            state = FramingState.PARAMS_EOF;
            return step(PacketKind.PARAMETER_DEFINITION, Progress.MORE);
        }
        return afterParameters(PacketKind.PARAMETER_DEFINITION);
    }

    private Progress afterParameters(PacketKind kind) {
        if (preparedColumns > 0) {
            definitionsLeft = preparedColumns;
            state = FramingState.PREPARE_COLUMN_DEFINITIONS;
            return step(kind, Progress.MORE);
        }
        return finish(kind);
    }

    private Progress preparedColumnDefinition() {
        if (--definitionsLeft > 0) {
            return step(PacketKind.COLUMN_DEFINITION, Progress.MORE);
        }
        if (!deprecateEof) {
            state = FramingState.PREPARE_COLUMNS_EOF;
            return step(PacketKind.COLUMN_DEFINITION, Progress.MORE);
        }
        return finish(PacketKind.COLUMN_DEFINITION);
    }

    private Progress singleStatus(ByteBuf payload, int first) {
        if (first == OK_HEADER) {
            serverStatus = StatusPackets.statusOfOk(payload);
            resultsCompleted++;
            return finish(PacketKind.OK);
        }
        if (first == EOF_HEADER && StatusPackets.isTerminator(payload, deprecateEof)) {
            // COM_SET_OPTION and COM_DEBUG answer with EOF (an 0xFE OK under DEPRECATE_EOF).
            serverStatus = StatusPackets.terminatorStatus(payload);
            resultsCompleted++;
            return finish(StatusPackets.terminatorKind(payload));
        }
        throw new MalformedPacketException(command + " response", "expected OK, EOF or ERR, found header 0x"
                + Integer.toHexString(first) + " in " + payload.readableBytes() + " bytes");
    }

    private Progress authExchange(ByteBuf payload, int first) {
        switch (first) {
            case OK_HEADER -> {
                serverStatus = StatusPackets.statusOfOk(payload);
                resultsCompleted++;
                return finish(PacketKind.OK);
            }
            case EOF_HEADER -> {
                return step(PacketKind.AUTH_SWITCH_REQUEST, Progress.AWAITING_CLIENT);
            }
            case AUTH_MORE_DATA_HEADER -> {
                boolean fastAuthSuccess = payload.readableBytes() == 2
                        && payload.getByte(payload.readerIndex() + 1) == CachingSha2Password.FAST_AUTH_SUCCESS;
                // After fast-auth-success the server sends OK on its own; otherwise it waits.
                return step(PacketKind.AUTH_MORE_DATA, fastAuthSuccess ? Progress.MORE : Progress.AWAITING_CLIENT);
            }
            default -> throw new MalformedPacketException("COM_CHANGE_USER response",
                    "expected OK, ERR, AuthSwitchRequest or AuthMoreData, found header 0x" + Integer.toHexString(first));
        }
    }

    private Progress binlogEvent(ByteBuf payload, int first) {
        if (first == OK_HEADER) {
            return step(PacketKind.BINLOG_EVENT, Progress.MORE);
        }
        if (first == EOF_HEADER && StatusPackets.isTerminator(payload, deprecateEof)) {
            serverStatus = StatusPackets.terminatorStatus(payload);
            return finish(StatusPackets.terminatorKind(payload));
        }
        throw new MalformedPacketException("binlog event", "expected 0x00, EOF or ERR, found header 0x"
                + Integer.toHexString(first));
    }

    private Progress error(ByteBuf payload) {
        if (payload.readableBytes() < 3) {
            throw new MalformedPacketException("ERR.error_code", "needs 2 bytes but only "
                    + (payload.readableBytes() - 1) + " are left");
        }
        if (payload.getUnsignedShortLE(payload.readerIndex() + 1) == ErrPacket.PROGRESS_REPORT_CODE) {
            return step(PacketKind.PROGRESS_REPORT, Progress.MORE);
        }
        failed = true;
        return finish(PacketKind.ERR);
    }

    // ---- transitions -------------------------------------------------------------------------

    private Progress endResult(PacketKind kind, int status, ByteBuf payload) {
        serverStatus = status;
        warnings = StatusPackets.warningsOf(payload);
        resultsCompleted++;
        if (chainsResults && ServerStatus.moreResultsExist(status)) {
            state = FramingState.RESULT_START;
            return step(kind, Progress.MORE);
        }
        return finish(kind);
    }

    private Progress finish(PacketKind kind) {
        state = FramingState.DONE;
        return step(kind, Progress.COMPLETE);
    }

    private Progress step(PacketKind kind, Progress next) {
        lastPacketKind = kind;
        progress = next;
        return next;
    }
}
