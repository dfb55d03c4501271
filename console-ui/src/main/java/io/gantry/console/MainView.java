package io.gantry.console;

import io.gantry.console.chart.HealthChartView;
import io.gantry.console.cluster.ClusterView;
import io.gantry.console.export.ExportDialog;
import io.gantry.console.export.ExportViewModel;
import io.gantry.console.hosts.BlockedHostsView;
import io.gantry.console.pools.PoolsView;
import io.gantry.console.queries.QueriesView;
import io.gantry.console.servers.ServerRow;
import io.gantry.console.servers.ServerTableView;
import io.gantry.console.status.StatusBarView;
import io.gantry.console.timeline.TimelineView;
import io.gantry.console.weights.WeightSlidersView;
import java.util.ArrayList;
import java.util.List;
import javafx.geometry.Orientation;
import javafx.scene.control.Button;
import javafx.scene.control.SplitPane;
import javafx.scene.control.Tab;
import javafx.scene.control.TabPane;
import javafx.scene.control.ToolBar;
import javafx.scene.layout.BorderPane;

/**
 * The window: the server table on top, the timeline, chart, sliders, blocked hosts, connection pools, the statement
 * digests and the cluster in tabs below, the status bar at the foot.
 */
public final class MainView extends BorderPane {

    private final ConsoleModels models;
    private final TabPane tabs = new TabPane();
    private final Tab timeline;
    private final Tab chart;
    private final Tab weights;
    private final Tab blockedHosts;
    private final Tab pools;
    private final Tab queries;
    private ExportDialog export;

    public MainView(ConsoleModels models) {
        this.models = models;
        setId("console");
        Button exportButton = new Button("Export health CSV ...");
        exportButton.setId("open-export");
        exportButton.setOnAction(e -> openExport());
        setTop(new ToolBar(exportButton));

        ServerTableView table = new ServerTableView(models.servers());
        timeline = new Tab("Failover timeline", new TimelineView(models.timeline()));
        timeline.setId("tab-timeline");
        chart = new Tab("Lag and RTT", new HealthChartView(models.chart()));
        chart.setId("tab-chart");
        weights = new Tab("Weights", new WeightSlidersView(models.weights()));
        weights.setId("tab-weights");
        blockedHosts = new Tab("Blocked hosts", new BlockedHostsView(models.blockedHosts()));
        blockedHosts.setId("tab-blocked-hosts");
        pools = new Tab("Pools", new PoolsView(models.pools()));
        pools.setId("tab-pools");
        queries = new Tab("Queries", new QueriesView(models.queries()));
        queries.setId("tab-queries");
        Tab cluster = new Tab("Cluster", new ClusterView(models.cluster()));
        cluster.setId("tab-cluster");
        for (Tab tab : List.of(timeline, chart, weights, blockedHosts, pools, queries, cluster)) {
            tab.setClosable(false);
        }
        tabs.getTabs().addAll(timeline, chart, weights, blockedHosts, pools, queries, cluster);
        SplitPane split = new SplitPane(table, tabs);
        split.setOrientation(Orientation.VERTICAL);
        split.setDividerPositions(0.25);
        setCenter(split);
        setBottom(new StatusBarView(models.connection()));
    }

    public void showTimeline() {
        tabs.getSelectionModel().select(timeline);
    }

    public void showChart() {
        tabs.getSelectionModel().select(chart);
    }

    public void showWeights() {
        tabs.getSelectionModel().select(weights);
    }

    public void showBlockedHosts() {
        tabs.getSelectionModel().select(blockedHosts);
    }

    public void showPools() {
        tabs.getSelectionModel().select(pools);
    }

    public void showQueries() {
        tabs.getSelectionModel().select(queries);
    }

    /** Opens the export dialog (once; again brings it to the front), with the servers the table knows now. */
    public ExportDialog openExport() {
        List<String> servers = new ArrayList<>();
        servers.add(ExportViewModel.ALL_SERVERS);
        models.servers().rows().stream().map(ServerRow::address).sorted(
                io.gantry.console.timeline.TimelineViewModel::compareAddresses).forEach(servers::add);
        models.export().servers().setAll(servers);
        if (!servers.contains(models.export().serverProperty().get())) {
            models.export().serverProperty().set(ExportViewModel.ALL_SERVERS);
        }
        if (export == null) {
            export = new ExportDialog(getScene().getWindow(), models.export());
        }
        export.show();
        export.toFront();
        return export;
    }
}
