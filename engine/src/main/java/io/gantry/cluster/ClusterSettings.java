package io.gantry.cluster;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * How this instance takes part in a cluster of Gantry instances ({@code --cluster}): instances with the same name on
 * the same servers share one configuration, kept in a schema of Gantry's on the primary.
 *
 * @param name     the cluster's name ({@code --cluster})
 * @param schema   the schema on the primary that holds the shared configuration ({@code --cluster-schema})
 * @param instance this instance's name in the cluster ({@code --cluster-instance}; default host name and port)
 * @param address  where this instance listens, as the others should see it
 * @param feedLease how long the change feed's lease lasts unrenewed ({@code --cluster-feed-lease-ms}): a killed
 *                  feed writer's lease passes to another instance within it
 */
public record ClusterSettings(String name, String schema, String instance, String address, Duration feedLease) {

    /** The default of {@code --cluster-feed-lease-ms}. */
    public static final Duration DEFAULT_FEED_LEASE = Duration.ofSeconds(10);

    /** With the default feed lease. */
    public ClusterSettings(String name, String schema, String instance, String address) {
        this(name, schema, instance, address, DEFAULT_FEED_LEASE);
    }

    /** The table of the cluster's schema whose new rows the instances watch for on their change streams. */
    public static final String VERSIONS_TABLE = "config_versions";

    /** The table of the cluster's schema holding every instance's timeline events, also watched. */
    public static final String EVENTS_TABLE = "events";

    /** The default of {@code --cluster-schema}. */
    public static final String DEFAULT_SCHEMA = "gantry_cluster";

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    private static final Pattern SCHEMA = Pattern.compile("[A-Za-z0-9_]{1,64}");
    private static final Pattern INSTANCE = Pattern.compile("[A-Za-z0-9_.:\\[\\]-]{1,255}");

    public ClusterSettings {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(instance, "instance");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(feedLease, "feedLease");
        if (feedLease.toMillis() < 300 || feedLease.toMillis() > 600_000) {
            throw new IllegalArgumentException("--cluster-feed-lease-ms must be between 300 and 600000, not "
                    + feedLease.toMillis());
        }
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("--cluster must be 1 to 64 letters, digits, '_', '.' or '-', not '"
                    + name + "'");
        }
        if (!SCHEMA.matcher(schema).matches()) {
            throw new IllegalArgumentException("--cluster-schema must be 1 to 64 letters, digits or '_', not '"
                    + schema + "'");
        }
        if (!INSTANCE.matcher(instance).matches()) {
            throw new IllegalArgumentException("--cluster-instance must be 1 to 255 letters, digits or '_.:-[]', "
                    + "not '" + instance + "'");
        }
    }
}
