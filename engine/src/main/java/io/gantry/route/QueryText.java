package io.gantry.route;

import io.gantry.route.SqlTokenizer.Token;
import java.util.List;

/**
 * One COM_QUERY statement's text as every step of the query path reads it (Gantry's own settings, its admin and
 * cache statements, a held {@code SET TRANSACTION}, a KILL, {@code CONNECTION_ID()}, the cache look-up, the route):
 * the text and the session's mode, its leading word, and which of the words those steps look for it holds, all found
 * in one allocation-free pass when the value is made. A step whose words the text lacks costs one bit test; the
 * tokens and the statement's class are made at most once, by the first step that needs them, and shared.
 *
 * <p>Made and read on one session's event loop: the memoized parts need no lock. A session reads each of its
 * statements into the same value ({@link #read}), one statement at a time, which saves an object per query on the
 * hot path; a step must therefore not keep the value past its statement (keep {@link #sql()} instead).
 */
public final class QueryText {

    /** The words the query path's steps look for, in any ASCII case, anywhere in the text. */
    public enum Word {
        /** Gantry's settings ({@code gantry_...}), {@code SHOW|EXPLAIN GANTRY ...}, its admin statements. */
        GANTRY,
        /** Cache statements: {@code CREATE|DROP|SHOW CACHE...}. */
        CACHE,
        /** {@code SHOW PROXIED QUERIES}, a cache statement. */
        PROXIED,
        /** {@code EXPLAIN LAST STATEMENT}. */
        LAST,
        /** {@code SET [SESSION] TRANSACTION ...}, which Gantry holds for the next statement. */
        TRANSACTION,
        /** A KILL. */
        KILL,
        /** {@code PREPARE ... FROM}: its literal SQL may spell a KILL, or hold a {@code CONNECTION_ID()}. */
        PREPARE,
        /** {@code EXECUTE IMMEDIATE}: its literal SQL may spell a KILL, or ask for the previous statement's counts. */
        IMMEDIATE,
        /** {@code CONNECTION_ID()}, answered with the Gantry session's id. */
        CONNECTION_ID,
        /** Status variables ({@code SHOW STATUS}, {@code SESSION_STATUS}): their {@code Ssl_*} rows are the client's. */
        STATUS,
        /** {@code SHOW PROCESSLIST}, {@code information_schema.PROCESSLIST}: Gantry sessions' rows show their ids. */
        PROCESSLIST
    }

    private static final Word[] WORDS = Word.values();
    /** For each letter a..z, the words that start with it (bit i for {@code WORDS[i]}). */
    private static final int[] WORDS_BY_FIRST_LETTER = new int[26];

    static {
        for (Word word : WORDS) {
            WORDS_BY_FIRST_LETTER[word.name().charAt(0) - 'A'] |= 1 << word.ordinal();
        }
    }

    private String sql;
    private SqlMode mode;
    private int words;
    /** Where the text's first non-blank character is (blanks only: comments before the verb are not skipped). */
    private int lead;
    private List<Token> tokens;
    private StatementClass statementClass;

    /** An empty value for a session to {@link #read} its statements into. */
    public QueryText() {
        read("", SqlMode.DEFAULT);
    }

    /** {@code sql} (one char per byte, as COM_QUERY texts are decoded) under the session's {@code mode}. */
    public static QueryText of(String sql, SqlMode mode) {
        return new QueryText().read(sql, mode);
    }

    /**
     * {@code sql}, sent in place of {@code asked} and taken for it: routed and followed as {@code asked}'s statement
     * (a {@code GET DIAGNOSTICS} that Gantry answers with a {@code SET} of the same variables).
     */
    public static QueryText standingFor(String sql, QueryText asked) {
        QueryText sent = of(sql, asked.mode);
        sent.statementClass = asked.statementClass();
        return sent;
    }

    /** This value becomes {@code sql} under {@code mode}, as {@link #of} would make it; returns itself. */
    public QueryText read(String sql, SqlMode mode) {
        this.sql = sql;
        this.mode = mode;
        this.words = wordsIn(sql);
        int at = 0;
        while (at < sql.length() && Character.isWhitespace(sql.charAt(at))) {
            at++;
        }
        this.lead = at;
        this.tokens = null;
        this.statementClass = null;
        return this;
    }

    public String sql() {
        return sql;
    }

    public SqlMode mode() {
        return mode;
    }

    /** Whether the text holds {@code word} anywhere (in a literal or a comment too), in any ASCII case. */
    public boolean mentions(Word word) {
        return (words & (1 << word.ordinal())) != 0;
    }

    /** Whether the text, after blanks, starts with {@code upperCaseWord} (as a prefix: {@code SELECTx} too). */
    public boolean leadsWith(String upperCaseWord) {
        return StatementText.startsWithIgnoringCase(sql, lead, upperCaseWord);
    }

    /** Every token but comments, conditional comments read as code, under the session's mode: made once. */
    public List<Token> tokens() {
        if (tokens == null) {
            tokens = SqlTokenizer.tokenize(sql, mode);
        }
        return tokens;
    }

    /** {@link #tokens()} without the trailing semicolons. */
    public List<Token> statementTokens() {
        List<Token> all = tokens();
        return all.subList(0, StatementText.end(sql, all));
    }

    /** The statement's class ({@link StatementClassifier}), for the route: made once. */
    public StatementClass statementClass() {
        if (statementClass == null) {
            statementClass = StatementClassifier.classify(sql, mode);
        }
        return statementClass;
    }

    /**
     * The words of {@link Word} that {@code text} holds, as bits. Runs over every statement's text: a character
     * that starts none of the words costs one test.
     */
    private static int wordsIn(String text) {
        int found = 0;
        for (int i = 0; i < text.length(); i++) {
            int lower = text.charAt(i) | 0x20; // ASCII letters only; other characters never match
            if (lower < 'a' || lower > 'z') {
                continue;
            }
            int candidates = WORDS_BY_FIRST_LETTER[lower - 'a'] & ~found;
            while (candidates != 0) {
                int bit = Integer.numberOfTrailingZeros(candidates);
                candidates &= candidates - 1;
                if (StatementText.startsWithIgnoringCase(text, i, WORDS[bit].name())) {
                    found |= 1 << bit;
                }
            }
        }
        return found;
    }
}
