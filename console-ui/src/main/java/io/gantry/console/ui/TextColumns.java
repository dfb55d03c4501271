package io.gantry.console.ui;

import java.util.function.Function;
import javafx.beans.property.ReadOnlyStringWrapper;
import javafx.scene.control.TableColumn;

/** Read-only text columns of the console's tables of rows the engine wrote. */
public final class TextColumns {

    private TextColumns() {
    }

    /** A column titled {@code title}, {@code width} wide, showing {@code value} of each row. */
    public static <R> TableColumn<R, String> of(String title, double width, Function<R, String> value) {
        TableColumn<R, String> column = new TableColumn<>(title);
        column.setPrefWidth(width);
        column.setCellValueFactory(cell -> new ReadOnlyStringWrapper(value.apply(cell.getValue()))
                .getReadOnlyProperty());
        return column;
    }
}
