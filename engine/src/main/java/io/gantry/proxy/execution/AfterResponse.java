package io.gantry.proxy.execution;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.wire.ResponseFraming;

/** What happens once a forwarded command's response is complete, before the session takes its next command. */
public interface AfterResponse {

    void run(BackendConnection connection, ResponseFraming framing, Runnable done);

    AfterResponse NOTHING_MORE = (connection, framing, done) -> done.run();
}
