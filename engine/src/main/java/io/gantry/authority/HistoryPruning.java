package io.gantry.authority;

import static io.gantry.authority.SqlValues.utc;

import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The deletes behind {@code --health-retention}: health samples and events older than a cutoff. A class of its own
 * because it spans two stores' tables, and because it deletes in batches, each its own transaction, so that other
 * writers get the write lock in between.
 */
final class HistoryPruning {

    private static final int PRUNE_BATCH = 10_000;

    private final AuthorityDatabase database;

    HistoryPruning(AuthorityDatabase database) {
        this.database = database;
    }

    /** @return how many rows were deleted, both tables together; see {@link Authority#pruneOlderThan} */
    int pruneOlderThan(Instant cutoff) {
        Objects.requireNonNull(cutoff, "cutoff");
        int total = 0;
        for (String table : List.of("GANTRY.HEALTH_HISTORY", "GANTRY.EVENTS")) {
            int deleted;
            do {
                deleted = database.write("prune " + table, connection -> {
                    try (PreparedStatement delete = connection.prepareStatement(
                            "DELETE FROM " + table + " WHERE at < ? FETCH FIRST " + PRUNE_BATCH + " ROWS ONLY")) {
                        delete.setObject(1, utc(cutoff));
                        return delete.executeUpdate();
                    }
                });
                total += deleted;
            } while (deleted == PRUNE_BATCH);
        }
        return total;
    }
}
