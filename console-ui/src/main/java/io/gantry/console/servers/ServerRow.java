package io.gantry.console.servers;

import io.gantry.admin.protocol.ServerState;
import java.time.Instant;
import java.util.Objects;
import javafx.beans.Observable;
import javafx.beans.property.BooleanProperty;
import javafx.beans.property.IntegerProperty;
import javafx.beans.property.ObjectProperty;
import javafx.beans.property.SimpleBooleanProperty;
import javafx.beans.property.SimpleIntegerProperty;
import javafx.beans.property.SimpleObjectProperty;
import javafx.beans.property.SimpleStringProperty;
import javafx.beans.property.StringProperty;

/**
 * One server's row: a property per column, updated in place when its state changes (so the table redraws the
 * changed cells only and never flickers).
 */
public final class ServerRow {

    private final String address;
    private final int port;
    private final StringProperty role = new SimpleStringProperty();
    private final StringProperty purpose = new SimpleStringProperty();
    private final StringProperty health = new SimpleStringProperty();
    private final IntegerProperty weight = new SimpleIntegerProperty();
    private final BooleanProperty activeCdc = new SimpleBooleanProperty();
    private final ObjectProperty<Long> lagMs = new SimpleObjectProperty<>();
    private final ObjectProperty<Double> rttMs = new SimpleObjectProperty<>();
    private final ObjectProperty<Double> connectMs = new SimpleObjectProperty<>();
    private final IntegerProperty connections = new SimpleIntegerProperty();
    private final ObjectProperty<Instant> downSince = new SimpleObjectProperty<>();
    private final ObjectProperty<Instant> lastOk = new SimpleObjectProperty<>();

    ServerRow(ServerState state) {
        this.address = state.address();
        this.port = state.port();
        update(state);
    }

    /** Takes the new state; a property whose value is the same does not fire. */
    void update(ServerState state) {
        setIfChanged(role, state.role());
        setIfChanged(purpose, state.purpose());
        setIfChanged(health, state.health());
        weight.set(state.weight());
        activeCdc.set(state.activeCdc());
        setIfChanged(lagMs, state.lagMs());
        setIfChanged(rttMs, state.rttMs());
        setIfChanged(connectMs, state.connectMs());
        connections.set(state.connections());
        setIfChanged(downSince, state.downSince());
        setIfChanged(lastOk, state.lastOk());
    }

    private static <T> void setIfChanged(javafx.beans.property.Property<T> property, T value) {
        if (!Objects.equals(property.getValue(), value)) {
            property.setValue(value);
        }
    }

    /** What the table re-sorts on when it changes. */
    Observable[] observables() {
        return new Observable[] {role, purpose, health, weight, activeCdc, lagMs, rttMs, connectMs, connections,
                downSince, lastOk};
    }

    public String address() {
        return address;
    }

    public int port() {
        return port;
    }

    public StringProperty roleProperty() {
        return role;
    }

    public StringProperty purposeProperty() {
        return purpose;
    }

    public StringProperty healthProperty() {
        return health;
    }

    public IntegerProperty weightProperty() {
        return weight;
    }

    public BooleanProperty activeCdcProperty() {
        return activeCdc;
    }

    public ObjectProperty<Long> lagMsProperty() {
        return lagMs;
    }

    public ObjectProperty<Double> rttMsProperty() {
        return rttMs;
    }

    public ObjectProperty<Double> connectMsProperty() {
        return connectMs;
    }

    public IntegerProperty connectionsProperty() {
        return connections;
    }

    public ObjectProperty<Instant> downSinceProperty() {
        return downSince;
    }

    public ObjectProperty<Instant> lastOkProperty() {
        return lastOk;
    }
}
