package io.gantry.cache;

import io.gantry.cdc.AppliedTransaction;
import io.gantry.cdc.ChangeListener;
import io.gantry.cdc.RowChange;
import io.gantry.cdc.StateChange;
import io.gantry.cdc.CdcStream;
import io.gantry.gtid.GtidSet;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The caches' side of the change stream: each row change evicts the entries of the caches that read its table, all
 * of them, or, for a cache whose query picks one row by its integer primary key, those of the changed key (before
 * and after an update). Evicting only counts and marks ({@link QueryCache}), so it returns at once, as the stream
 * asks of its listeners. Shallow caches are left to their TTL. An account or privilege statement ({@code GRANT},
 * {@code REVOKE}, {@code DROP USER}, ...) makes every account prove its right to each cached query again.
 */
public final class CacheInvalidation implements ChangeListener {

    private final QueryCaches caches;
    private final Supplier<String> position;

    /** @param position the stream's applied position as text ({@link io.gantry.cdc.CdcStream#positionText()}) */
    public CacheInvalidation(QueryCaches caches, Supplier<String> position) {
        this.caches = caches;
        this.position = position;
    }

    @Override
    public void onTransaction(AppliedTransaction transaction) {
        if (transaction.transaction().changesAccounts()) {
            caches.forgetAccountChecks(transaction.gtid().toString());
        }
        List<RowChange> changes = transaction.transaction().changes();
        long now = System.currentTimeMillis();
        for (int i = 0; i < changes.size(); i++) {
            RowChange change = changes.get(i);
            for (QueryCache cache : caches.reading(change.database(), change.table())) {
                if (cache.shallow()) {
                    continue;
                }
                String keyColumn = cache.shape().keyColumn();
                if (keyColumn == null) {
                    cache.evictAll(transaction.position(), now);
                    continue;
                }
                Long before = key(change.before(), keyColumn);
                Long after = key(change.after(), keyColumn);
                if ((change.before() != null && before == null) || (change.after() != null && after == null)) {
                    cache.evictAll(transaction.position(), now); // a key Gantry cannot read as an integer
                    continue;
                }
                if (before != null) {
                    cache.evictKey(before, transaction.position(), now);
                }
                if (after != null && !after.equals(before)) {
                    cache.evictKey(after, transaction.position(), now);
                }
            }
        }
        // Last: a fill that sees this position also sees the evictions above.
        caches.streamApplied(transaction.position());
    }

    @Override
    public void onStateChange(StateChange change) {
        GtidSet resumed = null;
        String text = position.get();
        if (change.state() == CdcStream.State.STREAMING && !text.isBlank()) {
            resumed = GtidSet.parseAnyFlavour(text);
        }
        caches.streamStateChanged(change.state(), change.server(), change.reason(), resumed);
    }

    /** The row's key as an integer, or null when the row is absent or the value is not one. */
    private static Long key(Map<String, Object> row, String column) {
        if (row == null) {
            return null;
        }
        Object value = row.get(column);
        if (value == null) {
            for (Map.Entry<String, Object> entry : row.entrySet()) {
                if (entry.getKey().equalsIgnoreCase(column)) {
                    value = entry.getValue();
                    break;
                }
            }
        }
        if (value instanceof Long number) {
            return number;
        }
        if (value instanceof BigInteger big && big.bitLength() < 64) {
            return big.longValue();
        }
        return null;
    }
}
