package io.gantry.route;

/**
 * The flags that words set in the statements of particular verbs only: what a {@code SHOW} shows,
 * {@code DROP TEMPORARY}, {@code LOAD DATA [LOCAL]}, {@code FLUSH ... WITH READ LOCK} and {@code FOR EXPORT}. Beside
 * {@link TokenFlags}, whose words flag any statement, so that the phase machine keeps to the phases.
 */
final class VerbFlags {

    private VerbFlags() {
    }

    /** The flag bit of what {@code SHOW kw ...} shows, or 0 for a catalog read. */
    static int ofShown(Keyword kw) {
        return switch (kw) {
            case WARNINGS, ERRORS, COUNT, PROFILE, PROFILES ->
                    StatementFlag.PREVIOUS_STATEMENT.bit() | StatementFlag.DIAGNOSTICS.bit();
            case STATUS, VARIABLES, PROCESSLIST, MASTER, BINARY, SLAVE, REPLICA, REPLICAS, BINLOG, RELAYLOG,
                    ENGINE, OPEN, GLOBAL, SESSION, LOCAL, ALL, INNODB, MUTEX, EXPLAIN, ANALYZE ->
                    StatementFlag.SERVER_STATE.bit();
            default -> 0; // catalog reads: SHOW TABLES, SHOW CREATE ..., SHOW COLUMNS, SHOW GRANTS, ...
        };
    }

    /**
     * The flag bit that the keyword {@code kw} (null for any other token) sets in the body of a statement of verb
     * {@code verb}, {@code position} tokens after the verb and after {@code previous}, or 0.
     *
     * @param loadData whether the statement is flagged {@link StatementFlag#LOAD_DATA} already
     */
    static int ofBodyWord(Keyword verb, Keyword kw, int position, Keyword previous, boolean loadData) {
        return switch (verb) {
            case DROP -> kw == Keyword.TEMPORARY && position == 1 ? StatementFlag.TEMPORARY_TABLE.bit() : 0;
            case LOAD -> position == 1 && (kw == Keyword.DATA || kw == Keyword.XML) ? StatementFlag.LOAD_DATA.bit()
                    : kw == Keyword.LOCAL && position <= 3 && loadData ? StatementFlag.LOAD_DATA_LOCAL.bit() : 0;
            case FLUSH -> (kw == Keyword.LOCK && previous == Keyword.READ)
                    || (kw == Keyword.EXPORT && previous == Keyword.FOR) ? StatementFlag.TABLE_LOCK.bit() : 0;
            default -> 0;
        };
    }
}
