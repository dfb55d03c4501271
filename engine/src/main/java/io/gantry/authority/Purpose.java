package io.gantry.authority;

import java.util.Collection;
import java.util.stream.Collectors;

/** What a server list is for. Stored as its {@link #sqlName()} in {@code GANTRY.SERVER_LIST.purpose}. */
public enum Purpose {
    /** The servers clients' statements are routed to ({@code --upstream-db-url}). */
    PROXY("proxy"),
    /** The servers the change stream may read from ({@code --cdc-db-url}, else the upstream list). */
    CDC("cdc");

    private final String sqlName;

    Purpose(String sqlName) {
        this.sqlName = sqlName;
    }

    /** The name in SQL and in admin output: {@code proxy} or {@code cdc}. */
    public String sqlName() {
        return sqlName;
    }

    /**
     * The purpose with this SQL name.
     *
     * @throws IllegalArgumentException naming the value and the ones that exist
     */
    public static Purpose fromSqlName(String name) {
        for (Purpose purpose : values()) {
            if (purpose.sqlName.equals(name)) {
                return purpose;
            }
        }
        throw new IllegalArgumentException("unknown server list purpose '" + name + "' (expected proxy or cdc)");
    }

    /**
     * The {@code purpose} column of {@code gantry.upstream_servers} for a server on these lists: {@code cdc},
     * {@code proxy} or {@code cdc, proxy} (names in alphabetical order, comma and space between).
     */
    public static String describe(Collection<Purpose> purposes) {
        return purposes.stream().map(Purpose::sqlName).distinct().sorted().collect(Collectors.joining(", "));
    }
}
