package io.gantry.cluster;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gantry.authority.Purpose;
import io.gantry.authority.StoredServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * The configuration instances of a cluster share, as one version holds it whole: the proxy's server list and the
 * change stream's, each server with its weight, and the query caches' definitions. Passwords are never part of it: each instance has its own (the
 * accounts' passwords come from its {@code --upstream-db-url}). Stored as JSON in the cluster's versions table.
 *
 * @param proxy  the servers the proxy routes to, in order
 * @param cdc    the servers the change stream may read, in order
 * @param caches the query caches' definitions, by name (none in versions written before they were shared)
 */
public record SharedConfiguration(List<Server> proxy, List<Server> cdc, List<Cache> caches) {

    /** Without caches. */
    public SharedConfiguration(List<Server> proxy, List<Server> cdc) {
        this(proxy, cdc, List.of());
    }

    /**
     * One query cache's definition ({@code CREATE CACHE}).
     *
     * @param ttlSeconds     how long an entry lives, 0 for no limit
     * @param refreshSeconds the refresh-ahead period, 0 for none
     */
    public record Cache(String name, String select, boolean shallow, long ttlSeconds, long refreshSeconds) {
        public Cache {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(select, "select");
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /**
     * One server of a list.
     *
     * @param tls its TLS settings as a URL query ({@code ssl-mode=REQUIRED}), or null for the defaults
     */
    public record Server(String host, int port, String database, String user, int weight, String tls) {

        public Server {
            Objects.requireNonNull(host, "host");
            Objects.requireNonNull(database, "database");
            Objects.requireNonNull(user, "user");
        }

        public static Server of(StoredServer stored) {
            return new Server(stored.host(), stored.port(), stored.database(), stored.user(), stored.weight(),
                    stored.tls().orElse(null));
        }

        public StoredServer toStored() {
            return new StoredServer(host, port, database, user, weight, Optional.ofNullable(tls));
        }

        public String address() {
            return host + ":" + port;
        }

        boolean sameServer(Server other) {
            return address().equalsIgnoreCase(other.address()) && database.equals(other.database)
                    && user.equals(other.user) && Objects.equals(tls, other.tls);
        }

        Server withWeight(int newWeight) {
            return new Server(host, port, database, user, newWeight, tls);
        }
    }

    public SharedConfiguration {
        proxy = List.copyOf(proxy);
        cdc = List.copyOf(cdc);
        // By name, so that two instances that hold the same caches hold equal configurations.
        caches = caches == null ? List.of() : caches.stream()
                .sorted(java.util.Comparator.comparing(Cache::name)).toList();
    }

    /** This configuration with {@code cache} added, or replacing the one of its name. */
    public SharedConfiguration withCache(Cache cache) {
        List<Cache> changed = new ArrayList<>(withoutCache(cache.name()).caches);
        changed.add(cache);
        return new SharedConfiguration(proxy, cdc, changed);
    }

    /** This configuration without the cache {@code name} (the same when it has none of that name). */
    public SharedConfiguration withoutCache(String name) {
        return new SharedConfiguration(proxy, cdc, caches.stream().filter(c -> !c.name().equals(name)).toList());
    }

    /** This configuration with no cache. */
    public SharedConfiguration withoutCaches() {
        return new SharedConfiguration(proxy, cdc, List.of());
    }

    public List<Server> list(Purpose purpose) {
        return purpose == Purpose.PROXY ? proxy : cdc;
    }

    /** This configuration with {@code list} as the list of {@code purpose}. */
    public SharedConfiguration withList(Purpose purpose, List<Server> list) {
        return purpose == Purpose.PROXY ? new SharedConfiguration(list, cdc, caches)
                : new SharedConfiguration(proxy, list, caches);
    }

    /** This configuration with the weight of {@code hostPort} set on every list that has it. */
    public SharedConfiguration withWeight(String hostPort, int weight) {
        return new SharedConfiguration(withWeight(proxy, hostPort, weight), withWeight(cdc, hostPort, weight), caches);
    }

    private static List<Server> withWeight(List<Server> list, String hostPort, int weight) {
        List<Server> changed = new ArrayList<>(list.size());
        for (Server server : list) {
            changed.add(server.address().equalsIgnoreCase(hostPort.strip()) ? server.withWeight(weight) : server);
        }
        return changed;
    }

    /**
     * Whether the list of {@code purpose} in {@code next} has the same servers as here in the same order, so going
     * there changes weights at most.
     */
    public boolean sameServers(Purpose purpose, SharedConfiguration next) {
        List<Server> mine = list(purpose);
        List<Server> theirs = next.list(purpose);
        if (mine.size() != theirs.size()) {
            return false;
        }
        for (int i = 0; i < mine.size(); i++) {
            if (!mine.get(i).sameServer(theirs.get(i))) {
                return false;
            }
        }
        return true;
    }

    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the configuration cannot be written as JSON: " + e.getMessage(), e);
        }
    }

    /** @throws IllegalArgumentException naming what is wrong with the text */
    public static SharedConfiguration fromJson(String json) {
        try {
            SharedConfiguration read = JSON.readValue(json, SharedConfiguration.class);
            if (read.proxy().isEmpty()) {
                throw new IllegalArgumentException("it has no proxy servers");
            }
            return read;
        } catch (JsonProcessingException | NullPointerException e) {
            throw new IllegalArgumentException("not a Gantry cluster configuration: " + e.getMessage(), e);
        }
    }

    /** One line for logs and events: {@code proxy h1:3306|50, h2:3306|50; cdc h1:3306|50}. */
    @Override
    public String toString() {
        return "proxy " + describe(proxy) + "; cdc " + describe(cdc) + (caches.isEmpty() ? ""
                : "; caches " + String.join(", ", caches.stream().map(Cache::name).toList()));
    }

    private static String describe(List<Server> servers) {
        StringBuilder text = new StringBuilder();
        for (Server server : servers) {
            if (!text.isEmpty()) {
                text.append(", ");
            }
            text.append(server.address().toLowerCase(Locale.ROOT)).append('|').append(server.weight());
        }
        return text.toString();
    }
}
