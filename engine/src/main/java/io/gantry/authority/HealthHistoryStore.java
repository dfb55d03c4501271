package io.gantry.authority;

import static io.gantry.authority.SqlValues.instant;
import static io.gantry.authority.SqlValues.setNullable;
import static io.gantry.authority.SqlValues.utc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The health history, table {@code GANTRY.HEALTH_HISTORY}: samples are written in batches and read back by time
 * range and server, as a list or one at a time for exports of any size.
 */
final class HealthHistoryStore {

    private final AuthorityDatabase database;

    HealthHistoryStore(AuthorityDatabase database) {
        this.database = database;
    }

    /** Stores the samples in one transaction. */
    void record(List<HealthSample> samples) {
        if (samples.isEmpty()) {
            return;
        }
        List<HealthSample> batch = List.copyOf(samples);
        database.write("record " + batch.size() + " health samples", connection -> {
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO GANTRY.HEALTH_HISTORY"
                    + "(at, server, health, role, rtt_ms, lag_ms, connect_ms) VALUES (?, ?, ?, ?, ?, ?, ?)")) {
                for (HealthSample sample : batch) {
                    insert.setObject(1, utc(sample.at()));
                    insert.setString(2, sample.server());
                    insert.setString(3, sample.health());
                    insert.setString(4, sample.role());
                    setNullable(insert, 5, sample.rttMs(), Types.DOUBLE);
                    setNullable(insert, 6, sample.lagMs(), Types.BIGINT);
                    setNullable(insert, 7, sample.connectMs(), Types.DOUBLE);
                    insert.addBatch();
                }
                insert.executeBatch();
            }
            return null;
        });
    }

    /** Every sample in the range; see {@link Authority#healthHistory(Instant, Instant, Optional)}. */
    List<HealthSample> list(Instant since, Instant until, Optional<String> server) {
        List<HealthSample> samples = new ArrayList<>();
        forEach(since, until, server, samples::add);
        return samples;
    }

    /**
     * The first {@code limit} samples in the range; see
     * {@link Authority#healthHistory(Instant, Instant, Optional, int)}.
     */
    List<HealthSample> list(Instant since, Instant until, Optional<String> server, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, not " + limit);
        }
        List<HealthSample> samples = new ArrayList<>();
        samples(since, until, server, limit, samples::add);
        return samples;
    }

    /** Hands each sample in the range to {@code each} as it is read; see {@link Authority#forEachHealthSample}. */
    long forEach(Instant since, Instant until, Optional<String> server, Consumer<HealthSample> each) {
        return samples(since, until, server, 0, each);
    }

    /** @param limit at most this many, 0 for all */
    private long samples(Instant since, Instant until, Optional<String> server, int limit,
                         Consumer<HealthSample> each) {
        Objects.requireNonNull(server, "server");
        StringBuilder sql = new StringBuilder(
                "SELECT at, server, health, role, rtt_ms, lag_ms, connect_ms FROM GANTRY.HEALTH_HISTORY WHERE TRUE");
        if (since != null) {
            sql.append(" AND at >= ?");
        }
        if (until != null) {
            sql.append(" AND at < ?");
        }
        if (server.isPresent()) {
            sql.append(" AND server = ?");
        }
        sql.append(" ORDER BY at, server");
        if (limit > 0) {
            sql.append(" FETCH FIRST ").append(limit).append(" ROWS ONLY");
        }
        return database.read("read the health history", connection -> {
            try (PreparedStatement select = connection.prepareStatement(sql.toString())) {
                int index = 1;
                if (since != null) {
                    select.setObject(index++, utc(since));
                }
                if (until != null) {
                    select.setObject(index++, utc(until));
                }
                if (server.isPresent()) {
                    select.setString(index, server.get());
                }
                long count = 0;
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        each.accept(new HealthSample(instant(rows, 1), rows.getString(2), rows.getString(3),
                                rows.getString(4), rows.getObject(5, Double.class), rows.getObject(6, Long.class),
                                rows.getObject(7, Double.class)));
                        count++;
                    }
                }
                return count;
            }
        });
    }
}
