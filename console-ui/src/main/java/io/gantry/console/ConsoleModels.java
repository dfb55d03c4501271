package io.gantry.console;

import io.gantry.console.chart.HealthChartViewModel;
import io.gantry.console.cluster.ClusterViewModel;
import io.gantry.console.engine.EngineConnection;
import io.gantry.console.export.ExportViewModel;
import io.gantry.console.hosts.BlockedHostsViewModel;
import io.gantry.console.pools.PoolsViewModel;
import io.gantry.console.queries.QueriesViewModel;
import io.gantry.console.servers.ServerTableViewModel;
import io.gantry.console.status.ConnectionViewModel;
import io.gantry.console.timeline.TimelineViewModel;
import io.gantry.console.weights.WeightSlidersViewModel;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Executor;

/**
 * The console's state without its views: the connection to the engine and a view-model per feature, each hearing
 * the connection. Nothing here needs the FX toolkit; the views bind to these.
 */
public final class ConsoleModels implements AutoCloseable {

    private final EngineConnection engine;
    private final ConnectionViewModel connection;
    private final ServerTableViewModel servers;
    private final TimelineViewModel timeline;
    private final HealthChartViewModel chart;
    private final WeightSlidersViewModel weights;
    private final BlockedHostsViewModel blockedHosts;
    private final PoolsViewModel pools;
    private final QueriesViewModel queries;
    private final ClusterViewModel cluster;
    private final ExportViewModel export;
    private final ExecutorService exports = Executors.newSingleThreadExecutor(r -> {
        Thread thread = new Thread(r, "gantry-console-export");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * @param ui where every update is applied: {@link io.gantry.console.ui.UiExecutor#fx()} in the application
     */
    public ConsoleModels(Path socket, Executor ui, Clock clock) {
        engine = new EngineConnection(socket);
        connection = new ConnectionViewModel(ui, socket);
        servers = new ServerTableViewModel(ui);
        timeline = new TimelineViewModel(ui, engine, clock);
        chart = new HealthChartViewModel(ui, engine, clock);
        weights = new WeightSlidersViewModel(ui, engine);
        blockedHosts = new BlockedHostsViewModel(ui, engine);
        pools = new PoolsViewModel(ui, engine, clock);
        queries = new QueriesViewModel(ui, exports);
        cluster = new ClusterViewModel(ui, engine, clock);
        export = new ExportViewModel(ui, engine, clock, exports);
        engine.addListener(connection);
        engine.addListener(servers);
        engine.addListener(timeline);
        engine.addListener(chart);
        engine.addListener(weights);
        engine.addListener(blockedHosts);
        engine.addListener(pools);
        engine.addListener(queries);
        engine.addListener(cluster);
    }

    /** Starts connecting (and reconnecting whenever the engine goes away). */
    public void start() {
        engine.start();
    }

    public EngineConnection engine() {
        return engine;
    }

    public ConnectionViewModel connection() {
        return connection;
    }

    public ServerTableViewModel servers() {
        return servers;
    }

    public TimelineViewModel timeline() {
        return timeline;
    }

    public HealthChartViewModel chart() {
        return chart;
    }

    public WeightSlidersViewModel weights() {
        return weights;
    }

    public BlockedHostsViewModel blockedHosts() {
        return blockedHosts;
    }

    public PoolsViewModel pools() {
        return pools;
    }

    public QueriesViewModel queries() {
        return queries;
    }

    public ClusterViewModel cluster() {
        return cluster;
    }

    public ExportViewModel export() {
        return export;
    }

    @Override
    public void close() {
        engine.close();
        exports.shutdownNow();
    }
}
