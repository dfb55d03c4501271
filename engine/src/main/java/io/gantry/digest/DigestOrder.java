package io.gantry.digest;

import java.util.Comparator;

/** How {@code SHOW GANTRY QUERIES ORDER BY ...} sorts the rows: always the largest first. */
public enum DigestOrder {
    TOTAL_TIME(Comparator.comparingLong(ShapeDigest::totalMicros)),
    COUNT(Comparator.comparingLong(ShapeDigest::count)),
    P99(Comparator.comparingLong(ShapeDigest::p99Micros)),
    ERRORS(Comparator.comparingLong(ShapeDigest::errors));

    private final Comparator<ShapeDigest> largestFirst;

    DigestOrder(Comparator<ShapeDigest> ascending) {
        this.largestFirst = ascending.reversed().thenComparing(ShapeDigest::shape);
    }

    public Comparator<ShapeDigest> largestFirst() {
        return largestFirst;
    }
}
