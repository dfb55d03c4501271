package io.gantry.cache;

import java.util.Collection;

/**
 * The caches by query shape, for the look-up every SELECT makes while a cache is defined: an open-addressing table
 * searched with the shape as the session wrote it into its own buffer, so a look-up allocates nothing. Immutable;
 * replaced whole when a cache is created or dropped.
 */
final class ShapeIndex {

    static final ShapeIndex EMPTY = new ShapeIndex(new QueryCache[0], new int[0], 0);

    private final QueryCache[] slots;
    private final int[] hashes;
    private final int size;

    private ShapeIndex(QueryCache[] slots, int[] hashes, int size) {
        this.slots = slots;
        this.hashes = hashes;
        this.size = size;
    }

    static ShapeIndex of(Collection<QueryCache> caches) {
        if (caches.isEmpty()) {
            return EMPTY;
        }
        int capacity = Integer.highestOneBit(caches.size() * 4 - 1) << 1;
        QueryCache[] slots = new QueryCache[capacity];
        int[] hashes = new int[capacity];
        for (QueryCache cache : caches) {
            int hash = hash(cache.shape().text());
            int slot = hash & (capacity - 1);
            while (slots[slot] != null) {
                slot = (slot + 1) & (capacity - 1);
            }
            slots[slot] = cache;
            hashes[slot] = hash;
        }
        return new ShapeIndex(slots, hashes, caches.size());
    }

    boolean isEmpty() {
        return size == 0;
    }

    QueryCache find(CharSequence shape) {
        if (size == 0) {
            return null;
        }
        int hash = hash(shape);
        int mask = slots.length - 1;
        for (int slot = hash & mask; slots[slot] != null; slot = (slot + 1) & mask) {
            if (hashes[slot] == hash && slots[slot].shape().text().contentEquals(shape)) {
                return slots[slot];
            }
        }
        return null;
    }

    /** {@link String#hashCode()}'s function, over any character sequence, spread for a power-of-two table. */
    private static int hash(CharSequence text) {
        int h = 0;
        for (int i = 0; i < text.length(); i++) {
            h = 31 * h + text.charAt(i);
        }
        return h ^ (h >>> 16);
    }
}
