package io.gantry.route;

import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * The class of a whole COM_QUERY text, merged from its statements as {@link StatementPhases} classifies them: the
 * strongest kind wins, flags are unioned, a session-state change mixed with anything else makes the text a write, and
 * the hints of all comments count. A text with a conditional comment is read twice, with such comments run and skipped,
 * and both readings count as the statements of one text.
 */
final class TextVerdict extends StatementPhases {

    private static final StatementFlag[] FLAGS = StatementFlag.values();
    private static final int MAKES_WRITE = makesWriteMask();

    private int textFlags;
    private int statementCount;
    private boolean sawSessionState;
    /** The strongest kind of the statements other than session-state changes; null while there is none. */
    private StatementKind strongest;
    private TransactionFlavor strongestFlavor;
    private ModeHint hint = ModeHint.NONE;

    private TextVerdict(CharSequence sql) {
        super(sql);
    }

    /** The class of {@code sql} under {@code mode}; throws what a failing {@code CharSequence} throws. */
    static StatementClass of(CharSequence sql, SqlMode mode) {
        TextVerdict verdict = new TextVerdict(sql);
        SqlTokenizer tokens = new SqlTokenizer(sql, mode, true);
        verdict.read(tokens);
        if (tokens.sawConditionalComment()) {
            // Some servers skip what others run: both readings count, as if the text held the statements of both.
            int statementsRun = verdict.statementCount;
            verdict.statementCount = 0;
            verdict.read(new SqlTokenizer(sql, mode, false));
            verdict.statementCount = Math.max(statementsRun, verdict.statementCount);
        }
        return verdict.result();
    }

    @Override
    void statementClassified(StatementKind statementKind, TransactionFlavor statementFlavor, int statementFlags) {
        StatementKind k = statementKind;
        int flags = statementFlags;
        if (k != StatementKind.READ) {
            // A write goes to the primary anyway, and its "name (" is often no call (INSERT INTO t (a, b),
            // CREATE TABLE t (...)). A session-state change runs on the primary and is replayed as it is.
            flags &= ~StatementFlag.STORED_FUNCTION.bit();
        }
        if ((k == StatementKind.READ || k == StatementKind.SESSION_STATE) && (flags & MAKES_WRITE) != 0) {
            k = StatementKind.WRITE;
        }
        statementCount++;
        textFlags |= flags;
        if (k == StatementKind.SESSION_STATE) {
            sawSessionState = true;
        } else if (strongest == null || k.compareTo(strongest) > 0) {
            strongest = k;
            strongestFlavor = statementFlavor;
        } else if (k == StatementKind.TRANSACTION_BEGIN && strongest == StatementKind.TRANSACTION_BEGIN
                && statementFlavor.compareTo(strongestFlavor) > 0) {
            // Only between two transaction starts: after a stronger kind (a write) there is no flavour.
            strongestFlavor = statementFlavor;
        }
    }

    @Override
    void hintRead(ModeHint found) {
        // READ_WRITE wins, wherever it is
        if (found == ModeHint.READ_WRITE || (found == ModeHint.READ_ONLY && hint == ModeHint.NONE)) {
            hint = found;
        }
    }

    private StatementClass result() {
        StatementKind k;
        Optional<TransactionFlavor> f = Optional.empty();
        if (statementCount == 0) {
            k = StatementKind.WRITE;
        } else if (sawSessionState && strongest != null) {
            k = StatementKind.WRITE;
            textFlags |= StatementFlag.MIXED_SESSION_STATE.bit();
        } else if (sawSessionState) {
            k = StatementKind.SESSION_STATE;
        } else {
            k = strongest;
            if (k == StatementKind.TRANSACTION_BEGIN) {
                f = Optional.of(strongestFlavor);
            }
        }
        if (textFlags == 0 && hint == ModeHint.NONE && statementCount == 1 && f.isEmpty()) {
            return StatementClass.plain(k); // the usual statement, answered without a new object
        }
        Set<StatementFlag> set = Set.of();
        if (textFlags != 0) {
            EnumSet<StatementFlag> found = EnumSet.noneOf(StatementFlag.class);
            for (StatementFlag flag : FLAGS) {
                if ((textFlags & flag.bit()) != 0) {
                    found.add(flag);
                }
            }
            set = found;
        }
        return new StatementClass(k, f, set, hint, statementCount);
    }

    private static int makesWriteMask() {
        int mask = 0;
        for (StatementFlag flag : FLAGS) {
            if (flag.effect().makesWrite()) {
                mask |= flag.bit();
            }
        }
        return mask;
    }
}
