package io.gantry.cache;

/** A cache statement refused: a query that cannot be cached (with the reason), an unknown or duplicate name. */
public final class CacheException extends RuntimeException {

    public CacheException(String message) {
        super(message);
    }
}
