package io.gantry.console.weights;

import javafx.beans.property.BooleanProperty;
import javafx.beans.property.DoubleProperty;
import javafx.beans.property.IntegerProperty;
import javafx.beans.property.SimpleBooleanProperty;
import javafx.beans.property.SimpleDoubleProperty;
import javafx.beans.property.SimpleIntegerProperty;
import javafx.beans.property.SimpleStringProperty;
import javafx.beans.property.StringProperty;

/**
 * One server's slider: where the operator has it ({@link #valueProperty()}), the weight the engine confirmed
 * ({@link #engineWeightProperty()}), whether a change is on its way, and the last error.
 */
public final class WeightItem {

    private final String address;
    private final DoubleProperty value = new SimpleDoubleProperty();
    private final IntegerProperty engineWeight = new SimpleIntegerProperty();
    private final BooleanProperty dragging = new SimpleBooleanProperty();
    private final BooleanProperty pending = new SimpleBooleanProperty();
    private final StringProperty message = new SimpleStringProperty("");
    private final BooleanProperty failed = new SimpleBooleanProperty();

    WeightItem(String address, int weight) {
        this.address = address;
        engineWeight.set(weight);
        value.set(weight);
    }

    public String address() {
        return address;
    }

    /** The slider's position, 1..100. */
    public DoubleProperty valueProperty() {
        return value;
    }

    /** The weight as the engine has it. */
    public IntegerProperty engineWeightProperty() {
        return engineWeight;
    }

    /** The operator holds the slider: the engine's value does not move it meanwhile. */
    public BooleanProperty draggingProperty() {
        return dragging;
    }

    /** A change was sent and not yet answered. */
    public BooleanProperty pendingProperty() {
        return pending;
    }

    /** What happened to the last change: confirmed, or the engine's error. */
    public StringProperty messageProperty() {
        return message;
    }

    /** Whether {@link #messageProperty()} is an error. */
    public BooleanProperty failedProperty() {
        return failed;
    }
}
