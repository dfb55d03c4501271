package io.gantry.proxy.state;

import io.gantry.route.StatementClass;
import io.gantry.route.StatementFlag;
import io.gantry.wire.ServerStatus;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What a backend connection can hold that replaying the session's settings cannot rebuild. When a connection
 * holding any of these is closed by its server or lost, the client session ends with an error, as a direct
 * connection would; it is never silently reopened without them.
 */
public enum HeldState {
    TRANSACTION("an open transaction"),
    USER_VARIABLES("user variables"),
    TEMPORARY_TABLES("temporary tables"),
    NAMED_PREPARED_STATEMENTS("statements prepared with PREPARE"),
    LOCKS("locks"),
    CURSOR("an open cursor"),
    UNREPLAYED_SETTINGS("session settings Gantry could not replay");

    private final String description;

    HeldState(String description) {
        this.description = description;
    }

    /** Brings {@code held} up to date after a statement of this class ran on the connection with {@code status}. */
    public static void afterStatement(Set<HeldState> held, StatementClass statement, int status, boolean statusKnown) {
        if (statusKnown) {
            if (ServerStatus.has(status, ServerStatus.SERVER_STATUS_IN_TRANS)) {
                held.add(TRANSACTION);
            } else {
                held.remove(TRANSACTION);
            }
            if (ServerStatus.has(status, ServerStatus.SERVER_STATUS_CURSOR_EXISTS)) {
                held.add(CURSOR);
            }
        }
        if (statement == null) {
            return;
        }
        // Kept once made, even after DROP TEMPORARY TABLE, DEALLOCATE PREPARE or UNLOCK: Gantry does not follow what
        // is left.
        if (statement.has(StatementFlag.SETS_USER_VARIABLES)) {
            held.add(USER_VARIABLES);
        }
        if (statement.has(StatementFlag.TEMPORARY_TABLE)) {
            held.add(TEMPORARY_TABLES);
        }
        if (statement.has(StatementFlag.NAMED_PREPARE)) {
            held.add(NAMED_PREPARED_STATEMENTS);
        }
        if (statement.has(StatementFlag.TABLE_LOCK) || statement.has(StatementFlag.USER_LOCK)) {
            held.add(LOCKS);
        }
        if (statement.has(StatementFlag.MIXED_SESSION_STATE)) {
            held.add(UNREPLAYED_SETTINGS);
        }
    }

    /** Whether any of these ties the session to the server that holds it (everything but a transaction's end). */
    public static boolean tiesSession(Set<HeldState> held) {
        for (HeldState state : held) {
            if (state != TRANSACTION && state != CURSOR) {
                return true;
            }
        }
        return false;
    }

    /** "user variables and an open transaction". */
    public static String describe(Set<HeldState> held) {
        return held.stream().map(s -> s.description).collect(Collectors.joining(" and "));
    }

    public static EnumSet<HeldState> none() {
        return EnumSet.noneOf(HeldState.class);
    }
}
