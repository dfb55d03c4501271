package io.gantry.console.engine;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** What a failed request says to the operator. */
public final class Failures {

    private Failures() {
    }

    /** The message of the failure under the future's wrappers. */
    public static String message(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null && (cause instanceof CompletionException
                || cause instanceof ExecutionException)) {
            cause = cause.getCause();
        }
        return cause.getMessage() == null ? cause.toString() : cause.getMessage();
    }
}
