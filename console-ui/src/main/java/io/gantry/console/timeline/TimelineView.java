package io.gantry.console.timeline;

import io.gantry.admin.protocol.TimelineEvent;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import javafx.animation.KeyFrame;
import javafx.animation.Timeline;
import javafx.beans.InvalidationListener;
import javafx.geometry.VPos;
import javafx.scene.Cursor;
import javafx.scene.control.Button;
import javafx.scene.control.Label;
import javafx.scene.control.TextArea;
import javafx.scene.control.ToggleButton;
import javafx.scene.control.ToolBar;
import javafx.scene.layout.BorderPane;
import javafx.scene.layout.Pane;
import javafx.scene.paint.Color;
import javafx.scene.shape.Circle;
import javafx.scene.shape.Line;
import javafx.scene.shape.Rectangle;
import javafx.scene.text.Font;
import javafx.scene.text.Text;

/**
 * The failover timeline: a lane per server (plus Gantry and the change stream), each entry a coloured dot at its
 * time. Click a dot for its full reason; the wheel zooms, dragging pans; "Follow live" returns to the present.
 */
public final class TimelineView extends BorderPane {

    private static final double LANE_LABEL_WIDTH = 140;
    private static final double MIN_LANE_HEIGHT = 34;
    private static final double MAX_LANE_HEIGHT = 64;
    private static final double AXIS_HEIGHT = 24;
    /** Room right of the present, so the newest entry and its label are never cut off. */
    private static final double RIGHT_MARGIN = 90;
    private static final Font LABEL_FONT = Font.font(10);

    private final TimelineViewModel model;
    private final Pane canvas = new Pane();
    private double dragFromX = Double.NaN;

    public TimelineView(TimelineViewModel model) {
        this.model = model;
        setId("timeline");
        Button zoomIn = new Button("Zoom in");
        zoomIn.setId("timeline-zoom-in");
        zoomIn.setOnAction(e -> model.zoomIn());
        Button zoomOut = new Button("Zoom out");
        zoomOut.setId("timeline-zoom-out");
        zoomOut.setOnAction(e -> model.zoomOut());
        Button back = new Button("\u25c0");
        back.setOnAction(e -> model.pan(-0.25));
        Button forward = new Button("\u25b6");
        forward.setOnAction(e -> model.pan(0.25));
        ToggleButton live = new ToggleButton("Follow live");
        live.setId("timeline-live");
        live.selectedProperty().bindBidirectional(model.followLiveProperty());
        Label window = new Label();
        window.textProperty().bind(javafx.beans.binding.Bindings.createStringBinding(
                () -> "window " + human(model.windowLengthProperty().get()), model.windowLengthProperty()));
        Label error = new Label();
        error.setStyle("-fx-text-fill: #c62828;");
        error.textProperty().bind(model.errorProperty());
        setTop(new ToolBar(zoomIn, zoomOut, back, forward, live, window, error));

        canvas.setId("timeline-lanes");
        canvas.setMinHeight(3 * MIN_LANE_HEIGHT + AXIS_HEIGHT);
        canvas.setStyle("-fx-background-color: white;");
        Rectangle clip = new Rectangle();
        clip.widthProperty().bind(canvas.widthProperty());
        clip.heightProperty().bind(canvas.heightProperty());
        canvas.setClip(clip);
        setCenter(canvas);

        TextArea detail = new TextArea();
        detail.setId("timeline-detail");
        detail.setEditable(false);
        detail.setWrapText(true);
        detail.setPrefRowCount(3);
        detail.textProperty().bind(model.detailProperty());
        setBottom(detail);

        canvas.setOnScroll(e -> {
            if (e.getDeltaY() != 0) {
                model.zoom(e.getDeltaY() > 0 ? 0.8 : 1.25);
            }
        });
        canvas.setOnMousePressed(e -> dragFromX = e.getX());
        canvas.setOnMouseDragged(e -> {
            double width = canvas.getWidth() - LANE_LABEL_WIDTH;
            if (!Double.isNaN(dragFromX) && width > 0 && Math.abs(e.getX() - dragFromX) > 3) {
                model.pan(-(e.getX() - dragFromX) / width);
                dragFromX = e.getX();
                canvas.setCursor(Cursor.CLOSED_HAND);
            }
        });
        canvas.setOnMouseReleased(e -> {
            dragFromX = Double.NaN;
            canvas.setCursor(Cursor.DEFAULT);
        });

        InvalidationListener redraw = o -> redraw();
        model.events().addListener(redraw);
        model.lanes().addListener(redraw);
        model.windowEndProperty().addListener(redraw);
        model.windowLengthProperty().addListener(redraw);
        model.selectedProperty().addListener(redraw);
        canvas.widthProperty().addListener(redraw);
        canvas.heightProperty().addListener(redraw);
        Timeline clock = new Timeline(new KeyFrame(javafx.util.Duration.millis(500), e -> model.tick()));
        clock.setCycleCount(Timeline.INDEFINITE);
        clock.play();
    }

