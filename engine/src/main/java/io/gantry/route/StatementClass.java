package io.gantry.route;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The routing-relevant facts about one COM_QUERY text, as found by {@link StatementClassifier}.
 *
 * @param kind what the text does; for a multi-statement text, the strongest kind (see {@link StatementKind})
 * @param beginFlavor the access mode asked for, present exactly when {@code kind} is
 *        {@link StatementKind#TRANSACTION_BEGIN}
 * @param flags every flag of every statement of the text (unmodifiable)
 * @param hint the routing hint found in the text's comments
 * @param statementCount how many non-empty statements the text holds (0 for empty or comment-only text)
 */
public record StatementClass(
        StatementKind kind,
        Optional<TransactionFlavor> beginFlavor,
        Set<StatementFlag> flags,
        ModeHint hint,
        int statementCount) {

    /** Validates and copies the flags. */
    public StatementClass {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(beginFlavor, "beginFlavor");
        Objects.requireNonNull(flags, "flags");
        Objects.requireNonNull(hint, "hint");
        if (beginFlavor.isPresent() != (kind == StatementKind.TRANSACTION_BEGIN)) {
            throw new IllegalArgumentException("beginFlavor must be present exactly for TRANSACTION_BEGIN, got " + kind
                    + " with " + beginFlavor.map(TransactionFlavor::name).orElse("no flavour"));
        }
        if (statementCount < 0) {
            throw new IllegalArgumentException("statementCount must be >= 0, got " + statementCount);
        }
        flags = flags.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(flags));
    }

    /** A single statement of the given kind (not {@link StatementKind#TRANSACTION_BEGIN}) with these flags. */
    public static StatementClass of(StatementKind kind, StatementFlag... flags) {
        return new StatementClass(kind, Optional.empty(), Set.of(flags), ModeHint.NONE, 1);
    }

    /**
     * {@link #of} a kind without flags, as one shared instance per kind (a record, so one serves every text). Not for
     * {@link StatementKind#TRANSACTION_BEGIN}, which always has a flavour.
     */
    public static StatementClass plain(StatementKind kind) {
        if (kind == StatementKind.TRANSACTION_BEGIN) {
            throw new IllegalArgumentException("a TRANSACTION_BEGIN class needs a flavour: use begin(flavor)");
        }
        return Plain.BY_KIND[kind.ordinal()];
    }

    /** The shared classes of {@link #plain}, made on first use (a record cannot hold them before it is built). */
    private static final class Plain {
        private static final StatementClass[] BY_KIND = new StatementClass[StatementKind.values().length];

        static {
            for (StatementKind kind : StatementKind.values()) {
                if (kind != StatementKind.TRANSACTION_BEGIN) {
                    BY_KIND[kind.ordinal()] = of(kind);
                }
            }
        }
    }

    /** A single {@link StatementKind#TRANSACTION_BEGIN} statement of the given flavour. */
    public static StatementClass begin(TransactionFlavor flavor) {
        return new StatementClass(StatementKind.TRANSACTION_BEGIN, Optional.of(flavor), Set.of(), ModeHint.NONE, 1);
    }

    /** What the classifier answers for text it cannot make sense of: a write, so it goes to the primary. */
    public static StatementClass unparsable() {
        return new StatementClass(StatementKind.WRITE, Optional.empty(), Set.of(), ModeHint.NONE, 0);
    }

    /** This classification with another hint. */
    public StatementClass withHint(ModeHint newHint) {
        return new StatementClass(kind, beginFlavor, flags, newHint, statementCount);
    }

    /**
     * What the text is, in an operator's words, for {@code EXPLAIN GANTRY ROUTE}: "a read, 1 statement, no hint",
     * "begins a read-only transaction, 1 statement, no hint", "a write, 2 statements, no hint; it sets a user
     * variable". {@link #toString()} stays the record's, for debugging.
     */
    public String inWords() {
        StringBuilder words = new StringBuilder(64);
        if (statementCount == 0) {
            words.append("taken for a write: no statement Gantry could read");
        } else {
            words.append(switch (kind) {
                case READ -> "a read";
                case SESSION_STATE -> "a session setting";
                case TRANSACTION_SAVEPOINT -> "a savepoint";
                case TRANSACTION_END -> "ends a transaction";
                case TRANSACTION_BEGIN -> switch (beginFlavor.orElseThrow()) {
                    case READ_ONLY -> "begins a read-only transaction";
                    case DEFAULT -> "begins a transaction";
                    case READ_WRITE -> "begins a read-write transaction";
                };
                case WRITE -> "a write";
            }).append(", ").append(statementCount).append(statementCount == 1 ? " statement" : " statements");
        }
        words.append(", ").append(hint.description());
        int i = 0;
        for (StatementFlag flag : flags) {
            words.append(i == 0 ? "; it " : i == flags.size() - 1 ? " and " : ", ").append(flag.description());
            i++;
        }
        return words.toString();
    }

    /** Whether the text carries this flag. */
    public boolean has(StatementFlag flag) {
        return flags.contains(flag);
    }

    /** Whether this is a {@link StatementKind#TRANSACTION_BEGIN} of flavour {@link TransactionFlavor#READ_ONLY}. */
    public boolean beginsReadOnlyTransaction() {
        return beginFlavor.filter(f -> f == TransactionFlavor.READ_ONLY).isPresent();
    }

    /** The first flag (in {@link StatementFlag} declaration order) that has the given effect. */
    public Optional<StatementFlag> firstFlag(StatementFlag.Effect effect) {
        if (flags.isEmpty()) {
            return Optional.empty(); // the usual statement: no iterator per routing
        }
        for (StatementFlag flag : flags) {
            if (flag.effect() == effect) {
                return Optional.of(flag);
            }
        }
        return Optional.empty();
    }

    /** The flag that pins the session to the primary, if any (see {@link StatementFlag.Effect#PINS_SESSION}). */
    public Optional<StatementFlag> pinFlag() {
        return firstFlag(StatementFlag.Effect.PINS_SESSION);
    }

    /** The first flag that makes the text a write, if any: the most telling cause for a {@code NOT_A_READ} decision. */
    public Optional<StatementFlag> writeCause() {
        if (flags.isEmpty()) {
            return Optional.empty();
        }
        for (StatementFlag flag : flags) {
            if (flag.effect().makesWrite()) {
                return Optional.of(flag);
            }
        }
        return Optional.empty();
    }
}
