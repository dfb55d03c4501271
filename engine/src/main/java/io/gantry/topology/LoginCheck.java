package io.gantry.topology;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;

/**
 * A login as the service account on a new connection, closed at once: what the health check times as
 * {@code connect_ms} while the server has a kept connection for the rest of the check
 * ({@link HealthChecker#timeLoginsWith}).
 */
@FunctionalInterface
public interface LoginCheck {

    /**
     * Logs in to {@code server} within {@code timeout} in all and closes the connection.
     *
     * @throws SQLException naming the server's error code when it refused the login or the connection, or the reason
     *                      it could not be reached
     * @throws RejectedExecutionException when it cannot log in any more (the proxy is stopping)
     */
    void login(UpstreamServer server, Duration timeout) throws SQLException;
}
