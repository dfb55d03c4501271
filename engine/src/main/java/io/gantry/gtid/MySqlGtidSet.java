package io.gantry.gtid;

import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;

/**
 * A MySQL GTID set such as {@code 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:11-18,8f5c...:3}: per server UUID (and,
 * from MySQL 8.3, per tag) a set of transaction numbers, gaps allowed. It is an exact set, so
 * {@link #subtract(MySqlGtidSet)} is defined.
 *
 * <h2>Text form</h2>
 * Parsing accepts what MySQL accepts in practice: UUIDs in either case; blanks, tabs and line ends around every part
 * (MySQL prints {@code ",\n"} between UUIDs); a UUID listed more than once and intervals that overlap, touch or come
 * in any order (they are merged); empty elements between commas (MySQL skips them); tagged GTIDs,
 * {@code uuid:1-5:tag_a:1-3:tag_b:7}, tags in either case. It rejects, with a message that quotes the whole text and
 * the bad part: 0 as a transaction number, numbers above {@value MySqlGtid#MAX_TRANSACTION} (2<sup>63</sup>-2), an
 * interval whose start is after its end (MySQL silently drops such an interval; for a position that Gantry resumes
 * from, dropping transactions silently is worse than refusing), UUIDs not in the 8-4-4-4-12 form, a tag without
 * numbers, and signs, hex or other junk in numbers.
 *
 * <p>{@code toString()} prints the canonical form, in MySQL's order but on one line: UUIDs lower-case and sorted by
 * their bytes (as MySQL sorts them, which is not {@link UUID#compareTo}'s signed order), separated by {@code ","};
 * for each UUID the untagged intervals first, then each tag in alphabetical order; intervals merged and ascending,
 * one transaction as {@code n}, a run as {@code n-m}. The empty set prints as {@code ""}.
 *
 * <h2>Cost</h2>
 * {@link #containsTransaction(Gtid)} allocates nothing (two binary searches). {@link #with(Gtid)} returns this set
 * when it has the GTID already; otherwise it copies the array of UUIDs and the intervals of the one UUID it changes,
 * sharing the rest with this set.
 */
public final class MySqlGtidSet implements GtidSet {

    /** The empty set. */
    public static final MySqlGtidSet EMPTY = new MySqlGtidSet(new Block[0]);

    /** One UUID and tag with its transaction numbers; immutable and shared between sets. */
    private static final class Block {
        final long msb;
        final long lsb;
        final String tag;
        final long[] intervals;

        Block(long msb, long lsb, String tag, long[] intervals) {
            this.msb = msb;
            this.lsb = lsb;
            this.tag = tag;
            this.intervals = intervals;
        }

        int compareTo(long otherMsb, long otherLsb, String otherTag) {
            int c = MySqlGtid.compareSources(msb, lsb, otherMsb, otherLsb);
            return c != 0 ? c : tag.compareTo(otherTag);
        }

        int compareTo(Block other) {
            return compareTo(other.msb, other.lsb, other.tag);
        }

        boolean sameSource(Block other) {
            return msb == other.msb && lsb == other.lsb;
        }

        Block withIntervals(long[] newIntervals) {
            return newIntervals == intervals ? this : new Block(msb, lsb, tag, newIntervals);
        }
    }

    /** The key of a block while parsing. */
    private record Key(long msb, long lsb, String tag) implements Comparable<Key> {
        @Override
        public int compareTo(Key other) {
            int c = MySqlGtid.compareSources(msb, lsb, other.msb, other.lsb);
            return c != 0 ? c : tag.compareTo(other.tag);
        }
    }

    /** Pairs of numbers gathered while parsing. */
    private static final class PairBuffer {
        long[] values = new long[4];
        int size;

        void add(long start, long end) {
            if (size + 2 > values.length) {
                values = Arrays.copyOf(values, values.length * 2);
            }
            values[size++] = start;
            values[size++] = end;
        }
    }

    /** Sorted by UUID (unsigned) then tag; no block is empty. */
    private final Block[] blocks;
    private int hash;

    private MySqlGtidSet(Block[] blocks) {
        this.blocks = blocks;
    }

    private static MySqlGtidSet of(Block[] blocks, int count) {
        if (count == 0) {
            return EMPTY;
        }
        return new MySqlGtidSet(count == blocks.length ? blocks : Arrays.copyOf(blocks, count));
    }

