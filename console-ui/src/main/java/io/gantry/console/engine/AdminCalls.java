package io.gantry.console.engine;

import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Requests to the engine, answered later on a thread that is not the UI's. What the view-models call; the console's
 * {@link EngineConnection} in the application, a fake in their tests.
 */
@FunctionalInterface
public interface AdminCalls {

    /**
     * Sends a request; the future completes with the engine's answer (an {@link Reply.Error} is an answer) or fails
     * with an {@link java.io.IOException} when there is no connection or it broke.
     *
     * @param request makes the request from the id the connection gives it
     */
    CompletableFuture<Reply> call(Function<String, Request> request);

    /** Runs an admin statement. */
    default CompletableFuture<Reply> sql(String sql) {
        return call(id -> new Request.Sql(id, sql));
    }
}
