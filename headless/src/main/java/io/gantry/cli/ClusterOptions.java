package io.gantry.cli;

import io.gantry.cluster.ClusterSettings;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** The flags of several instances sharing one configuration ({@code --cluster}). */
final class ClusterOptions {

    @Option(names = "--cluster", paramLabel = "NAME",
            description = "Share the server lists and weights with every Gantry started with the same NAME on the "
                    + "same servers: they are kept in --cluster-schema on the primary, and a change on one instance "
                    + "reaches the others (through their change streams, else at the health interval). Not given: "
                    + "this instance's configuration is its own.")
    String name;

    @Option(names = "--cluster-schema", paramLabel = "SCHEMA", defaultValue = ClusterSettings.DEFAULT_SCHEMA,
            description = "The schema on the primary that holds the cluster's configuration, created on first use; "
                    + "the service account needs CREATE, SELECT, INSERT, UPDATE and DELETE on it "
                    + "(default: ${DEFAULT-VALUE}).")
    String schema;

    @Option(names = "--cluster-instance", paramLabel = "NAME",
            description = "This instance's name in the cluster, unique in it (default: the host name and the "
                    + "--listen port, host:port).")
    String instance;

    @Option(names = "--cluster-feed-lease-ms", paramLabel = "MS", defaultValue = "10000",
            description = "With --cdc-sink (the same file for every instance): one instance at a time writes the "
                    + "change feed, holding a lease it renews every third of this; when it dies another takes the "
                    + "feed over within this time, 300 to 600000 (default: ${DEFAULT-VALUE}).")
    long feedLeaseMs;

    /**
     * The settings, or null without {@code --cluster}.
     *
     * @throws CommandLine.ParameterException naming the flag that is wrong
     */
    ClusterSettings toSettings(CommandLine commandLine, InetSocketAddress listen) {
        try {
            return toSettings(listen);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(commandLine, e.getMessage());
        }
    }

    private ClusterSettings toSettings(InetSocketAddress listen) {
        if (name == null || name.isBlank()) {
            if (instance != null) {
                throw new IllegalArgumentException("--cluster-instance needs --cluster NAME");
            }
            return null;
        }
        String host = listen.getAddress() == null || listen.getAddress().isAnyLocalAddress() ? hostName()
                : listen.getHostString();
        String address = host + ":" + listen.getPort();
        return new ClusterSettings(name.strip(), schema.strip(), instance == null ? hostName() + ":" + listen.getPort()
                : instance.strip(), address, java.time.Duration.ofMillis(feedLeaseMs));
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }
}
