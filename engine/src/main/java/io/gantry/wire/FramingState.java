package io.gantry.wire;

/**
 * Where {@link ResponseFraming} is in a response: the states of its machine, which state each command's response
 * starts in, and what each state expects next, for the message of a malformed response. Kept apart so that the
 * framer holds only the transitions.
 */
enum FramingState {
    RESULT_START("OK, ERR, LOCAL INFILE or a column count"),
    COLUMN_DEFINITIONS("a column definition"),
    COLUMNS_EOF("an EOF packet"),
    ROWS("a row or the end of the rows"),
    PREPARE_START("COM_STMT_PREPARE_OK or ERR"),
    PARAM_DEFINITIONS("a parameter definition"),
    PARAMS_EOF("an EOF packet"),
    PREPARE_COLUMN_DEFINITIONS("a column definition"),
    PREPARE_COLUMNS_EOF("an EOF packet"),
    FIELD_LIST("a column definition"),
    SINGLE_STRING("a string"),
    SINGLE_STATUS("OK, EOF or ERR"),
    AUTH_EXCHANGE("an authentication packet"),
    BINLOG_STREAM("a binlog event"),
    DONE("nothing");

    private final String expected;

    FramingState(String expected) {
        this.expected = expected;
    }

    /** What a packet in this state must be, in words. */
    String expected() {
        return expected;
    }

    /** The state the response to {@code command} starts in; {@link #DONE} for commands without a response. */
    static FramingState initial(CommandType command) {
        return switch (command) {
            case COM_QUERY, COM_PROCESS_INFO, COM_STMT_EXECUTE, COM_STMT_BULK_EXECUTE -> RESULT_START;
            case COM_STMT_PREPARE -> PREPARE_START;
            case COM_STMT_FETCH -> ROWS;
            case COM_FIELD_LIST -> FIELD_LIST;
            case COM_STATISTICS -> SINGLE_STRING;
            case COM_CHANGE_USER -> AUTH_EXCHANGE;
            case COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID -> BINLOG_STREAM;
            case COM_QUIT, COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA -> DONE;
            default -> SINGLE_STATUS;
        };
    }
}
