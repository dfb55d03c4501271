package io.gantry.gtid;

import java.util.Objects;

/**
 * A MariaDB GTID, {@code domain-server-sequence}: the replication domain, the {@code server_id} of the server that
 * committed the transaction first, and the transaction's sequence number in that domain.
 *
 * <p>Domain and server ids are unsigned 32-bit numbers (0 to {@value #MAX_ID}). MariaDB numbers transactions from 1
 * and allows sequence numbers up to 2<sup>64</sup>-1; Gantry keeps them in a {@code long} and rejects anything above
 * {@value #MAX_SEQUENCE} (2<sup>63</sup>-1), which no server reaches in practice.
 *
 * @param domain   the {@code gtid_domain_id}, 0 to {@value #MAX_ID}
 * @param server   the originating {@code server_id}, 0 to {@value #MAX_ID}
 * @param sequence the sequence number in the domain, 1 to {@value #MAX_SEQUENCE}
 */
public record MariaDbGtid(long domain, long server, long sequence) implements Gtid {

    /** The largest domain or server id: 2<sup>32</sup>-1. */
    public static final long MAX_ID = 0xFFFF_FFFFL;

    /** The largest sequence number Gantry handles: 2<sup>63</sup>-1. */
    public static final long MAX_SEQUENCE = Long.MAX_VALUE;

    public MariaDbGtid {
        if (domain < 0 || domain > MAX_ID) {
            throw new IllegalArgumentException("a MariaDB domain id is 0 to " + MAX_ID + ", not " + domain);
        }
        if (server < 0 || server > MAX_ID) {
            throw new IllegalArgumentException("a MariaDB server id is 0 to " + MAX_ID + ", not " + server);
        }
        if (sequence < 1) {
            throw new IllegalArgumentException("a MariaDB sequence number is 1 to " + MAX_SEQUENCE + ", not " + sequence);
        }
    }

    /**
     * Parses {@code domain-server-sequence}, blanks and line ends around it ignored.
     *
     * @throws IllegalArgumentException if the text is not one MariaDB GTID; the message quotes the text and the bad
     *                                  part
     */
    public static MariaDbGtid parse(String text) {
        Objects.requireNonNull(text, "text");
        GtidText t = new GtidText(text, "MariaDB GTID");
        t.skipWhitespace();
        int at = t.position();
        String token = t.token(",");
        if (token.isEmpty()) {
            throw t.error("expected domain-server-sequence, found " + t.found(), at);
        }
        long[] parts = parts(t, token, at);
        if (parts[2] == 0) {
            throw t.error("'0' is not a sequence number: MariaDB numbers transactions from 1",
                    at + token.lastIndexOf('-') + 1);
        }
        t.skipWhitespace();
        if (!t.atEnd()) {
            throw t.error("unexpected " + t.found() + " after GTID '" + token + "'", t.position());
        }
        return new MariaDbGtid(parts[0], parts[1], parts[2]);
    }

    @Override
    public Flavour flavour() {
        return Flavour.MARIADB;
    }

    /** {@code domain-server-sequence}. */
    @Override
    public String toString() {
        return domain + "-" + server + "-" + sequence;
    }

    /**
     * Splits and checks {@code domain-server-sequence} read at offset {@code at}; the sequence may be 0 here, the
     * caller decides.
     *
     * @return domain, server, sequence
     */
    static long[] parts(GtidText t, String token, int at) {
        int first = token.indexOf('-');
        int second = first < 0 ? -1 : token.indexOf('-', first + 1);
        if (second < 0 || token.indexOf('-', second + 1) >= 0) {
            throw t.error("'" + GtidText.escape(token) + "' is not a GTID (expected domain-server-sequence, e.g. 0-1-42)",
                    at);
        }
        long domain = part(t, token, 0, first, at, "domain id", MAX_ID);
        long server = part(t, token, first + 1, second, at, "server id", MAX_ID);
        long sequence = part(t, token, second + 1, token.length(), at, "sequence number", MAX_SEQUENCE);
        return new long[] {domain, server, sequence};
    }

    private static long part(GtidText t, String token, int from, int to, int at, String noun, long max) {
        String digits = token.substring(from, to);
        if (digits.isEmpty()) {
            throw t.error("'" + GtidText.escape(token) + "' has no " + noun, at + from);
        }
        long value = GtidText.digits(digits, max);
        if (value == -1) {
            throw t.error("'" + GtidText.escape(digits) + "' is not a " + noun, at + from);
        }
        if (value == -2) {
            throw t.error("'" + digits + "' is beyond the largest " + noun + ", " + max
                    + (max == MAX_SEQUENCE ? " (2^63-1)" : " (2^32-1)"), at + from);
        }
        return value;
    }
}