    /**
     * Parses a MySQL GTID set; see the class comment for what is accepted. The empty or blank string is the empty set.
     *
     * @throws IllegalArgumentException if the text is malformed, e.g.
     *                                  {@code bad MySQL GTID set '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-x': 'x' is not
     *                                  a transaction number (at offset 39)}
     */
    public static MySqlGtidSet parse(String text) {
        Objects.requireNonNull(text, "text");
        GtidText t = new GtidText(text, "MySQL GTID set");
        TreeMap<Key, PairBuffer> found = new TreeMap<>();
        t.skipWhitespace();
        while (!t.atEnd()) {
            if (t.consume(',')) {
                t.skipWhitespace();
                continue;
            }
            int at = t.position();
            String uuidText = t.token(":,");
            UUID source = MySqlGtid.uuid(uuidText);
            if (source == null) {
                throw t.error(MySqlGtid.notUuid(uuidText) + (uuidText.isEmpty() ? ", found " + t.found() : ""), at);
            }
            t.skipWhitespace();
            if (!t.consume(':')) {
                throw t.error("expected ':' and transaction numbers after server UUID '" + uuidText + "', found "
                        + t.found(), t.position());
            }
            parseIntervals(t, source, found);
        }
        Block[] blocks = new Block[found.size()];
        int i = 0;
        for (Map.Entry<Key, PairBuffer> e : found.entrySet()) {
            Key key = e.getKey();
            PairBuffer pairs = e.getValue();
            blocks[i++] = new Block(key.msb(), key.lsb(), key.tag(), GtidIntervals.normalize(pairs.values, pairs.size));
        }
        return of(blocks, i);
    }

    /** Reads {@code 1-5:7:tag:1-3...} after a UUID's colon, up to a comma or the end. */
    private static void parseIntervals(GtidText t, UUID source, TreeMap<Key, PairBuffer> found) {
        String tag = "";
        String tagWithoutNumbers = null;
        while (true) {
            t.skipWhitespace();
            int at = t.position();
            String token = t.token(":,-");
            if (!token.isEmpty() && MySqlGtid.isTagStart(token.charAt(0))) {
                if (tagWithoutNumbers != null) {
                    throw t.error("tag '" + tagWithoutNumbers + "' has no transaction numbers", at);
                }
                tag = MySqlGtid.tag(t, token, at);
                tagWithoutNumbers = token;
                t.skipWhitespace();
                if (!t.consume(':')) {
                    throw t.error("expected ':' and transaction numbers after tag '" + token + "', found " + t.found(),
                            t.position());
                }
                continue;
            }
            long start = MySqlGtid.transactionNumber(t, token, at);
            long end = start;
            t.skipWhitespace();
            if (t.consume('-')) {
                t.skipWhitespace();
                int endAt = t.position();
                String endToken = t.token(":,-");
                end = MySqlGtid.transactionNumber(t, endToken, endAt);
                if (end < start) {
                    throw t.error("interval '" + token + "-" + endToken + "' starts after it ends", at);
                }
                t.skipWhitespace();
            }
            found.computeIfAbsent(new Key(source.getMostSignificantBits(), source.getLeastSignificantBits(), tag),
                    k -> new PairBuffer()).add(start, end);
            tagWithoutNumbers = null;
            if (t.atEnd() || t.peek() == ',') {
                return;
            }
            if (!t.consume(':')) {
                throw t.error("unexpected " + t.found() + " after transaction number '"
                        + (start == end ? token : token + "-" + end) + "' (expected ':', ',' or the end)",
                        t.position());
            }
        }
    }

    /** The set of exactly these transactions. */
    public static MySqlGtidSet of(MySqlGtid... gtids) {
        MySqlGtidSet set = EMPTY;
        for (MySqlGtid gtid : gtids) {
            set = set.with(gtid);
        }
        return set;
    }

    @Override
    public Flavour flavour() {
        return Flavour.MYSQL;
    }

    @Override
    public boolean isEmpty() {
        return blocks.length == 0;
    }

    @Override
    public boolean containsTransaction(Gtid gtid) {
        MySqlGtid g = gtid(gtid, "containsTransaction");
        UUID source = g.source();
        int i = indexOf(source.getMostSignificantBits(), source.getLeastSignificantBits(), g.tag());
        return i >= 0 && GtidIntervals.contains(blocks[i].intervals, g.transaction());
    }

    @Override
    public MySqlGtidSet with(Gtid gtid) {
        MySqlGtid g = gtid(gtid, "with");
        UUID source = g.source();
        long msb = source.getMostSignificantBits();
        long lsb = source.getLeastSignificantBits();
        int i = indexOf(msb, lsb, g.tag());
        if (i >= 0) {
            Block block = blocks[i];
            long[] intervals = GtidIntervals.with(block.intervals, g.transaction());
            if (intervals == block.intervals) {
                return this;
            }
            Block[] copy = blocks.clone();
            copy[i] = block.withIntervals(intervals);
            return new MySqlGtidSet(copy);
        }
        int at = -(i + 1);
        Block[] copy = new Block[blocks.length + 1];
        System.arraycopy(blocks, 0, copy, 0, at);
        copy[at] = new Block(msb, lsb, g.tag(), new long[] {g.transaction(), g.transaction()});
        System.arraycopy(blocks, at, copy, at + 1, blocks.length - at);
        return new MySqlGtidSet(copy);
    }

