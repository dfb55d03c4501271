package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TableFilterTest {

    @Test
    void defaultSelectsEveryTableOfTheServiceDatabaseWhateverTheCase() {
        TableFilter filter = TableFilter.allOf("App");
        assertThat(filter.selects("App", "orders")).isTrue();
        assertThat(filter.selects("app", "customers")).isTrue();
        assertThat(filter.selects("APP", "created_later")).isTrue();
        assertThat(filter.selects("billing", "orders")).isFalse();
        assertThat(filter.selects("app2", "orders")).isFalse();
        assertThat(filter.selects(null, "orders")).isFalse();
        assertThat(filter.listed()).isEmpty();
        assertThat(filter.database()).isEqualTo("App");
        assertThat(filter).hasToString("every table of App");
    }

    @Test
    void blankOrMissingListMeansEveryTableOfTheServiceDatabase() {
        for (String text : new String[] {null, "", "   "}) {
            TableFilter filter = TableFilter.parse(text, "app");
            assertThat(filter.listed()).isEmpty();
            assertThat(filter.selects("app", "anything")).isTrue();
            assertThat(filter.selects("other", "anything")).isFalse();
        }
    }

    @Test
    void listedTablesAreTheOnlyOnesSelected() {
        TableFilter filter = TableFilter.parse("app.orders,billing.Invoices", "app");
        assertThat(filter.listed()).containsExactly(new TableFilter.Table("app", "orders"),
                new TableFilter.Table("billing", "Invoices"));
        assertThat(filter.selects("app", "orders")).isTrue();
        assertThat(filter.selects("APP", "ORDERS")).isTrue();
        assertThat(filter.selects("billing", "invoices")).isTrue();
        assertThat(filter.selects("app", "customers")).as("another table of the service database").isFalse();
        assertThat(filter.selects("billing", "orders")).isFalse();
        assertThat(filter.selects("app", "invoices")).isFalse();
        assertThat(filter.selects(null, "orders")).isFalse();
        assertThat(filter.database()).isEqualTo("app");
        assertThat(filter).hasToString("app.orders,billing.Invoices");
    }

    @Test
    void blanksAroundEntriesAreAllowed() {
        TableFilter filter = TableFilter.parse("  app.orders ,\tapp.customers  ", "app");
        assertThat(filter.listed()).containsExactly(new TableFilter.Table("app", "orders"),
                new TableFilter.Table("app", "customers"));
        assertThat(filter.selects("app", "customers")).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"orders", ".orders", "app.", "app.orders.x", "`app`.`orders`", "app.`orders`",
            "app.my orders", "my app.orders", "."})
    void entryThatIsNotDatabaseDotTableIsRejectedByName(String entry) {
        assertThatThrownBy(() -> TableFilter.parse("app.ok," + entry, "app"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--cdc-tables: '" + entry + "' is not database.table");
    }

    @Test
    void emptyEntryIsRejected() {
        assertThatThrownBy(() -> TableFilter.parse("a.b,,c.d", "app"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--cdc-tables: '' is not database.table");
        assertThatThrownBy(() -> TableFilter.parse("a.b,", "app"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--cdc-tables: '' is not database.table");
    }

    @Test
    void blankServiceDatabaseIsRejected() {
        for (String database : new String[] {null, "", "  "}) {
            assertThatThrownBy(() -> TableFilter.allOf(database))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("needs a database");
            assertThatThrownBy(() -> TableFilter.parse(" ", database))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("needs a database");
        }
    }
}
