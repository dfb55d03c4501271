package io.gantry.cdc;

import java.util.regex.Pattern;

/**
 * Recognises, in the statement text of a binlog query event, the statements that change what an account may read:
 * {@code GRANT}, {@code REVOKE}, {@code CREATE|ALTER|DROP|RENAME USER}, {@code CREATE|DROP ROLE},
 * {@code SET [DEFAULT] ROLE ... FOR}, {@code SET PASSWORD} and {@code FLUSH PRIVILEGES}. They reach the binlog as
 * statements, never as row changes of {@code mysql.*}, so this is how the change stream sees them. Leading comments
 * (MySQL writes some statements with a {@code /* ... *}{@code /} prefix) are skipped.
 */
public final class AccountStatements {

    private static final Pattern ACCOUNT_CHANGE = Pattern.compile(
            "^(?:\\s*/\\*.*?\\*/)*\\s*(?:GRANT|REVOKE|(?:CREATE|ALTER|DROP|RENAME)\\s+(?:USER|ROLE)"
                    + "|SET\\s+(?:DEFAULT\\s+)?ROLE|SET\\s+PASSWORD|FLUSH\\s+PRIVILEGES)\\b",
            Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

    private AccountStatements() {
    }

    /** Whether {@code sql} changes accounts, roles or privileges. */
    public static boolean changesAccounts(String sql) {
        return ACCOUNT_CHANGE.matcher(sql).lookingAt();
    }
}
