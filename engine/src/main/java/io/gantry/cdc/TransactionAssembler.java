package io.gantry.cdc;

import com.github.shyiko.mysql.binlog.event.DeleteRowsEventData;
import com.github.shyiko.mysql.binlog.event.Event;
import com.github.shyiko.mysql.binlog.event.EventData;
import com.github.shyiko.mysql.binlog.event.EventHeader;
import com.github.shyiko.mysql.binlog.event.GtidEventData;
import com.github.shyiko.mysql.binlog.event.MariadbGtidEventData;
import com.github.shyiko.mysql.binlog.event.QueryEventData;
import com.github.shyiko.mysql.binlog.event.TableMapEventData;
import com.github.shyiko.mysql.binlog.event.UpdateRowsEventData;
import com.github.shyiko.mysql.binlog.event.WriteRowsEventData;
import com.github.shyiko.mysql.binlog.event.XAPrepareEventData;
import com.github.shyiko.mysql.binlog.event.XidEventData;
import io.gantry.gtid.Gtid;
import io.gantry.gtid.MariaDbGtid;
import io.gantry.gtid.MySqlGtid;
import java.io.Serializable;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Groups binlog events into committed transactions: from a GTID event to its commit ({@code XID}, a {@code COMMIT}
 * query, or the end of a standalone statement such as DDL), with the row changes of the selected tables in binlog
 * order. Both flavours: MariaDB ({@code MARIADB_GTID}, where the {@code BEGIN} is implied unless the GTID is flagged
 * standalone) and MySQL ({@code GTID}, then a {@code BEGIN} query for a transaction with rows).
 *
 * <p>A transaction is handed on only when complete, so a stream that breaks in the middle of one drops the partial
 * transaction ({@link #reset()}), and the next server sends it again from its start: the applied position never
 * includes half a transaction. Not thread safe: one stream thread feeds it.
 */
final class TransactionAssembler {

    /** Receives each committed transaction, in commit order, with its GTID. */
    interface Output {
        void onTransaction(Gtid gtid, ChangeTransaction transaction);
    }

    private final String server;
    private final TableFilter filter;
    private final Output output;
    private final Map<Long, TableMapEventData> tables = new HashMap<>();
    /** Column layouts of the selected tables, worked out at their first row event after each TABLE_MAP. */
    private final Map<Long, BinlogRowValues.TableColumns> layouts = new HashMap<>();
    private final List<RowChange> rows = new ArrayList<>();
    private Gtid current;
    private boolean insideBegin;
    /** The open transaction ran a statement that changes accounts or privileges. */
    private boolean changesAccounts;
    /** The open transaction changed a row of a watched table. */
    private boolean changesWatched;

    TransactionAssembler(String server, TableFilter filter, Output output) {
        this.server = Objects.requireNonNull(server, "server");
        this.filter = Objects.requireNonNull(filter, "filter");
        this.output = Objects.requireNonNull(output, "output");
    }

    /** Forgets a transaction in progress and the table map cache, as after a reconnect. */
    void reset() {
        current = null;
        insideBegin = false;
        rows.clear();
        tables.clear();
        layouts.clear();
    }

    void onEvent(Event event) {
        EventData data = event.getData();
        if (data instanceof MariadbGtidEventData mariadb) {
            begin(new MariaDbGtid(mariadb.getDomainId(), mariadb.getServerId(), mariadb.getSequence()),
                    (mariadb.getFlags() & MariadbGtidEventData.FL_STANDALONE) == 0);
        } else if (data instanceof GtidEventData mysql && mysql.getMySqlGtid() != null) {
            begin(new MySqlGtid(mysql.getMySqlGtid().getServerId(), mysql.getMySqlGtid().getTransactionId()), false);
        } else if (data instanceof TableMapEventData map) {
            tables.put(map.getTableId(), map);
            layouts.remove(map.getTableId()); // the table may have changed (DDL): work its columns out again
        } else if (current == null) {
            return; // outside a transaction: nothing of ours
        } else if (data instanceof WriteRowsEventData write) {
            TableMapEventData table = changedTable(write.getTableId());
            if (!selected(table)) {
                noticeWatched(table);
            } else {
                BinlogRowValues.TableColumns layout = layout(write.getTableId(), table);
                for (Serializable[] row : write.getRows()) {
                    rows.add(new RowChange(table.getDatabase(), table.getTable(), ChangeOp.INSERT, null,
                            BinlogRowValues.row(layout, write.getIncludedColumns(), row)));
                }
            }
        } else if (data instanceof UpdateRowsEventData update) {
            TableMapEventData table = changedTable(update.getTableId());
            if (!selected(table)) {
                noticeWatched(table);
            } else {
                BinlogRowValues.TableColumns layout = layout(update.getTableId(), table);
                BitSet beforeColumns = update.getIncludedColumnsBeforeUpdate();
                for (Map.Entry<Serializable[], Serializable[]> row : update.getRows()) {
                    rows.add(new RowChange(table.getDatabase(), table.getTable(), ChangeOp.UPDATE,
                            BinlogRowValues.row(layout, beforeColumns, row.getKey()),
                            BinlogRowValues.row(layout, update.getIncludedColumns(), row.getValue())));
                }
            }
        } else if (data instanceof DeleteRowsEventData delete) {
            TableMapEventData table = changedTable(delete.getTableId());
            if (!selected(table)) {
                noticeWatched(table);
            } else {
                BinlogRowValues.TableColumns layout = layout(delete.getTableId(), table);
                for (Serializable[] row : delete.getRows()) {
                    rows.add(new RowChange(table.getDatabase(), table.getTable(), ChangeOp.DELETE,
                            BinlogRowValues.row(layout, delete.getIncludedColumns(), row), null));
                }
            }
        } else if (data instanceof XidEventData || data instanceof XAPrepareEventData) {
            // An XA transaction's rows are logged up to XA PREPARE under its own GTID; XA COMMIT comes later
            // as a separate, empty transaction (and a later XA ROLLBACK cannot take the rows back).
            commit(event.getHeader());
        } else if (data instanceof QueryEventData query) {
            onQuery(query, event.getHeader());
        }
    }

    private void onQuery(QueryEventData query, EventHeader header) {
        String sql = query.getSql().strip();
        if (AccountStatements.changesAccounts(sql)) {
            changesAccounts = true;
        }
        if (sql.equalsIgnoreCase("BEGIN") || sql.regionMatches(true, 0, "XA START", 0, 8)) {
            insideBegin = true;
        } else if (sql.equalsIgnoreCase("COMMIT") || sql.equalsIgnoreCase("ROLLBACK")) {
            // ROLLBACK appears only when non-transactional tables changed: their rows stay, so it commits them.
            commit(header);
        } else if (!insideBegin) {
            commit(header); // a standalone statement (DDL) is the whole transaction
        }
    }

    private void begin(Gtid gtid, boolean impliedBegin) {
        rows.clear();
        changesAccounts = false;
        changesWatched = false;
        current = gtid;
        insideBegin = impliedBegin;
    }

    private void commit(EventHeader header) {
        if (current == null) {
            return;
        }
        Gtid gtid = current;
        ChangeTransaction transaction = new ChangeTransaction(gtid.toString(), server,
                Instant.ofEpochMilli(header.getTimestamp()), rows, changesAccounts, changesWatched);
        current = null;
        insideBegin = false;
        changesAccounts = false;
        rows.clear();
        output.onTransaction(gtid, transaction);
    }

    /** The table a row event changes, noting whether it is a grant table (a DBA's write to accounts). */
    private TableMapEventData changedTable(long id) {
        TableMapEventData table = table(id);
        if (AccountStatements.isGrantTable(table.getDatabase(), table.getTable())) {
            changesAccounts = true;
        }
        return table;
    }

    private TableMapEventData table(long id) {
        TableMapEventData table = tables.get(id);
        if (table == null) {
            throw new IllegalStateException("binlog row event for table id " + id + " without its TABLE_MAP event "
                    + "in transaction " + current);
        }
        return table;
    }

    private BinlogRowValues.TableColumns layout(long id, TableMapEventData table) {
        return layouts.computeIfAbsent(id, unused -> BinlogRowValues.columnsOf(table));
    }

    private boolean selected(TableMapEventData table) {
        return filter.selects(table.getDatabase(), table.getTable());
    }

    private void noticeWatched(TableMapEventData table) {
        if (filter.watches(table.getDatabase(), table.getTable())) {
            changesWatched = true;
        }
    }
}
