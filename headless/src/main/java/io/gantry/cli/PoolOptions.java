package io.gantry.cli;

import io.gantry.proxy.backend.BackendPool;
import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.Option;

/** Connection multiplexing's flags: whether sessions share idle backend connections, and how many the pools keep. */
final class PoolOptions {

    @Option(names = "--multiplex", paramLabel = "on|off", defaultValue = "on",
            description = "on: a session's backend connection idle for --connection-retention-ms goes to a pool "
                    + "shared by the sessions of the same account, and a session that ends leaves its connections "
                    + "there, unless they hold what cannot travel (a transaction, user variables, temporary tables, "
                    + "locks, prepared statements); off: each session keeps its own (default: ${DEFAULT-VALUE}).")
    String multiplex;

    @Option(names = "--backend-idle-timeout-ms", paramLabel = "MS", defaultValue = "60000",
            description = "How long a pooled backend connection may stay idle before it is closed "
                    + "(default: ${DEFAULT-VALUE}).")
    long idleTimeoutMs;

    @Option(names = "--backend-max-idle", paramLabel = "N", defaultValue = "64",
            description = "Idle pooled connections kept per server on each I/O thread; beyond, the oldest is closed "
                    + "(default: ${DEFAULT-VALUE}).")
    int maxIdle;

    BackendPool.Settings toSettings() {
        boolean on = switch (multiplex.toLowerCase(Locale.ROOT)) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException("--multiplex must be on or off, not '" + multiplex + "'");
        };
        return new BackendPool.Settings(on, Duration.ofMillis(idleTimeoutMs), maxIdle);
    }
}
