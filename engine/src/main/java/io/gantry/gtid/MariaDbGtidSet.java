package io.gantry.gtid;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * A MariaDB GTID position such as {@code 0-1-5,1-2-7} ({@code @@gtid_binlog_pos}, {@code @@gtid_slave_pos},
 * {@code @@gtid_current_pos}), which can also hold a whole {@code @@gtid_binlog_state} ({@code 0-1-3,0-2-5}: one
 * entry per domain <em>and server</em>).
 *
 * <h2>What it stores</h2>
 * Per (domain, server), the highest sequence number seen. The position of a domain is the entry with its highest
 * sequence number.
 *
 * <h2>Which transactions it contains</h2>
 * A set contains the transaction {@code d-s-n} if and only if its highest sequence number in domain {@code d}, over
 * all servers, is at least {@code n}; the server id does not matter. {@link #contains(GtidSet)} is the same rule per
 * domain. This is MariaDB's own rule (a replica connecting with a position, {@code MASTER_GTID_WAIT}, a binlog client
 * resuming): a domain's binlog is one ordered stream, and a position means "everything in domain {@code d} up to
 * sequence {@code n}". MariaDB does not track gaps, so an exact set in the MySQL way would claim knowledge that no
 * server has.
 *
 * <p>The rule is exact only under {@code gtid_strict_mode=ON}: then sequence numbers increase strictly within each
 * domain in every binlog, so {@code d-?-n} names one transaction and a server that has it has every earlier one of
 * its domain. Without strict mode, two servers can log different transactions with the same domain and sequence
 * number (an errant write on a replica, a failover that lost transactions), and the rule can call a transaction
 * present on a server that never ran it. {@link #containsPerServer(MariaDbGtidSet)} is a stricter check that catches
 * that case against a server's {@code @@gtid_binlog_state}; Gantry's CDC should still require strict mode.
 *
 * <h2>Operations</h2>
 * {@link #union(GtidSet)} takes the highest sequence number per (domain, server), so the union's position in each
 * domain is the higher of the two. {@link #with(Gtid)} does the same for one GTID: a stream that applies
 * {@code d-s-n} moves its position in domain {@code d} to {@code n}. There is no {@code subtract}: the difference of
 * two positions is a range of sequence numbers per domain, which a position cannot express; compare
 * {@link #sequence(long)} per domain instead.
 *
 * <h2>Text form and equality</h2>
 * Parsing reads {@code domain-server-sequence} entries separated by commas, blanks and line ends allowed around
 * entries and commas; a domain may appear with several servers; the same (domain, server) twice keeps the higher
 * sequence number; an entry with sequence number 0 is accepted (MariaDB's parser accepts it) and ignored, since it
 * names no transaction. The empty or blank string is the empty set. Rejected, with a message quoting the whole text
 * and the bad part: empty entries, anything that is not three unsigned decimal numbers joined by {@code -}, ids above
 * 2<sup>32</sup>-1, sequence numbers above 2<sup>63</sup>-1.
 *
 * <p>{@code toString()} prints domains in ascending order and, within a domain, entries by ascending sequence number
 * (then server id), so that the last entry of each domain is its position, as in MariaDB's
 * {@code gtid_binlog_state}. {@code equals} compares these entries: two sets can contain each other without being
 * equal ({@code 0-1-5} and {@code 0-1-3,0-2-5} hold the same transactions but record different servers), so test
 * "same position" with {@code contains} both ways.
 *
 * <h2>Cost</h2>
 * {@link #containsTransaction(Gtid)} and {@link #sequence(long)} allocate nothing. {@link #with(Gtid)} returns this
 * set when nothing changes; when the GTID continues its domain's current server (the usual case) it copies only the
 * array of sequence numbers.
 */
public final class MariaDbGtidSet implements GtidSet {

    /** The empty set. */
    public static final MariaDbGtidSet EMPTY = new MariaDbGtidSet(new long[0], new long[0], new long[0]);

    private static final Comparator<MariaDbGtid> BY_SERVER_THEN_HIGHEST_FIRST = Comparator
            .comparingLong(MariaDbGtid::domain)
            .thenComparingLong(MariaDbGtid::server)
            .thenComparing(Comparator.comparingLong(MariaDbGtid::sequence).reversed());

    private static final Comparator<MariaDbGtid> CANONICAL = Comparator
            .comparingLong(MariaDbGtid::domain)
            .thenComparingLong(MariaDbGtid::sequence)
            .thenComparingLong(MariaDbGtid::server);

    /** Parallel arrays in canonical order (domain, sequence, server); one entry per (domain, server); never changed. */
    private final long[] domains;
    private final long[] servers;
    private final long[] sequences;
    private int hash;

    private MariaDbGtidSet(long[] domains, long[] servers, long[] sequences) {
        this.domains = domains;
        this.servers = servers;
        this.sequences = sequences;
    }

    /**
     * Parses a MariaDB GTID position or binlog state; see the class comment for what is accepted. The empty or blank
     * string is the empty set.
     *
     * @throws IllegalArgumentException if the text is malformed, e.g.
     *                                  {@code bad MariaDB GTID set '0-1-x': 'x' is not a sequence number (at offset 4)}
     */
    public static MariaDbGtidSet parse(String text) {
        Objects.requireNonNull(text, "text");
        GtidText t = new GtidText(text, "MariaDB GTID set");
        List<MariaDbGtid> gtids = new ArrayList<>();
        t.skipWhitespace();
        while (!t.atEnd()) {
            int at = t.position();
            String token = t.token(",");
            if (token.isEmpty()) {
                throw t.error("expected domain-server-sequence, found " + t.found(), at);
            }
            long[] parts = MariaDbGtid.parts(t, token, at);
            if (parts[2] > 0) {
                gtids.add(new MariaDbGtid(parts[0], parts[1], parts[2]));
            }
            t.skipWhitespace();
            if (t.atEnd()) {
                break;
            }
            if (!t.consume(',')) {
                throw t.error("unexpected " + t.found() + " after GTID '" + token + "' (expected ',' or the end)",
                        t.position());
            }
            t.skipWhitespace();
            if (t.atEnd()) {
                throw t.error("expected domain-server-sequence after ',', found the end", t.position());
            }
        }
        return canonical(gtids);
    }

    /** The set of these GTIDs: per (domain, server) the highest sequence number among them. */
    public static MariaDbGtidSet of(MariaDbGtid... gtids) {
        return canonical(new ArrayList<>(Arrays.asList(gtids)));
    }

    private static MariaDbGtidSet canonical(List<MariaDbGtid> gtids) {
        if (gtids.isEmpty()) {
            return EMPTY;
        }
        gtids.sort(BY_SERVER_THEN_HIGHEST_FIRST);
        List<MariaDbGtid> kept = new ArrayList<>(gtids.size());
        MariaDbGtid previous = null;
        for (MariaDbGtid g : gtids) {
            if (previous == null || g.domain() != previous.domain() || g.server() != previous.server()) {
                kept.add(g);
            }
            previous = g;
        }
        kept.sort(CANONICAL);
        int n = kept.size();
        long[] domains = new long[n];
        long[] servers = new long[n];
        long[] sequences = new long[n];
        for (int i = 0; i < n; i++) {
            MariaDbGtid g = kept.get(i);
            domains[i] = g.domain();
            servers[i] = g.server();
            sequences[i] = g.sequence();
        }
        return new MariaDbGtidSet(domains, servers, sequences);
    }

    @Override
    public Flavour flavour() {
        return Flavour.MARIADB;
    }

    @Override
    public boolean isEmpty() {
        return domains.length == 0;
    }

    /** The highest sequence number of {@code domain} in this set, 0 if the set has none of that domain. */
    public long sequence(long domain) {
        int last = runEnd(domain) - 1;
        return last >= 0 && domains[last] == domain ? sequences[last] : 0;
    }

    /**
     * The position alone: per domain the GTID with the highest sequence number (on a tie between servers, possible
     * only without strict mode, the highest server id). Its text is what {@code SET GLOBAL gtid_slave_pos} and a
     * binlog client starting from a position accept. Contains the same transactions as this set.
     */
    public MariaDbGtidSet position() {
        int domainCount = 0;
        for (int i = 0; i < domains.length; i++) {
            if (isLastOfDomain(i)) {
                domainCount++;
            }
        }
        if (domainCount == domains.length) {
            return this;
        }
        long[] d = new long[domainCount];
        long[] s = new long[domainCount];
        long[] q = new long[domainCount];
        int n = 0;
        for (int i = 0; i < domains.length; i++) {
            if (isLastOfDomain(i)) {
                d[n] = domains[i];
                s[n] = servers[i];
                q[n] = sequences[i];
                n++;
            }
        }
        return new MariaDbGtidSet(d, s, q);
    }

    /** The stored entries in canonical order (see the class comment). */
    public List<MariaDbGtid> gtids() {
        List<MariaDbGtid> out = new ArrayList<>(domains.length);
        for (int i = 0; i < domains.length; i++) {
            out.add(new MariaDbGtid(domains[i], servers[i], sequences[i]));
        }
        return Collections.unmodifiableList(out);
    }

    @Override
    public boolean containsTransaction(Gtid gtid) {
        MariaDbGtid g = gtid(gtid, "containsTransaction");
        return sequence(g.domain()) >= g.sequence();
    }

    /** Whether, in every domain of {@code other}, this set's highest sequence number is at least as high. */
    @Override
    public boolean contains(GtidSet other) {
        MariaDbGtidSet o = set(other, "contains");
        for (int i = 0; i < o.domains.length; i++) {
            if (o.isLastOfDomain(i) && sequence(o.domains[i]) < o.sequences[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * The stricter test for failing over: whether every (domain, server) entry of {@code other} is in this set with a
     * sequence number at least as high. With {@code other} the position a stream has applied and this set a
     * candidate server's {@code @@gtid_binlog_state}, it refuses a candidate whose domain went on with a different
     * server's transactions before reaching ours, such as state {@code 0-1-8,0-2-10} against position
     * {@code 0-1-10}, which {@link #contains(GtidSet)} accepts. Implies {@code contains(other)}.
     */
    public boolean containsPerServer(MariaDbGtidSet other) {
        Objects.requireNonNull(other, "other");
        for (int i = 0; i < other.domains.length; i++) {
            int at = indexOf(other.domains[i], other.servers[i]);
            if (at < 0 || sequences[at] < other.sequences[i]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public MariaDbGtidSet with(Gtid gtid) {
        MariaDbGtid g = gtid(gtid, "with");
        long domain = g.domain();
        long server = g.server();
        long sequence = g.sequence();
        int end = runEnd(domain);
        int at = indexOf(domain, server);
        if (at >= 0) {
            if (sequences[at] >= sequence) {
                return this;
            }
            if (at == end - 1) {
                // The domain's current server goes on: the order stays canonical, only one number changes.
                long[] q = sequences.clone();
                q[at] = sequence;
                return new MariaDbGtidSet(domains, servers, q);
            }
        }
        return replace(at, domain, server, sequence);
    }

    /** Removes entry {@code removed} (if not negative) and inserts (domain, server, sequence) in canonical order. */
    private MariaDbGtidSet replace(int removed, long domain, long server, long sequence) {
        int lo = 0;
        int hi = domains.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (compare(mid, domain, sequence, server) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        int insert = lo;
        int n = domains.length + (removed >= 0 ? 0 : 1);
        long[] d = new long[n];
        long[] s = new long[n];
        long[] q = new long[n];
        int o = 0;
        for (int i = 0; i <= domains.length; i++) {
            if (i == insert) {
                d[o] = domain;
                s[o] = server;
                q[o] = sequence;
                o++;
            }
            if (i < domains.length && i != removed) {
                d[o] = domains[i];
                s[o] = servers[i];
                q[o] = sequences[i];
                o++;
            }
        }
        return new MariaDbGtidSet(d, s, q);
    }

    @Override
    public MariaDbGtidSet union(GtidSet other) {
        MariaDbGtidSet o = set(other, "union");
        if (o == this || o.isEmpty()) {
            return this;
        }
        if (isEmpty()) {
            return o;
        }
        if (containsPerServer(o)) {
            return this;
        }
        if (o.containsPerServer(this)) {
            return o;
        }
        List<MariaDbGtid> all = new ArrayList<>(domains.length + o.domains.length);
        all.addAll(gtids());
        all.addAll(o.gtids());
        return canonical(all);
    }

    @Override
    public boolean equals(Object other) {
        return this == other || other instanceof MariaDbGtidSet o && Arrays.equals(domains, o.domains)
                && Arrays.equals(servers, o.servers) && Arrays.equals(sequences, o.sequences);
    }

    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0) {
            h = 31 * (31 * Arrays.hashCode(domains) + Arrays.hashCode(servers)) + Arrays.hashCode(sequences);
            hash = h;
        }
        return h;
    }

    /** The canonical text; see the class comment. */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder(domains.length * 12);
        for (int i = 0; i < domains.length; i++) {
            if (i > 0) {
                out.append(',');
            }
            out.append(domains[i]).append('-').append(servers[i]).append('-').append(sequences[i]);
        }
        return out.toString();
    }

    private boolean isLastOfDomain(int i) {
        return i == domains.length - 1 || domains[i + 1] != domains[i];
    }

    /** The index after the last entry of {@code domain} (or where it would end). */
    private int runEnd(long domain) {
        int lo = 0;
        int hi = domains.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (domains[mid] <= domain) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The index of the (domain, server) entry, or -1. */
    private int indexOf(long domain, long server) {
        for (int i = runEnd(domain) - 1; i >= 0 && domains[i] == domain; i--) {
            if (servers[i] == server) {
                return i;
            }
        }
        return -1;
    }

    private int compare(int i, long domain, long sequence, long server) {
        int c = Long.compare(domains[i], domain);
        if (c == 0) {
            c = Long.compare(sequences[i], sequence);
        }
        return c != 0 ? c : Long.compare(servers[i], server);
    }

    private MariaDbGtidSet set(GtidSet other, String operation) {
        Objects.requireNonNull(other, "other");
        if (other instanceof MariaDbGtidSet o) {
            return o;
        }
        throw GtidText.mixedFlavours(operation, this, other);
    }

    private MariaDbGtid gtid(Gtid gtid, String operation) {
        Objects.requireNonNull(gtid, "gtid");
        if (gtid instanceof MariaDbGtid g) {
            return g;
        }
        throw GtidText.mixedFlavours(operation, this, gtid);
    }
}
