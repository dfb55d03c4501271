package io.gantry.authority;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The server lists, table {@code GANTRY.SERVER_LIST}: one ordered list per {@link Purpose}, with each server's
 * weight. Every change is stored together with the timeline event that records it, in one transaction, and that
 * event is returned for the caller to tell.
 */
final class ServerListStore {

    private final AuthorityDatabase database;
    private final Clock clock;
    private final TimelineStore timeline;

    ServerListStore(AuthorityDatabase database, Clock clock, TimelineStore timeline) {
        this.database = database;
        this.clock = clock;
        this.timeline = timeline;
    }

    /** The stored list in its stored order, or empty if none was ever stored. */
    Optional<List<StoredServer>> list(Purpose purpose) {
        Objects.requireNonNull(purpose, "purpose");
        return database.read("read the " + purpose.sqlName() + " list", connection -> {
            List<StoredServer> servers = readList(connection, purpose);
            return servers.isEmpty() ? Optional.empty() : Optional.of(servers);
        });
    }

    /**
     * Replaces the list and records a {@link EventKind#LIST_CHANGED} event; see {@link Authority#replaceServerList}.
     *
     * @return the stored event
     */
    Event replace(Purpose purpose, List<StoredServer> servers, String reason) {
        Objects.requireNonNull(purpose, "purpose");
        List<StoredServer> list = List.copyOf(servers);
        if (list.isEmpty()) {
            throw new IllegalArgumentException("the " + purpose.sqlName() + " list needs at least one server");
        }
        Set<String> seen = new HashSet<>();
        for (StoredServer server : list) {
            if (!seen.add(server.address().toLowerCase(Locale.ROOT))) {
                throw new IllegalArgumentException("the " + purpose.sqlName() + " list names " + server.address()
                        + " twice");
            }
        }
        return database.write("replace the " + purpose.sqlName() + " list", connection -> {
            List<StoredServer> old = readList(connection, purpose);
            try (PreparedStatement delete = connection.prepareStatement(
                    "DELETE FROM GANTRY.SERVER_LIST WHERE purpose = ?")) {
                delete.setString(1, purpose.sqlName());
                delete.executeUpdate();
            }
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO GANTRY.SERVER_LIST"
                    + "(purpose, position, host, port, database_name, user_name, weight, tls) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
                for (int i = 0; i < list.size(); i++) {
                    StoredServer server = list.get(i);
                    insert.setString(1, purpose.sqlName());
                    insert.setInt(2, i);
                    insert.setString(3, server.host());
                    insert.setInt(4, server.port());
                    insert.setString(5, server.database());
                    insert.setString(6, server.user());
                    insert.setInt(7, server.weight());
                    insert.setString(8, server.tls().orElse(null));
                    insert.addBatch();
                }
                insert.executeBatch();
            }
            String description = purpose.sqlName() + " list now " + describe(list)
                    + (old.isEmpty() ? "" : " (was " + describe(old) + ")");
            String eventReason = reason == null || reason.isBlank() ? description : reason.strip() + "; " + description;
            return timeline.insert(connection, clock.instant(), null, EventKind.LIST_CHANGED, eventReason);
        });
    }

    /**
     * Sets the weight of a server on every list that has it and records a {@link EventKind#WEIGHT_CHANGED} event;
     * see {@link Authority#setWeight}.
     *
     * @return the stored event, or empty when every list that has the server has that weight already (nothing is
     *         written)
     */
    Optional<Event> setWeight(String hostPort, int weight, String why) {
        Objects.requireNonNull(hostPort, "hostPort");
        checkWeight(weight);
        return database.write("set the weight of " + hostPort, connection -> {
            String address = null;
            StringJoiner changes = new StringJoiner(", ");
            try (PreparedStatement select = connection.prepareStatement("SELECT purpose, host, port, weight "
                    + "FROM GANTRY.SERVER_LIST WHERE LOWER(host || ':' || port) = LOWER(?) ORDER BY purpose DESC")) {
                select.setString(1, hostPort.strip());
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        address = rows.getString(2) + ":" + rows.getInt(3);
                        if (rows.getInt(4) != weight) {
                            changes.add(rows.getString(1) + " list " + rows.getInt(4) + " -> " + weight);
                        }
                    }
                }
            }
            if (address == null) {
                throw new IllegalArgumentException("no server " + hostPort + " on the server lists (known: "
                        + knownServers(connection) + ")");
            }
            if (changes.length() == 0) {
                return Optional.empty();
            }
            try (PreparedStatement update = connection.prepareStatement(
                    "UPDATE GANTRY.SERVER_LIST SET weight = ? WHERE LOWER(host || ':' || port) = LOWER(?)")) {
                update.setInt(1, weight);
                update.setString(2, hostPort.strip());
                update.executeUpdate();
            }
            String reason = "weight of " + address + " changed: " + changes
                    + (why == null || why.isBlank() ? "" : " (" + why.strip() + ")");
            return Optional.of(timeline.insert(connection, clock.instant(), address, EventKind.WEIGHT_CHANGED,
                    reason));
        });
    }

    /** @throws IllegalArgumentException for a weight outside 1..100 */
    static void checkWeight(int weight) {
        if (weight < 1 || weight > 100) {
            throw new IllegalArgumentException("weight must be between 1 and 100, not " + weight);
        }
    }

    private static List<StoredServer> readList(Connection connection, Purpose purpose) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT host, port, database_name, user_name, "
                + "weight, tls FROM GANTRY.SERVER_LIST WHERE purpose = ? ORDER BY position")) {
            select.setString(1, purpose.sqlName());
            List<StoredServer> servers = new ArrayList<>();
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    servers.add(new StoredServer(rows.getString(1), rows.getInt(2), rows.getString(3),
                            rows.getString(4), rows.getInt(5), Optional.ofNullable(rows.getString(6))));
                }
            }
            return servers;
        }
    }

    private static String knownServers(Connection connection) throws SQLException {
        Set<String> known = new TreeSet<>();
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT host, port FROM GANTRY.SERVER_LIST")) {
            while (rows.next()) {
                known.add(rows.getString(1) + ":" + rows.getInt(2));
            }
        }
        return known.isEmpty() ? "none stored yet" : String.join(", ", known);
    }

    private static String describe(List<StoredServer> servers) {
        return servers.stream().map(s -> s.address() + "|" + s.weight()).collect(Collectors.joining(", "));
    }
}
