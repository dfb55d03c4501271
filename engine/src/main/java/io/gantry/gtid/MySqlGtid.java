package io.gantry.gtid;

import java.util.HexFormat;
import java.util.Locale;
import java.util.Objects;
import java.util.UUID;

/**
 * A MySQL GTID: the originating server's UUID, an optional tag (MySQL 8.3+, {@code uuid:tag:number}) and the
 * transaction's number on that server.
 *
 * <p>Transaction numbers run from 1 to {@value #MAX_TRANSACTION} (2<sup>63</sup>-2): MySQL reserves 2<sup>63</sup>-1
 * as the end sentinel of its intervals. A tag is one to 32 ASCII letters, digits and underscores, not starting with
 * a digit; MySQL compares tags case-insensitively and prints them lower-case, so the constructor lower-cases it.
 * The empty tag means "untagged". Tagged and untagged GTIDs of one UUID are different transactions.
 *
 * @param source      the {@code server_uuid} of the server where the transaction was committed first
 * @param tag         the tag in lower case, or {@code ""} for an untagged GTID
 * @param transaction the transaction number, 1 to {@value #MAX_TRANSACTION}
 */
public record MySqlGtid(UUID source, String tag, long transaction) implements Gtid {

    /** The largest transaction number MySQL accepts: 2<sup>63</sup>-2. */
    public static final long MAX_TRANSACTION = Long.MAX_VALUE - 1;

    /** The longest tag MySQL accepts. */
    public static final int MAX_TAG_LENGTH = 32;

    private static final String TAG_RULE = "a letter or '_', then up to 31 letters, digits or '_'";

    public MySqlGtid {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(tag, "tag");
        if (!tag.isEmpty()) {
            if (!isTag(tag)) {
                throw new IllegalArgumentException("'" + GtidText.escape(tag) + "' is not a GTID tag (" + TAG_RULE + ")");
            }
            tag = lowerCase(tag);
        }
        if (transaction < 1 || transaction > MAX_TRANSACTION) {
            throw new IllegalArgumentException(
                    "a MySQL transaction number is 1 to " + MAX_TRANSACTION + ", not " + transaction);
        }
    }

    /** An untagged GTID. */
    public MySqlGtid(UUID source, long transaction) {
        this(source, "", transaction);
    }

    /**
     * Parses {@code uuid:number} or {@code uuid:tag:number}; the UUID and the tag in either case, blanks and line
     * ends around the parts ignored.
     *
     * @throws IllegalArgumentException if the text is not one MySQL GTID; the message quotes the text and the bad part
     */
    public static MySqlGtid parse(String text) {
        Objects.requireNonNull(text, "text");
        GtidText t = new GtidText(text, "MySQL GTID");
        t.skipWhitespace();
        int at = t.position();
        String uuidText = t.token(":,");
        UUID source = uuid(uuidText);
        if (source == null) {
            throw t.error(notUuid(uuidText), at);
        }
        t.skipWhitespace();
        if (!t.consume(':')) {
            throw t.error("expected ':' after the server UUID, found " + t.found(), t.position());
        }
        t.skipWhitespace();
        at = t.position();
        String token = t.token(":,-");
        String tag = "";
        if (!token.isEmpty() && isTagStart(token.charAt(0))) {
            tag = tag(t, token, at);
            t.skipWhitespace();
            if (!t.consume(':')) {
                throw t.error("expected ':' and a transaction number after tag '" + token + "', found " + t.found(),
                        t.position());
            }
            t.skipWhitespace();
            at = t.position();
            token = t.token(":,-");
        }
        long transaction = transactionNumber(t, token, at);
        t.skipWhitespace();
        if (!t.atEnd()) {
            throw t.error(t.peek() == '-'
                    ? "a GTID names one transaction, not an interval"
                    : "unexpected " + t.found() + " after transaction number '" + token + "'", t.position());
        }
        return new MySqlGtid(source, tag, transaction);
    }

    @Override
    public Flavour flavour() {
        return Flavour.MYSQL;
    }

    /** Whether this GTID carries a tag. */
    public boolean tagged() {
        return !tag.isEmpty();
    }

    /** {@code uuid:number} or {@code uuid:tag:number}, lower case. */
    @Override
    public String toString() {
        return tag.isEmpty() ? source + ":" + transaction : source + ":" + tag + ":" + transaction;
    }

    /**
     * Orders server UUIDs as MySQL prints them in a set: by their 16 bytes, unsigned, which is the order of their
     * lower-case text. {@link UUID#compareTo} compares signed halves and would put {@code 8...} before {@code 0...}.
     */
    static int compareSources(long msbA, long lsbA, long msbB, long lsbB) {
        int c = Long.compareUnsigned(msbA, msbB);
        return c != 0 ? c : Long.compareUnsigned(lsbA, lsbB);
    }

    /** Reads the 8-4-4-4-12 hex form, either case; null if {@code text} is anything else. */
    static UUID uuid(String text) {
        if (text.length() != 36) {
            return null;
        }
        long msb = 0;
        long lsb = 0;
        int nibbles = 0;
        for (int i = 0; i < 36; i++) {
            char c = text.charAt(i);
            if (i == 8 || i == 13 || i == 18 || i == 23) {
                if (c != '-') {
                    return null;
                }
                continue;
            }
            if (!HexFormat.isHexDigit(c)) { // ASCII only, unlike Character.digit
                return null;
            }
            int h = HexFormat.fromHexDigit(c);
            if (nibbles < 16) {
                msb = msb << 4 | h;
            } else {
                lsb = lsb << 4 | h;
            }
            nibbles++;
        }
        return new UUID(msb, lsb);
    }

    static String notUuid(String token) {
        return token.isEmpty()
                ? "expected a server UUID"
                : "'" + GtidText.escape(token) + "' is not a server UUID (8-4-4-4-12 hexadecimal digits)";
    }

    static long transactionNumber(GtidText t, String token, int at) {
        if (token.isEmpty()) {
            throw t.error("expected a transaction number, found " + t.found(), at);
        }
        long n = GtidText.digits(token, MAX_TRANSACTION);
        if (n == -1) {
            throw t.error("'" + GtidText.escape(token) + "' is not a transaction number", at);
        }
        if (n == -2) {
            throw t.error("'" + token + "' is beyond the largest MySQL transaction number, " + MAX_TRANSACTION
                    + " (2^63-2)", at);
        }
        if (n == 0) {
            throw t.error("'" + token + "' is not a transaction number: MySQL numbers transactions from 1", at);
        }
        return n;
    }

    static boolean isTagStart(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_';
    }

    /** Validates and lower-cases a tag read from text. */
    static String tag(GtidText t, String token, int at) {
        if (!isTag(token)) {
            throw t.error("'" + GtidText.escape(token) + "' is not a GTID tag (" + TAG_RULE + ")", at);
        }
        return lowerCase(token);
    }

    private static boolean isTag(String s) {
        if (s.isEmpty() || s.length() > MAX_TAG_LENGTH || !isTagStart(s.charAt(0))) {
            return false;
        }
        for (int i = 1; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!isTagStart(c) && (c < '0' || c > '9')) {
                return false;
            }
        }
        return true;
    }

    private static String lowerCase(String tag) {
        for (int i = 0; i < tag.length(); i++) {
            char c = tag.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                return tag.toLowerCase(Locale.ROOT);
            }
        }
        return tag;
    }
}
