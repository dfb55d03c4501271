package io.gantry.console;

import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.console.engine.AdminCalls;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/** An engine for view-model tests: records each request and answers it with what the test says. */
public final class FakeEngine implements AdminCalls {

    private final List<Request> requests = new ArrayList<>();
    private final Function<Request, CompletableFuture<Reply>> answers;
    private int ids;

    public FakeEngine(Function<Request, CompletableFuture<Reply>> answers) {
        this.answers = answers;
    }

    /** Answers every request with the same reply. */
    public static FakeEngine answering(Function<Request, Reply> reply) {
        return new FakeEngine(request -> CompletableFuture.completedFuture(reply.apply(request)));
    }

    @Override
    public synchronized CompletableFuture<Reply> call(Function<String, Request> request) {
        Request made = request.apply(Integer.toString(++ids));
        requests.add(made);
        return answers.apply(made);
    }

    public synchronized List<Request> requests() {
        return List.copyOf(requests);
    }
}
