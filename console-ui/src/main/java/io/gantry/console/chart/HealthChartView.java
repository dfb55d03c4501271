package io.gantry.console.chart;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javafx.animation.KeyFrame;
import javafx.animation.Timeline;
import javafx.collections.FXCollections;
import javafx.scene.chart.LineChart;
import javafx.scene.chart.NumberAxis;
import javafx.scene.chart.XYChart;
import javafx.scene.control.ComboBox;
import javafx.scene.control.Label;
import javafx.scene.control.ListCell;
import javafx.scene.control.ProgressIndicator;
import javafx.scene.control.ToolBar;
import javafx.scene.layout.BorderPane;
import javafx.scene.layout.VBox;
import javafx.scene.layout.Priority;
import javafx.util.StringConverter;

/** Lag and RTT per server over the chosen window, one line per server; refreshed every 2 s. */
public final class HealthChartView extends BorderPane {

    private final LineChart<Number, Number> lag = chart("Replication lag (ms)");
    private final LineChart<Number, Number> rtt = chart("Health-check round trip (ms)");

    public HealthChartView(HealthChartViewModel model) {
        setId("health-chart");
        ComboBox<Duration> window = new ComboBox<>(FXCollections.observableArrayList(HealthChartViewModel.WINDOWS));
        window.setId("chart-window");
        window.valueProperty().bindBidirectional(model.windowProperty());
        StringConverter<Duration> names = new StringConverter<>() {
            @Override
            public String toString(Duration d) {
                return d == null ? "" : d.toDays() >= 1 ? "last " + d.toDays() + " d" : d.toHours() >= 1
                        ? "last " + d.toHours() + " h" : "last " + d.toMinutes() + " min";
            }

            @Override
            public Duration fromString(String s) {
                return null;
            }
        };
        window.setConverter(names);
        window.setButtonCell(new ListCell<>() {
            @Override
            protected void updateItem(Duration item, boolean empty) {
                super.updateItem(item, empty);
                setText(empty ? null : names.toString(item));
            }
        });
        ProgressIndicator loading = new ProgressIndicator();
        loading.setPrefSize(18, 18);
        loading.visibleProperty().bind(model.loadingProperty());
        Label error = new Label();
        error.setStyle("-fx-text-fill: #c62828;");
        error.textProperty().bind(model.errorProperty());
        setTop(new ToolBar(new Label("Window"), window, loading, error));
        VBox charts = new VBox(lag, rtt);
        VBox.setVgrow(lag, Priority.ALWAYS);
        VBox.setVgrow(rtt, Priority.ALWAYS);
        setCenter(charts);
        model.seriesProperty().addListener((o, was, now) -> draw(now));
        Timeline refresh = new Timeline(new KeyFrame(javafx.util.Duration.seconds(2), e -> model.refresh()));
        refresh.setCycleCount(Timeline.INDEFINITE);
        refresh.play();
    }

    private void draw(HealthChartViewModel.Series series) {
        if (series == null) {
            return;
        }
        for (LineChart<Number, Number> chart : List.of(lag, rtt)) {
            NumberAxis x = (NumberAxis) chart.getXAxis();
            x.setLowerBound(series.from().toEpochMilli());
            x.setUpperBound(series.until().toEpochMilli());
            x.setTickUnit((series.until().toEpochMilli() - series.from().toEpochMilli()) / 6.0);
        }
        fill(lag, series.lag(), series.maxLag());
        fill(rtt, series.rtt(), Map.of());
    }

    /** Keeps one series per server and replaces its points, so lines and colours stay put between refreshes. */
    private static void fill(LineChart<Number, Number> chart, Map<String, List<HealthChartViewModel.Point>> data,
                             Map<String, Long> maxLag) {
        List<XYChart.Series<Number, Number>> all = new ArrayList<>(chart.getData());
        List<String> servers = new ArrayList<>(data.keySet());
        while (all.size() > servers.size()) {
            chart.getData().remove(all.remove(all.size() - 1));
        }
        for (int i = 0; i < servers.size(); i++) {
            String server = servers.get(i);
            Long max = maxLag.get(server);
            String name = server + (max == null ? "" : "  (max " + max + " ms)");
            List<XYChart.Data<Number, Number>> points = new ArrayList<>();
            for (HealthChartViewModel.Point point : data.get(server)) {
                points.add(new XYChart.Data<>(point.atMillis(), point.value()));
            }
            if (i < all.size()) {
                all.get(i).setName(name);
                all.get(i).getData().setAll(points);
            } else {
                XYChart.Series<Number, Number> fresh = new XYChart.Series<>(name,
                        FXCollections.observableArrayList(points));
                chart.getData().add(fresh);
            }
        }
    }

    private static LineChart<Number, Number> chart(String title) {
        DateTimeFormatter format = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneId.systemDefault());
        NumberAxis x = new NumberAxis();
        x.setAutoRanging(false);
        x.setTickLabelFormatter(new StringConverter<>() {
            @Override
            public String toString(Number millis) {
                return format.format(Instant.ofEpochMilli(millis.longValue()));
            }

            @Override
            public Number fromString(String s) {
                return null;
            }
        });
        NumberAxis y = new NumberAxis();
        y.setForceZeroInRange(true);
        LineChart<Number, Number> chart = new LineChart<>(x, y);
        chart.setTitle(title);
        chart.setCreateSymbols(false);
        chart.setAnimated(false);
        chart.setLegendVisible(true);
        chart.setMinHeight(150);
        // Room for the last tick's label at the right edge.
        chart.setPadding(new javafx.geometry.Insets(4, 28, 4, 4));
        return chart;
    }
}
