package io.gantry.console.engine;

import io.gantry.admin.protocol.Reply;
import java.util.Locale;
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

    /**
     * What an answer that is not the one expected says: an error's kind and message, else what came instead, in
     * words ("unexpected answer: 3 rows"), never the record's fields.
     */
    public static String message(Reply reply) {
        if (reply instanceof Reply.Error refused) {
            return refused.error() + ": " + refused.message();
        }
        if (reply instanceof Reply.Done done) {
            return "unexpected answer: " + done.message();
        }
        if (reply instanceof Reply.Rows rows) {
            return "unexpected answer: " + rows.rows().size() + (rows.rows().size() == 1 ? " row" : " rows");
        }
        return reply == null ? "no answer"
                : "unexpected answer: " + reply.getClass().getSimpleName().toLowerCase(Locale.ROOT);
    }
}
