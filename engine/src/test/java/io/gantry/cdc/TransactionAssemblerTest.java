package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.shyiko.mysql.binlog.event.DeleteRowsEventData;
import com.github.shyiko.mysql.binlog.event.Event;
import com.github.shyiko.mysql.binlog.event.EventData;
import com.github.shyiko.mysql.binlog.event.EventHeaderV4;
import com.github.shyiko.mysql.binlog.event.EventType;
import com.github.shyiko.mysql.binlog.event.GtidEventData;
import com.github.shyiko.mysql.binlog.event.MariadbGtidEventData;
import com.github.shyiko.mysql.binlog.event.QueryEventData;
import com.github.shyiko.mysql.binlog.event.TableMapEventData;
import com.github.shyiko.mysql.binlog.event.TableMapEventMetadata;
import com.github.shyiko.mysql.binlog.event.UpdateRowsEventData;
import com.github.shyiko.mysql.binlog.event.WriteRowsEventData;
import com.github.shyiko.mysql.binlog.event.XAPrepareEventData;
import com.github.shyiko.mysql.binlog.event.XidEventData;
import com.github.shyiko.mysql.binlog.event.deserialization.ColumnType;
import io.gantry.gtid.Gtid;
import io.gantry.gtid.MariaDbGtid;
import io.gantry.gtid.MySqlGtid;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class TransactionAssemblerTest {

    private static final String SERVER = "db1:3306";
    private static final int UTF8MB4 = 45;
    private static final long ORDERS = 101;
    private static final long AUDIT = 102;
    private static final long OTHER_DB = 103;
    private static final UUID SOURCE = UUID.fromString("3e11fa47-71ca-11e1-9e33-c80aa9429562");

    private final List<Gtid> gtids = new ArrayList<>();
    private final List<ChangeTransaction> passedOn = new ArrayList<>();
    private TransactionAssembler assembler = assembler(TableFilter.allOf("app"));

    // ---- MariaDB ----

    @Test
    void mariaDbTransactionIsPassedOnAtItsXidWithItsRows() {
        feed(1_000, mariaDbGtid(1, 3306, 42, 0));
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        feed(1_000, write(ORDERS, row(1, "ann"), row(2, "bob")));
        assertThat(passedOn).as("nothing before the commit").isEmpty();

        feed(1_700_000_123_000L, xid());

        assertThat(gtids).containsExactly(new MariaDbGtid(1, 3306, 42));
        assertThat(passedOn).hasSize(1);
        ChangeTransaction transaction = passedOn.get(0);
        assertThat(transaction.gtid()).isEqualTo("1-3306-42");
        assertThat(transaction.server()).isEqualTo(SERVER);
        assertThat(transaction.commitTime()).isEqualTo(Instant.ofEpochSecond(1_700_000_123));
        assertThat(transaction.changes()).containsExactly(
                new RowChange("app", "orders", ChangeOp.INSERT, null, Map.of("id", 1L, "name", "ann")),
                new RowChange("app", "orders", ChangeOp.INSERT, null, Map.of("id", 2L, "name", "bob")));
        assertThat(transaction.changes().get(0).after()).containsExactly(Map.entry("id", 1L), Map.entry("name", "ann"));
    }

    @Test
    void aRowOfAWatchedTableMarksItsTransactionAndGoesNowhere() {
        assembler = assembler(TableFilter.allOf("app").watching(new TableFilter.Table("gantry_cluster",
                "config_versions")));
        feed(1_000, mariaDbGtid(0, 1, 1, 0));
        feed(1_000, tableMap(OTHER_DB, "GANTRY_CLUSTER", "config_versions"));
        feed(1_000, write(OTHER_DB, row(3, "v3")));
        feed(2_000, xid());
        feed(3_000, mariaDbGtid(0, 1, 2, 0));
        feed(3_000, tableMap(ORDERS, "app", "orders"));
        feed(3_000, write(ORDERS, row(1, "ann")));
        feed(4_000, xid());
        feed(5_000, mariaDbGtid(0, 1, 3, 0));
        feed(5_000, tableMap(AUDIT, "gantry_cluster", "instances"));
        feed(5_000, write(AUDIT, row(1, "a")));
        feed(6_000, xid());

        assertThat(passedOn).extracting(ChangeTransaction::changesWatched).containsExactly(true, false, false);
        assertThat(passedOn.get(0).changes()).as("not for the sink").isEmpty();
        assertThat(passedOn.get(1).changes()).hasSize(1);
    }

    @Test
    void anAccountStatementOrAGrantTableRowMarksItsTransactionAsChangingAccounts() {
        feed(1_000, mariaDbGtid(0, 1, 1, MariadbGtidEventData.FL_STANDALONE));
        feed(1_000, query("ALTER USER 'app'@'%' IDENTIFIED BY 'new'"));
        feed(2_000, mariaDbGtid(0, 1, 2, 0));
        feed(2_000, tableMap(OTHER_DB, "mysql", "global_priv"));
        UpdateRowsEventData grant = new UpdateRowsEventData();
        grant.setTableId(OTHER_DB);
        grant.setIncludedColumnsBeforeUpdate(columns(0, 1));
        grant.setIncludedColumns(columns(0, 1));
        grant.setRows(List.of(Map.entry(row(1, "before"), row(1, "after"))));
        feed(2_000, grant);
        feed(2_000, xid());
        feed(3_000, mariaDbGtid(0, 1, 3, 0));
        feed(3_000, tableMap(ORDERS, "app", "orders"));
        feed(3_000, write(ORDERS, row(1, "ann")));
        feed(3_000, xid());

        assertThat(passedOn).extracting(ChangeTransaction::changesAccounts).containsExactly(true, true, false);
        assertThat(passedOn.get(1).changes()).as("mysql.* rows go to no sink").isEmpty();
    }

    @Test
    void eachTransactionCarriesOnlyItsOwnRows() {
        feed(1_000, mariaDbGtid(0, 1, 1, 0));
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        feed(1_000, write(ORDERS, row(1, "ann")));
        feed(2_000, xid());
        feed(3_000, mariaDbGtid(0, 1, 2, 0));
        feed(3_000, write(ORDERS, row(2, "bob"))); // the table map of the previous transaction still holds
        feed(4_000, xid());

        assertThat(passedOn).extracting(ChangeTransaction::gtid).containsExactly("0-1-1", "0-1-2");
        assertThat(passedOn).extracting(ChangeTransaction::commitTime)
                .containsExactly(Instant.ofEpochSecond(2), Instant.ofEpochSecond(4));
        assertThat(passedOn.get(0).changes()).extracting(RowChange::after)
                .containsExactly(Map.of("id", 1L, "name", "ann"));
        assertThat(passedOn.get(1).changes()).extracting(RowChange::after)
                .containsExactly(Map.of("id", 2L, "name", "bob"));
    }

    @Test
    void updateCarriesTheBeforeAndAfterImages() {
        feed(1_000, mariaDbGtid(0, 1, 5, 0));
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        UpdateRowsEventData update = new UpdateRowsEventData();
        update.setTableId(ORDERS);
        update.setIncludedColumnsBeforeUpdate(columns(0)); // a minimal before image: the key only
        update.setIncludedColumns(columns(0, 1));
        update.setRows(List.of(Map.entry(values(7), row(7, "new name"))));
        feed(1_000, update);
        feed(2_000, xid());

        assertThat(passedOn).singleElement().satisfies(t -> assertThat(t.changes()).containsExactly(
                new RowChange("app", "orders", ChangeOp.UPDATE, Map.of("id", 7L),
                        Map.of("id", 7L, "name", "new name"))));
    }

    @Test
    void deleteCarriesOnlyTheBeforeImage() {
        feed(1_000, mariaDbGtid(0, 1, 6, 0));
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        DeleteRowsEventData delete = new DeleteRowsEventData();
        delete.setTableId(ORDERS);
        delete.setIncludedColumns(columns(0, 1));
        delete.setRows(List.of(row(3, "gone"), row(4, "also gone")));
        feed(1_000, delete);
        feed(2_000, xid());

        assertThat(passedOn).singleElement().satisfies(t -> assertThat(t.changes()).containsExactly(
                new RowChange("app", "orders", ChangeOp.DELETE, Map.of("id", 3L, "name", "gone"), null),
                new RowChange("app", "orders", ChangeOp.DELETE, Map.of("id", 4L, "name", "also gone"), null)));
    }

    @Test
    void standaloneDdlIsATransactionWithoutChanges() {
        feed(1_000, mariaDbGtid(0, 1, 9, MariadbGtidEventData.FL_STANDALONE | MariadbGtidEventData.FL_DDL));
        assertThat(passedOn).isEmpty();
        feed(5_000, query("CREATE TABLE app.t (id INT PRIMARY KEY)"));

        assertThat(gtids).containsExactly(new MariaDbGtid(0, 1, 9));
        assertThat(passedOn).singleElement().satisfies(t -> {
            assertThat(t.gtid()).isEqualTo("0-1-9");
            assertThat(t.commitTime()).isEqualTo(Instant.ofEpochSecond(5));
            assertThat(t.changes()).isEmpty();
        });
    }

    @Test
    void queryInsideAnImpliedBeginDoesNotEndTheTransaction() {
        // Without FL_STANDALONE the GTID opens a transaction: a statement inside it (statement-format rows, or an
        // annotation) is not a commit.
        feed(1_000, mariaDbGtid(0, 1, 10, 0));
        feed(1_000, query("INSERT INTO app.orders VALUES (1, 'ann')"));
        assertThat(passedOn).isEmpty();
        feed(2_000, xid());
        assertThat(passedOn).extracting(ChangeTransaction::gtid).containsExactly("0-1-10");
    }

    @Test
    void commitQueryEndsATransactionOnNonTransactionalTables() {
        feed(1_000, mariaDbGtid(0, 1, 11, 0));
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        feed(1_000, write(ORDERS, row(1, "ann")));
        assertThat(passedOn).isEmpty();
        feed(8_000, query(" COMMIT "));

        assertThat(passedOn).singleElement().satisfies(t -> {
            assertThat(t.gtid()).isEqualTo("0-1-11");
            assertThat(t.commitTime()).isEqualTo(Instant.ofEpochSecond(8));
            assertThat(t.changes()).extracting(RowChange::after).containsExactly(Map.of("id", 1L, "name", "ann"));
        });
    }

    @Test
    void rollbackQueryAlsoPassesOnTheNonTransactionalRows() {
        feed(1_000, mariaDbGtid(0, 1, 12, 0));
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        feed(1_000, write(ORDERS, row(1, "ann")));
        feed(2_000, query("rollback"));

        assertThat(passedOn).singleElement().satisfies(t -> {
            assertThat(t.gtid()).isEqualTo("0-1-12");
            assertThat(t.changes()).hasSize(1);
        });
    }

    // ---- MySQL ----

    @Test
    void mysqlTransactionRunsFromItsBeginQueryToItsXid() {
        feed(1_000, mysqlGtid(23));
        feed(1_000, query("BEGIN"));
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        feed(1_000, write(ORDERS, row(1, "ann")));
        assertThat(passedOn).as("BEGIN is not a standalone statement").isEmpty();
        feed(9_000, xid());

        assertThat(gtids).containsExactly(new MySqlGtid(SOURCE, 23));
        assertThat(passedOn).singleElement().satisfies(t -> {
            assertThat(t.gtid()).isEqualTo("3e11fa47-71ca-11e1-9e33-c80aa9429562:23");
            assertThat(t.server()).isEqualTo(SERVER);
            assertThat(t.commitTime()).isEqualTo(Instant.ofEpochSecond(9));
            assertThat(t.changes()).containsExactly(
                    new RowChange("app", "orders", ChangeOp.INSERT, null, Map.of("id", 1L, "name", "ann")));
        });
    }

    @Test
    void mysqlDdlEndsAtItsQuery() {
        feed(1_000, mysqlGtid(24));
        feed(3_000, query("ALTER TABLE app.orders ADD COLUMN note TEXT"));

        assertThat(passedOn).singleElement().satisfies(t -> {
            assertThat(t.gtid()).isEqualTo("3e11fa47-71ca-11e1-9e33-c80aa9429562:24");
            assertThat(t.commitTime()).isEqualTo(Instant.ofEpochSecond(3));
            assertThat(t.changes()).isEmpty();
        });
    }

    @Test
    void mysqlCommitQueryEndsATransaction() {
        feed(1_000, mysqlGtid(25));
        feed(1_000, query("BEGIN"));
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        feed(1_000, write(ORDERS, row(5, "myisam")));
        feed(2_000, query("COMMIT"));

        assertThat(passedOn).singleElement().satisfies(t -> {
            assertThat(t.gtid()).endsWith(":25");
            assertThat(t.changes()).extracting(RowChange::after).containsExactly(Map.of("id", 5L, "name", "myisam"));
        });
    }

    @Test
    void mysqlXaPreparedPartIsPassedOn() {
        feed(1_000, mysqlGtid(30));
        feed(1_000, query("XA START X'7831',X'',1"));
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        feed(1_000, write(ORDERS, row(1, "xa")));
        feed(1_000, query("XA END X'7831',X'',1"));
        XAPrepareEventData prepare = new XAPrepareEventData();
        prepare.setOnePhase(false);
        feed(2_000, prepare);
        feed(3_000, mysqlGtid(31));
        feed(3_000, query("XA COMMIT X'7831',X'',1"));

        assertThat(gtids).containsExactly(new MySqlGtid(SOURCE, 30), new MySqlGtid(SOURCE, 31));
        assertThat(passedOn).flatExtracting(ChangeTransaction::changes).extracting(RowChange::after)
                .containsExactly(Map.of("id", 1L, "name", "xa"));
    }

    // ---- table filter ----

    @Test
    void unselectedTablesAreLeftOutButTheTransactionIsPassedOn() {
        assembler = assembler(TableFilter.parse("app.orders", "app"));
        feed(1_000, mariaDbGtid(0, 1, 20, 0));
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        feed(1_000, tableMap(AUDIT, "app", "audit"));
        feed(1_000, write(AUDIT, row(100, "audit row")));
        feed(1_000, write(ORDERS, row(1, "ann")));
        feed(2_000, xid());
        feed(3_000, mariaDbGtid(0, 1, 21, 0));
        feed(3_000, write(AUDIT, row(101, "only audit")));
        feed(4_000, xid());

        assertThat(gtids).containsExactly(new MariaDbGtid(0, 1, 20), new MariaDbGtid(0, 1, 21));
        assertThat(passedOn.get(0).changes()).containsExactly(
                new RowChange("app", "orders", ChangeOp.INSERT, null, Map.of("id", 1L, "name", "ann")));
        assertThat(passedOn.get(1).gtid()).isEqualTo("0-1-21");
        assertThat(passedOn.get(1).changes()).isEmpty();
    }

    @Test
    void defaultFilterLeavesOutOtherDatabases() {
        feed(1_000, mariaDbGtid(0, 1, 22, 0));
        feed(1_000, tableMap(OTHER_DB, "billing", "orders"));
        feed(1_000, tableMap(ORDERS, "APP", "Orders"));
        feed(1_000, write(OTHER_DB, row(9, "elsewhere")));
        feed(1_000, write(ORDERS, row(1, "ann")));
        feed(2_000, xid());

        assertThat(passedOn).singleElement().satisfies(t -> assertThat(t.changes()).containsExactly(
                new RowChange("APP", "Orders", ChangeOp.INSERT, null, Map.of("id", 1L, "name", "ann"))));
    }

    // ---- broken streams ----

    @Test
    void partialTransactionIsDroppedOnResetAndTheResentOneIsPassedOn() {
        feed(1_000, mariaDbGtid(0, 1, 7, 0));
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        feed(1_000, write(ORDERS, row(1, "first half")));
        assembler.reset(); // the stream broke here

        // Leftovers of the broken transaction, without its GTID, must not be passed on.
        feed(1_000, write(ORDERS, row(2, "second half")));
        feed(2_000, xid());
        feed(2_000, query("COMMIT"));
        assertThat(passedOn).isEmpty();
        assertThat(gtids).isEmpty();

        // The next server sends the transaction again from its start.
        feed(5_000, mariaDbGtid(0, 1, 7, 0));
        feed(5_000, tableMap(ORDERS, "app", "orders"));
        feed(5_000, write(ORDERS, row(1, "first half"), row(2, "second half")));
        feed(6_000, xid());

        assertThat(gtids).containsExactly(new MariaDbGtid(0, 1, 7));
        assertThat(passedOn).singleElement().satisfies(t -> {
            assertThat(t.commitTime()).isEqualTo(Instant.ofEpochSecond(6));
            assertThat(t.changes()).extracting(RowChange::after).containsExactly(
                    Map.of("id", 1L, "name", "first half"), Map.of("id", 2L, "name", "second half"));
        });
    }

    @Test
    void resetForgetsTheTableMaps() {
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        assembler.reset();
        feed(1_000, mariaDbGtid(0, 1, 8, 0));
        assertThatThrownBy(() -> feed(1_000, write(ORDERS, row(1, "ann"))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("table id " + ORDERS);
    }

    @Test
    void rowEventForAnUnknownTableIdFailsNamingTheId() {
        feed(1_000, mariaDbGtid(0, 1, 13, 0));
        feed(1_000, tableMap(ORDERS, "app", "orders"));
        assertThatThrownBy(() -> feed(1_000, write(4711, row(1, "ann"))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("table id 4711 ")
                .hasMessageContaining("0-1-13");
        assertThat(passedOn).isEmpty();
    }

    // ---- fixtures ----

    private TransactionAssembler assembler(TableFilter filter) {
        return new TransactionAssembler(SERVER, filter, (gtid, transaction) -> {
            gtids.add(gtid);
            passedOn.add(transaction);
        });
    }

    private void feed(long timestampMillis, EventData data) {
        EventHeaderV4 header = new EventHeaderV4();
        header.setTimestamp(timestampMillis);
        header.setEventType(type(data));
        header.setServerId(1);
        assembler.onEvent(new Event(header, data));
    }

    private static EventType type(EventData data) {
        if (data instanceof MariadbGtidEventData) {
            return EventType.MARIADB_GTID;
        } else if (data instanceof GtidEventData) {
            return EventType.GTID;
        } else if (data instanceof TableMapEventData) {
            return EventType.TABLE_MAP;
        } else if (data instanceof WriteRowsEventData) {
            return EventType.EXT_WRITE_ROWS;
        } else if (data instanceof UpdateRowsEventData) {
            return EventType.EXT_UPDATE_ROWS;
        } else if (data instanceof DeleteRowsEventData) {
            return EventType.EXT_DELETE_ROWS;
        } else if (data instanceof XidEventData) {
            return EventType.XID;
        } else if (data instanceof QueryEventData) {
            return EventType.QUERY;
        }
        return EventType.XA_PREPARE;
    }

    private static MariadbGtidEventData mariaDbGtid(long domain, long server, long sequence, int flags) {
        MariadbGtidEventData gtid = new MariadbGtidEventData();
        gtid.setDomainId(domain);
        gtid.setServerId(server);
        gtid.setSequence(sequence);
        gtid.setFlags(flags);
        return gtid;
    }

    private static GtidEventData mysqlGtid(long transaction) {
        GtidEventData gtid = new GtidEventData();
        gtid.setGtid(SOURCE + ":" + transaction);
        return gtid;
    }

    private static QueryEventData query(String sql) {
        QueryEventData query = new QueryEventData();
        query.setDatabase("app");
        query.setSql(sql);
        return query;
    }

    private static XidEventData xid() {
        XidEventData xid = new XidEventData();
        xid.setXid(77);
        return xid;
    }

    /** A table map with full metadata: {@code id INT, name VARCHAR(40) CHARACTER SET utf8mb4}. */
    private static TableMapEventData tableMap(long id, String database, String table) {
        TableMapEventMetadata metadata = new TableMapEventMetadata();
        metadata.setColumnNames(List.of("id", "name"));
        metadata.setSignedness(new BitSet());
        metadata.setColumnCharsets(List.of(UTF8MB4));
        TableMapEventData map = new TableMapEventData();
        map.setTableId(id);
        map.setDatabase(database);
        map.setTable(table);
        map.setColumnTypes(new byte[] {(byte) ColumnType.LONG.getCode(), (byte) ColumnType.VARCHAR.getCode()});
        map.setColumnMetadata(new int[] {0, 160});
        map.setColumnNullability(new BitSet());
        map.setEventMetadata(metadata);
        return map;
    }

    private static WriteRowsEventData write(long tableId, Serializable[]... rows) {
        WriteRowsEventData write = new WriteRowsEventData();
        write.setTableId(tableId);
        write.setIncludedColumns(columns(0, 1));
        write.setRows(List.of(rows));
        return write;
    }

    /** A row as the configured deserializer hands it over: INT as Integer, VARCHAR as bytes. */
    private static Serializable[] row(int id, String name) {
        return new Serializable[] {id, name.getBytes(StandardCharsets.UTF_8)};
    }

    private static Serializable[] values(Serializable... values) {
        return values;
    }

    private static BitSet columns(int... indexes) {
        BitSet set = new BitSet();
        for (int index : indexes) {
            set.set(index);
        }
        return set;
    }
}
