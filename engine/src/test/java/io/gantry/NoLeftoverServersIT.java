package io.gantry;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.sandbox.Sandboxes;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/** Runs last in the module: once the shared topologies are closed, no server started by this JVM may remain. */
@Order(Integer.MAX_VALUE)
class NoLeftoverServersIT {

    @Test
    void noMariadbdStartedByThisRunIsStillRunning() {
        Sandboxes.closeShared();
        assertThat(Sandboxes.liveServersOfThisRun())
                .as("mariadbd processes still running under %s", Sandboxes.runDirectory())
                .isEmpty();
    }
}