    private void redraw() {
        double width = canvas.getWidth();
        List<String> lanes = model.lanes();
        canvas.setPrefHeight(lanes.size() * MIN_LANE_HEIGHT + AXIS_HEIGHT);
        canvas.getChildren().clear();
        // Lanes share the height there is, within bounds.
        double laneHeight = Math.max(MIN_LANE_HEIGHT, Math.min(MAX_LANE_HEIGHT,
                (canvas.getHeight() - AXIS_HEIGHT) / Math.max(1, lanes.size())));
        if (width <= LANE_LABEL_WIDTH) {
            return;
        }
        Instant start = model.windowStart();
        Instant end = model.windowEndProperty().get();
        double span = Math.max(1, end.toEpochMilli() - start.toEpochMilli());
        double plot = width - LANE_LABEL_WIDTH - RIGHT_MARGIN;
        for (int i = 0; i < lanes.size(); i++) {
            double y = i * laneHeight;
            Rectangle band = new Rectangle(0, y, width, laneHeight);
            band.setFill(i % 2 == 0 ? Color.web("#f7f7f7") : Color.WHITE);
            band.setMouseTransparent(true);
            Text name = new Text(8, y + laneHeight / 2, lanes.get(i));
            name.setTextOrigin(VPos.CENTER);
            name.setFont(Font.font(12));
            name.setMouseTransparent(true);
            canvas.getChildren().addAll(band, name);
        }
        double axisY = lanes.size() * laneHeight;
        Line axis = new Line(LANE_LABEL_WIDTH, axisY, LANE_LABEL_WIDTH + plot, axisY);
        axis.setStroke(Color.GRAY);
        canvas.getChildren().add(axis);
        long step = tickStep((long) span);
        long first = (start.toEpochMilli() / step + 1) * step;
        DateTimeFormatter format = DateTimeFormatter.ofPattern(step >= 86_400_000 ? "MM-dd" : step >= 60_000
                ? "HH:mm" : "HH:mm:ss").withZone(ZoneId.systemDefault());
        for (long t = first; t < end.toEpochMilli(); t += step) {
            double x = LANE_LABEL_WIDTH + (t - start.toEpochMilli()) / span * plot;
            Line grid = new Line(x, 0, x, axisY + 4);
            grid.setStroke(Color.web("#e0e0e0"));
            grid.setMouseTransparent(true);
            Text label = new Text(x - 22, axisY + 16, format.format(Instant.ofEpochMilli(t)));
            label.setFont(Font.font(11));
            label.setFill(Color.DIMGRAY);
            canvas.getChildren().addAll(grid, label);
        }
        TimelineEvent selected = model.selectedProperty().get();
        List<TimelineLayout.Placed> placed = new ArrayList<>();
        for (TimelineEvent event : model.events()) {
            int lane = lanes.indexOf(TimelineViewModel.laneOf(event));
            if (lane >= 0 && !event.at().isBefore(start) && !event.at().isAfter(end)) {
                placed.add(new TimelineLayout.Placed(event, lane,
                        LANE_LABEL_WIDTH + (event.at().toEpochMilli() - start.toEpochMilli()) / span * plot));
            }
        }
        for (TimelineLayout.Mark mark : TimelineLayout.layout(placed, lanes.size(), TimelineView::labelWidth)) {
            TimelineEvent newest = mark.newest();
            boolean chosen = selected != null && mark.events().contains(selected);
            double y = mark.lane() * laneHeight + laneHeight / 2;
            Circle dot = new Circle(mark.x(), y, chosen ? 7 : 5.5, colour(newest.kind()));
            dot.setStroke(chosen ? Color.BLACK : mark.events().size() > 1 ? colour(newest.kind()).darker()
                    : Color.WHITE);
            dot.setStrokeWidth(chosen || mark.events().size() > 1 ? 2 : 1);
            dot.getStyleClass().add("timeline-event");
            dot.setId("event-" + newest.kind() + "-" + (newest.server() == null ? "gantry" : newest.server()));
            dot.setUserData(newest);
            dot.setCursor(Cursor.HAND);
            dot.setOnMouseClicked(e -> {
                model.select(mark.events());
                e.consume();
            });
            dot.setOnMousePressed(javafx.event.Event::consume);
            canvas.getChildren().add(dot);
            if (mark.row() == TimelineLayout.Row.NONE) {
                continue;
            }
            Text label = new Text(mark.labelX(), mark.row() == TimelineLayout.Row.ABOVE ? y - 7 : y + 14,
                    mark.label());
            label.setFont(LABEL_FONT);
            label.setFill(colour(newest.kind()).darker());
            label.setMouseTransparent(true);
            canvas.getChildren().add(label);
        }
    }

    private static double labelWidth(String text) {
        Text measured = new Text(text);
        measured.setFont(LABEL_FONT);
        return measured.getLayoutBounds().getWidth();
    }

    /** A step of round length that gives 4 to 10 ticks over the span. */
    private static long tickStep(long span) {
        long[] steps = {1_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000,
            3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000};
        for (long step : steps) {
            if (span / step <= 8) {
                return step;
            }
        }
        return 86_400_000;
    }

    static Color colour(String kind) {
        return switch (kind) {
            case "down" -> Color.web("#c62828");
            case "up" -> Color.web("#2e7d32");
            case "broken" -> Color.web("#ef6c00");
            case "diverged" -> Color.web("#6a1b9a");
            case "role_change" -> Color.web("#1565c0");
            case "cdc_started" -> Color.web("#00897b");
            case "cdc_moved" -> Color.web("#00695c");
            case "cdc_skipped" -> Color.web("#f9a825");
            case "cdc_stopped" -> Color.web("#546e7a");
            case "list_changed" -> Color.web("#6d4c41");
            case "weight_changed" -> Color.web("#3949ab");
            case "host_blocked" -> Color.web("#ad1457");
            case "transactions_replayed" -> Color.web("#0277bd");
            case "take_over" -> Color.web("#00838f");
            default -> Color.web("#757575");
        };
    }

    private static String human(Duration window) {
        long seconds = window.toSeconds();
        if (seconds < 120) {
            return seconds + " s";
        }
        if (seconds < 7200) {
            return seconds / 60 + " min";
        }
        if (seconds < 172_800) {
            return seconds / 3600 + " h";
        }
        return seconds / 86_400 + " d";
    }
}
