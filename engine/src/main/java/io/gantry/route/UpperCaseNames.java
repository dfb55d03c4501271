package io.gantry.route;

/**
 * The allocation-free, case-insensitive name look-up that {@link Keyword}, {@link BuiltinFunctions} and the
 * classifier's readers of names share: a hash of the upper-cased characters of a region of the SQL text, and the
 * comparison with an upper-case name.
 * ASCII only: a name with any other character cannot be one of theirs.
 */
final class UpperCaseNames {

    private UpperCaseNames() {
    }

    /** Whether {@code text[start, start + length)} spells {@code upperName} in any letter case. */
    static boolean matches(String upperName, CharSequence text, int start, int length) {
        return upperName.length() == length && spellsAt(upperName, text, start);
    }

    /** Whether {@code text[start, end)} begins with {@code upperPrefix} in any letter case. */
    static boolean startsWith(String upperPrefix, CharSequence text, int start, int end) {
        return end - start >= upperPrefix.length() && spellsAt(upperPrefix, text, start);
    }

    private static boolean spellsAt(String upper, CharSequence text, int start) {
        for (int i = 0; i < upper.length(); i++) {
            if (upper(text.charAt(start + i)) != upper.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** Hash of the upper-cased characters; 0 when a character cannot be part of a listed name. */
    static int hash(CharSequence text, int start, int end) {
        int hash = 1;
        for (int i = start; i < end; i++) {
            char c = text.charAt(i);
            if (c > 'z') {
                return 0;
            }
            hash = 31 * hash + upper(c);
        }
        return hash == 0 ? 1 : hash;
    }

    /** Spreads a hash over a power-of-two table. */
    static int spread(int hash) {
        int h = hash * 0x9E3779B9;
        return h ^ (h >>> 16);
    }

    private static char upper(char c) {
        return c >= 'a' && c <= 'z' ? (char) (c - ('a' - 'A')) : c;
    }
}
