package io.gantry.handover;

/** A take-over that cannot go on, with the reason in an operator's words. */
public final class HandOverException extends RuntimeException {

    public HandOverException(String message) {
        super(message);
    }
}
