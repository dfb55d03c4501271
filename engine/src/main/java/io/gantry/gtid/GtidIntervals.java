package io.gantry.gtid;

import java.util.Arrays;
import java.util.Comparator;

/**
 * Operations on the transaction numbers of one MySQL UUID (and tag), kept as a {@code long[]} of inclusive
 * {@code start, end} pairs, sorted, disjoint and not adjacent ({@code 1-3:4-5} is stored as {@code 1-5}). Arrays are
 * never modified after they are returned; an operation that changes nothing returns its argument itself, so callers
 * can detect "no change" by identity and allocate nothing.
 *
 * <p>Numbers are at most {@link MySqlGtid#MAX_TRANSACTION}, so {@code end + 1} never overflows.
 */
final class GtidIntervals {

    static final long[] NONE = new long[0];

    private GtidIntervals() {
    }

    /** Sorts and merges {@code count} numbers of {@code pairs} (start, end, start, end, ...; start <= end). */
    static long[] normalize(long[] pairs, int count) {
        boolean canonical = true;
        for (int i = 2; i < count && canonical; i += 2) {
            canonical = pairs[i] > pairs[i - 1] + 1;
        }
        if (canonical) {
            return Arrays.copyOf(pairs, count);
        }
        long[][] sorted = new long[count / 2][];
        for (int i = 0; i < count; i += 2) {
            sorted[i / 2] = new long[] {pairs[i], pairs[i + 1]};
        }
        Arrays.sort(sorted, Comparator.comparingLong(p -> p[0]));
        long[] out = new long[count];
        int o = 0;
        for (long[] p : sorted) {
            o = append(out, o, p[0], p[1]);
        }
        return o == out.length ? out : Arrays.copyOf(out, o);
    }

    /** Index of the last pair whose start is at most {@code n}, or -1. */
    private static int floor(long[] iv, long n) {
        int lo = 0;
        int hi = iv.length / 2 - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (iv[2 * mid] <= n) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    static boolean contains(long[] iv, long n) {
        int i = floor(iv, n);
        return i >= 0 && iv[2 * i + 1] >= n;
    }

    /** Whether every number of {@code b} is in {@code a}. */
    static boolean contains(long[] a, long[] b) {
        int i = 0;
        for (int j = 0; j < b.length; j += 2) {
            while (i < a.length && a[i + 1] < b[j]) {
                i += 2;
            }
            // a's pairs are not adjacent, so one of b's pairs must lie inside a single pair of a.
            if (i >= a.length || a[i] > b[j] || a[i + 1] < b[j + 1]) {
                return false;
            }
        }
        return true;
    }

    /** {@code iv} with {@code n} added: {@code iv} itself if it has {@code n} already. */
    static long[] with(long[] iv, long n) {
        int i = floor(iv, n);
        if (i >= 0 && iv[2 * i + 1] >= n) {
            return iv;
        }
        boolean joinsLeft = i >= 0 && iv[2 * i + 1] == n - 1;
        boolean joinsRight = 2 * (i + 1) < iv.length && iv[2 * (i + 1)] == n + 1;
        long[] out;
        if (joinsLeft && joinsRight) {
            out = new long[iv.length - 2];
            System.arraycopy(iv, 0, out, 0, 2 * i + 1);
            out[2 * i + 1] = iv[2 * i + 3];
            System.arraycopy(iv, 2 * i + 4, out, 2 * i + 2, iv.length - (2 * i + 4));
        } else if (joinsLeft) {
            out = iv.clone();
            out[2 * i + 1] = n;
        } else if (joinsRight) {
            out = iv.clone();
            out[2 * i + 2] = n;
        } else {
            out = new long[iv.length + 2];
            System.arraycopy(iv, 0, out, 0, 2 * i + 2);
            out[2 * i + 2] = n;
            out[2 * i + 3] = n;
            System.arraycopy(iv, 2 * i + 2, out, 2 * i + 4, iv.length - (2 * i + 2));
        }
        return out;
    }

    /** The union; {@code a} or {@code b} itself when one contains the other. */
    static long[] union(long[] a, long[] b) {
        if (contains(a, b)) {
            return a;
        }
        if (contains(b, a)) {
            return b;
        }
        long[] out = new long[a.length + b.length];
        int o = 0;
        int i = 0;
        int j = 0;
        while (i < a.length || j < b.length) {
            if (j >= b.length || i < a.length && a[i] <= b[j]) {
                o = append(out, o, a[i], a[i + 1]);
                i += 2;
            } else {
                o = append(out, o, b[j], b[j + 1]);
                j += 2;
            }
        }
        return o == out.length ? out : Arrays.copyOf(out, o);
    }

    /** The numbers of {@code a} that are not in {@code b}; {@code a} itself when they share none. */
    static long[] subtract(long[] a, long[] b) {
        long[] out = new long[a.length + b.length];
        int o = 0;
        int j = 0;
        boolean changed = false;
        for (int i = 0; i < a.length; i += 2) {
            long start = a[i];
            long end = a[i + 1];
            while (j < b.length && b[j + 1] < start) {
                j += 2;
            }
            int k = j;
            while (true) {
                if (k >= b.length || b[k] > end) {
                    out[o++] = start;
                    out[o++] = end;
                    break;
                }
                changed = true;
                if (b[k] > start) {
                    out[o++] = start;
                    out[o++] = b[k] - 1;
                }
                if (b[k + 1] >= end) {
                    break;
                }
                start = b[k + 1] + 1;
                k += 2;
            }
        }
        if (!changed) {
            return a;
        }
        return o == 0 ? NONE : Arrays.copyOf(out, o);
    }

    /** Appends a pair that starts at or after the last one's start, merging it into the last when they touch. */
    private static int append(long[] out, int o, long start, long end) {
        if (o > 0 && start <= out[o - 1] + 1) {
            if (end > out[o - 1]) {
                out[o - 1] = end;
            }
            return o;
        }
        out[o] = start;
        out[o + 1] = end;
        return o + 2;
    }
}