    @Override
    public MySqlGtidSet union(GtidSet other) {
        MySqlGtidSet o = set(other, "union");
        if (o == this || o.blocks.length == 0) {
            return this;
        }
        if (blocks.length == 0) {
            return o;
        }
        Block[] out = new Block[blocks.length + o.blocks.length];
        int n = 0;
        int i = 0;
        int j = 0;
        boolean sameAsThis = true;
        boolean sameAsOther = true;
        while (i < blocks.length || j < o.blocks.length) {
            int c = i >= blocks.length ? 1 : j >= o.blocks.length ? -1 : blocks[i].compareTo(o.blocks[j]);
            Block next;
            if (c < 0) {
                next = blocks[i++];
                sameAsOther = false;
            } else if (c > 0) {
                next = o.blocks[j++];
                sameAsThis = false;
            } else {
                Block a = blocks[i++];
                Block b = o.blocks[j++];
                long[] merged = GtidIntervals.union(a.intervals, b.intervals);
                next = merged == b.intervals ? b : a.withIntervals(merged);
                sameAsThis &= next == a;
                sameAsOther &= next == b;
            }
            out[n++] = next;
        }
        if (sameAsThis) {
            return this;
        }
        if (sameAsOther) {
            return o;
        }
        return of(out, n);
    }

    /**
     * The transactions of this set that are not in {@code other}: for example what a server has that another lacks
     * ({@code candidate - applied} are its extra transactions, {@code applied - candidate} the ones it is missing).
     * Returns this set itself when they share no transaction.
     */
    public MySqlGtidSet subtract(MySqlGtidSet other) {
        Objects.requireNonNull(other, "other");
        if (blocks.length == 0 || other.blocks.length == 0) {
            return this;
        }
        if (other == this) {
            return EMPTY;
        }
        Block[] out = new Block[blocks.length];
        int n = 0;
        int j = 0;
        boolean changed = false;
        for (Block a : blocks) {
            while (j < other.blocks.length && other.blocks[j].compareTo(a) < 0) {
                j++;
            }
            if (j < other.blocks.length && other.blocks[j].compareTo(a) == 0) {
                long[] rest = GtidIntervals.subtract(a.intervals, other.blocks[j].intervals);
                if (rest != a.intervals) {
                    changed = true;
                    if (rest.length > 0) {
                        out[n++] = a.withIntervals(rest);
                    }
                    continue;
                }
            }
            out[n++] = a;
        }
        return changed ? of(out, n) : this;
    }

    @Override
    public boolean contains(GtidSet other) {
        MySqlGtidSet o = set(other, "contains");
        int i = 0;
        for (Block b : o.blocks) {
            while (i < blocks.length && blocks[i].compareTo(b) < 0) {
                i++;
            }
            if (i >= blocks.length || blocks[i].compareTo(b) != 0
                    || !GtidIntervals.contains(blocks[i].intervals, b.intervals)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof MySqlGtidSet o) || o.blocks.length != blocks.length) {
            return false;
        }
        for (int i = 0; i < blocks.length; i++) {
            Block a = blocks[i];
            Block b = o.blocks[i];
            if (a.compareTo(b) != 0 || !Arrays.equals(a.intervals, b.intervals)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0) {
            h = 1;
            for (Block b : blocks) {
                h = 31 * h + Long.hashCode(b.msb);
                h = 31 * h + Long.hashCode(b.lsb);
                h = 31 * h + b.tag.hashCode();
                h = 31 * h + Arrays.hashCode(b.intervals);
            }
            hash = h;
        }
        return h;
    }

    /** The canonical text; see the class comment. */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder(blocks.length * 48);
        for (int i = 0; i < blocks.length; i++) {
            Block b = blocks[i];
            if (i == 0 || !b.sameSource(blocks[i - 1])) {
                if (i > 0) {
                    out.append(',');
                }
                out.append(new UUID(b.msb, b.lsb));
            }
            if (!b.tag.isEmpty()) {
                out.append(':').append(b.tag);
            }
            long[] iv = b.intervals;
            for (int k = 0; k < iv.length; k += 2) {
                out.append(':').append(iv[k]);
                if (iv[k + 1] != iv[k]) {
                    out.append('-').append(iv[k + 1]);
                }
            }
        }
        return out.toString();
    }

    private int indexOf(long msb, long lsb, String tag) {
        int lo = 0;
        int hi = blocks.length - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = blocks[mid].compareTo(msb, lsb, tag);
            if (c < 0) {
                lo = mid + 1;
            } else if (c > 0) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -(lo + 1);
    }

    private MySqlGtidSet set(GtidSet other, String operation) {
        Objects.requireNonNull(other, "other");
        if (other instanceof MySqlGtidSet o) {
            return o;
        }
        throw GtidText.mixedFlavours(operation, this, other);
    }

    private MySqlGtid gtid(Gtid gtid, String operation) {
        Objects.requireNonNull(gtid, "gtid");
        if (gtid instanceof MySqlGtid g) {
            return g;
        }
        throw GtidText.mixedFlavours(operation, this, gtid);
    }
}
