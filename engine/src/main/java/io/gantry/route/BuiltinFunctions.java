package io.gantry.route;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The words that, followed by {@code (}, are not a call of a stored function: the built-in functions of MySQL 8 and
 * MariaDB 11 and the keywords that take parentheses in other roles ({@code IN (}, {@code USING (},
 * {@code DECIMAL(10,2)}, ...). The names live in the resource {@code builtin-functions.txt}, which says how they
 * were gathered. The lookup is case-insensitive (ASCII) and allocation-free: open addressing over a hash of the
 * upper-cased characters, as in {@link Keyword}.
 */
final class BuiltinFunctions {

    static final String RESOURCE = "builtin-functions.txt";

    private static final String[] SLOTS;
    private static final int MASK;
    private static final int MAX_LENGTH;
    private static final Set<String> NAMES;

    static {
        List<String> names = load();
        int size = Integer.highestOneBit(Math.max(16, names.size()) * 4);
        String[] slots = new String[size];
        int max = 0;
        for (String name : names) {
            max = Math.max(max, name.length());
            int slot = UpperCaseNames.spread(UpperCaseNames.hash(name, 0, name.length())) & (size - 1);
            while (slots[slot] != null) {
                slot = (slot + 1) & (size - 1);
            }
            slots[slot] = name;
        }
        SLOTS = slots;
        MASK = size - 1;
        MAX_LENGTH = max;
        NAMES = Collections.unmodifiableSet(new TreeSet<>(names));
    }

    private BuiltinFunctions() {
    }

    /** Whether {@code text[start, end)}, in any letter case, is a built-in function or keyword. Never allocates. */
    static boolean contains(CharSequence text, int start, int end) {
        int length = end - start;
        if (length < 1 || length > MAX_LENGTH) {
            return false;
        }
        int hash = UpperCaseNames.hash(text, start, end);
        if (hash == 0) {
            return false;
        }
        int slot = UpperCaseNames.spread(hash) & MASK;
        while (true) {
            String candidate = SLOTS[slot];
            if (candidate == null) {
                return false;
            }
            if (UpperCaseNames.matches(candidate, text, start, length)) {
                return true;
            }
            slot = (slot + 1) & MASK;
        }
    }

    /** Every listed name, upper case, sorted (for tests and documentation). */
    static Set<String> names() {
        return NAMES;
    }

    private static List<String> load() {
        try (InputStream in = BuiltinFunctions.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("resource " + RESOURCE + " is missing from the class path");
            }
            Set<String> unique = new TreeSet<>();
            BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                int comment = line.indexOf('#');
                String name = (comment >= 0 ? line.substring(0, comment) : line).trim();
                if (name.isEmpty()) {
                    continue;
                }
                for (int i = 0; i < name.length(); i++) {
                    char c = name.charAt(i);
                    if (!(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_')) {
                        throw new IllegalStateException(RESOURCE + ": not a name: '" + name + "'");
                    }
                }
                unique.add(name.toUpperCase(Locale.ROOT));
            }
            return new ArrayList<>(unique);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + RESOURCE, e);
        }
    }
}
