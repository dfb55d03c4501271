package io.gantry.sandbox;

/** One server of a sandbox topology, as tests and the demo see it. */
public interface DatabaseServer {

    /** A stable name within the topology: {@code primary}, {@code replica1}, ... (names do not follow promotion). */
    String name();

    /** Host clients connect to (always loopback). */
    String host();

    /** TCP port clients connect to; stable across restarts. */
    int port();

    /** {@code host:port}, the way Gantry names servers. */
    default String address() {
        return host() + ":" + port();
    }

    /** Whether the server process is running now. */
    boolean isRunning();
}
