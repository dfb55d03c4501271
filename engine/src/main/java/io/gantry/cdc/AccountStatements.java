package io.gantry.cdc;

import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Recognises, in the statement text of a binlog query event, the statements that change accounts or what an account
 * may read: {@code GRANT}, {@code REVOKE}, {@code CREATE|ALTER|DROP|RENAME USER}, {@code CREATE|DROP ROLE},
 * {@code SET [DEFAULT] ROLE ... FOR}, {@code SET PASSWORD} and {@code FLUSH PRIVILEGES}. They reach the binlog as
 * statements, never as row changes of {@code mysql.*}, so this is how the change stream sees them. Leading comments
 * (MySQL writes some statements with a {@code /* ... *}{@code /} prefix) are skipped. A DBA may also write the
 * grant tables themselves ({@code UPDATE mysql.global_priv ...}): those come as row changes of the tables
 * {@link #isGrantTable} names.
 */
public final class AccountStatements {

    private static final Pattern ACCOUNT_CHANGE = Pattern.compile(
            "^(?:\\s*/\\*.*?\\*/)*\\s*(?:GRANT|REVOKE|(?:CREATE|ALTER|DROP|RENAME)\\s+(?:USER|ROLE)"
                    + "|SET\\s+(?:DEFAULT\\s+)?ROLE|SET\\s+PASSWORD|FLUSH\\s+PRIVILEGES)\\b",
            Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

    /**
     * The grant tables of both flavours ({@code mysql.user} is a view on MariaDB 10.4+, {@code global_priv} its
     * table), by lower-case name.
     */
    private static final Set<String> GRANT_TABLES = Set.of("user", "global_priv", "db", "tables_priv",
            "columns_priv", "procs_priv", "proxies_priv", "roles_mapping", "role_edges", "default_roles",
            "global_grants");

    private AccountStatements() {
    }

    /** Whether {@code sql} changes accounts, roles or privileges. */
    public static boolean changesAccounts(String sql) {
        return ACCOUNT_CHANGE.matcher(sql).lookingAt();
    }

    /** Whether a row change of {@code database.table} changes accounts or privileges: a grant table of {@code mysql}. */
    public static boolean isGrantTable(String database, String table) {
        return "mysql".equalsIgnoreCase(database) && table != null
                && GRANT_TABLES.contains(table.toLowerCase(Locale.ROOT));
    }
}
