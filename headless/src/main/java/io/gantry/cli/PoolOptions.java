package io.gantry.cli;

import io.gantry.proxy.backend.BackendPool;
import java.time.Duration;
import picocli.CommandLine.Option;

/** Connection multiplexing's flags: whether sessions share idle backend connections, and how many the pools keep. */
final class PoolOptions {

    @Option(names = "--multiplex", paramLabel = "on|off", defaultValue = "on",
            description = "on: a session's backend connection idle for --connection-retention-ms goes to a pool "
                    + "shared by the sessions of the same account, and a session that ends leaves its connections "
                    + "there, unless they hold what cannot travel (a transaction, temporary tables, locks, "
                    + "statements prepared with PREPARE, user variables Gantry could not read back); settings, user "
                    + "variables and server-side prepared statements follow the session; off: each session keeps "
                    + "its own (default: ${DEFAULT-VALUE}).")
    String multiplex;

    @Option(names = "--backend-idle-timeout-ms", paramLabel = "MS", defaultValue = "60000",
            description = "How long a pooled backend connection may stay idle before it is closed "
                    + "(default: ${DEFAULT-VALUE}).")
    long idleTimeoutMs;

    @Option(names = "--backend-max-idle", paramLabel = "N", defaultValue = "64",
            description = "Idle pooled connections kept per server on each I/O thread; beyond, the oldest is closed "
                    + "(default: ${DEFAULT-VALUE}).")
    int maxIdle;

    /** Null when not given: then {@link BackendPool.Settings#defaultMinIdle} of {@code --backend-max-idle}. */
    @Option(names = "--backend-min-idle", paramLabel = "N",
            description = "Idle pooled connections per server on each I/O thread that --backend-idle-timeout-ms does "
                    + "not close, kept warm for the next burst; 0 to --backend-max-idle (default: "
                    + BackendPool.Settings.DEFAULT_MIN_IDLE + ", or --backend-max-idle when that is less).")
    Integer minIdle;

    @Option(names = "--max-backend-connections-per-server", paramLabel = "N|auto", defaultValue = "auto",
            description = "The most connections the sessions may have open to one server at once, 1 to 1000000; "
                    + "auto: four fifths of the server's max_connections, as the health check reads it. A session "
                    + "that needs one more waits for one to free (default: ${DEFAULT-VALUE}).")
    String maxPerServer;

    @Option(names = "--backend-wait-timeout-ms", paramLabel = "MS", defaultValue = "5000",
            description = "How long a session waits for a connection to a server at its cap before its statement "
                    + "fails with error 1040 naming the server and the cap, 0 to 600000 (default: ${DEFAULT-VALUE}).")
    long waitTimeoutMs;

    BackendPool.Settings toSettings() {
        boolean on = OnOff.parse("--multiplex", multiplex);
        int cap;
        if (maxPerServer.equalsIgnoreCase("auto")) {
            cap = 0;
        } else {
            try {
                cap = Integer.parseInt(maxPerServer.strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--max-backend-connections-per-server must be auto or a number, "
                        + "not '" + maxPerServer + "'");
            }
            if (cap < 1) {
                throw new IllegalArgumentException("--max-backend-connections-per-server must be auto or between 1 "
                        + "and 1000000, not " + cap);
            }
        }
        int warm = minIdle != null ? minIdle : BackendPool.Settings.defaultMinIdle(maxIdle);
        return new BackendPool.Settings(on, Duration.ofMillis(idleTimeoutMs), maxIdle, cap,
                Duration.ofMillis(waitTimeoutMs), warm);
    }
}
