package io.gantry.authority;

import static io.gantry.authority.SqlValues.instant;
import static io.gantry.authority.SqlValues.utc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.util.Objects;
import java.util.Optional;

/**
 * The change streams' applied positions, table {@code GANTRY.CDC_POSITION}: one row per stream, replaced on every
 * save, so that a restarted stream resumes where it stopped.
 */
final class CdcPositionStore {

    private final AuthorityDatabase database;
    private final Clock clock;

    CdcPositionStore(AuthorityDatabase database, Clock clock) {
        this.database = database;
        this.clock = clock;
    }

    /** Saves the position, replacing the stream's previous one; {@code updated_at} is the clock's now. */
    void save(String stream, String gtidSet, String server) {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(gtidSet, "gtidSet");
        Objects.requireNonNull(server, "server");
        database.write("save the position of stream " + stream, connection -> {
            try (PreparedStatement merge = connection.prepareStatement("MERGE INTO GANTRY.CDC_POSITION"
                    + "(stream, gtid_set, server, updated_at) KEY (stream) VALUES (?, ?, ?, ?)")) {
                merge.setString(1, stream);
                merge.setString(2, gtidSet);
                merge.setString(3, server);
                merge.setObject(4, utc(clock.instant()));
                merge.executeUpdate();
            }
            return null;
        });
    }

    /** The stream's saved position, or empty if none was saved. */
    Optional<CdcPosition> load(String stream) {
        Objects.requireNonNull(stream, "stream");
        return database.read("load the position of stream " + stream, connection -> {
            try (PreparedStatement select = connection.prepareStatement(
                    "SELECT gtid_set, server, updated_at FROM GANTRY.CDC_POSITION WHERE stream = ?")) {
                select.setString(1, stream);
                try (ResultSet rows = select.executeQuery()) {
                    return rows.next()
                            ? Optional.of(new CdcPosition(stream, rows.getString(1), rows.getString(2),
                                    instant(rows, 3)))
                            : Optional.empty();
                }
            }
        });
    }
}
