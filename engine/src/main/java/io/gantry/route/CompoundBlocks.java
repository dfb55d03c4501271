package io.gantry.route;

/**
 * Where the blocks of a compound statement open and close, so that a {@code ;} inside the body of a stored program
 * ({@code CREATE PROCEDURE ... BEGIN ...; ...; END}) or of MariaDB's {@code BEGIN NOT ATOMIC ... END} does not end the
 * statement, as it does not for the server. {@code BEGIN} and {@code CASE} open a block; {@code END} closes one unless
 * it is {@code END IF}, {@code END LOOP}, {@code END WHILE}, {@code END REPEAT} or {@code END FOR}, so it is decided at
 * the word after it. The depth is a field of {@link StatementScan}: no object per classification.
 */
final class CompoundBlocks {

    private CompoundBlocks() {
    }

    /**
     * The block depth at a token ({@code keyword} if it is one), after the tokens before it ({@code previous} the last
     * one's keyword) left it at {@code depth}.
     */
    static int depthAt(int depth, Keyword previous, Keyword keyword) {
        if (previous == Keyword.END && depth > 0 && !opensNoBlock(keyword)) {
            depth--;
        }
        if (keyword == Keyword.BEGIN || (keyword == Keyword.CASE && previous != Keyword.END)) {
            depth++;
        }
        return depth;
    }

    /** IF, LOOP, WHILE, REPEAT and FOR are not counted as blocks, so their END closes none. */
    private static boolean opensNoBlock(Keyword next) {
        return next == Keyword.IF || next == Keyword.LOOP || next == Keyword.WHILE || next == Keyword.REPEAT
                || next == Keyword.FOR;
    }
}
