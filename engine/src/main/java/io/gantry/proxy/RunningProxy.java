package io.gantry.proxy;

import io.gantry.topology.HealthChecker;
import io.gantry.topology.ServerValidator;
import io.gantry.topology.ServiceConnections;
import io.gantry.topology.TopologyListener;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A proxy with its upstream list and health loop, started together and stopped together: what {@code gantry run}
 * and {@code gantry demo} run, and what integration tests start in-process.
 */
public final class RunningProxy implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RunningProxy.class);

    private final Upstreams upstreams;
    private final HealthChecker health;
    private final ProxyServer server;
    private final InetSocketAddress address;

    private RunningProxy(Upstreams upstreams, HealthChecker health, ProxyServer server, InetSocketAddress address) {
        this.upstreams = upstreams;
        this.health = health;
        this.server = server;
        this.address = address;
    }

    /**
     * Checks every server once, then listens. Fails when no server answers at all; servers that do not answer
     * are marked down and the proxy starts without them.
     *
     * @param healthInterval how often the health loop checks every server and re-detects the primary
     */
    public static RunningProxy start(ProxyConfig config, List<UpstreamUrl> urls, Duration healthInterval)
            throws InterruptedException {
        return start(config, urls, healthInterval, TopologyListener.NONE, upstreams -> AdminHandler.NONE);
    }

    /**
     * @param listener hears downs, ups, role changes and health rounds (from the first check on)
     * @param admin    makes the handler of Gantry's own SQL, given the live upstream list
     */
    public static RunningProxy start(ProxyConfig config, List<UpstreamUrl> urls, Duration healthInterval,
                                     TopologyListener listener, Function<Upstreams, AdminHandler> admin)
            throws InterruptedException {
        ServerValidator.Report report = new ServerValidator(config.connectTimeout(), config.connectRetries())
                .validate(urls);
        String problem = report.fatalProblem();
        if (problem != null) {
            throw new IllegalStateException(problem);
        }
        for (ServerValidator.Unreachable unreachable : report.unreachable()) {
            LOG.warn("proxy: {} is unreachable at startup ({}); it starts marked down", unreachable.url().address(),
                    unreachable.reason());
        }
        Upstreams upstreams = new Upstreams(urls, Clock.systemUTC());
        upstreams.setListener(listener);
        HealthChecker health = new HealthChecker(upstreams, config.connectTimeout());
        try {
            health.checkNow();
            if (upstreams.servers().stream().noneMatch(UpstreamServer::isReachable)) {
                throw new IllegalStateException("no upstream server answers: " + String.join("; ",
                        upstreams.servers().stream().map(s -> s.address() + ": " + s.lastError()).toList()));
            }
            upstreams.primary().ifPresentOrElse(
                    p -> LOG.info("proxy: primary is {}; replicas: {}", p.address(),
                            upstreams.upReplicas().stream().map(UpstreamServer::address).toList()),
                    () -> LOG.warn("proxy: starting without a primary ({}); writes are refused until one appears",
                            upstreams.noPrimaryReason()));
            String version = serverVersion(upstreams, config.connectTimeout());
            ProxyServer server = new ProxyServer(config, upstreams, version, admin.apply(upstreams));
            InetSocketAddress bound = server.start();
            health.start(healthInterval);
            return new RunningProxy(upstreams, health, server, bound);
        } catch (RuntimeException | InterruptedException e) {
            health.close();
            throw e;
        }
    }

    /** The address clients connect to. */
    public InetSocketAddress address() {
        return address;
    }

    /** The live upstream list (roles, health). */
    public Upstreams upstreams() {
        return upstreams;
    }

    /** Client sessions open now. */
    public int openSessions() {
        return server.openSessions();
    }

    /** The version string clients see: the primary's (or the first server's that answers). */
    private static String serverVersion(Upstreams upstreams, Duration timeout) {
        UpstreamServer source = upstreams.primary()
                .orElseGet(() -> upstreams.servers().stream().filter(UpstreamServer::isReachable).findFirst().orElseThrow());
        try (Connection connection = ServiceConnections.open(source.url(), timeout);
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT VERSION()")) {
            rows.next();
            return rows.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the server version of " + source.address() + ": "
                    + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        server.close();
        health.close();
    }
}
