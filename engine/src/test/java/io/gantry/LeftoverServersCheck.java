package io.gantry;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.sandbox.Sandboxes;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * After every test class (registered for all of them through {@code META-INF/services}, with extension
 * auto-detection on in {@code junit-platform.properties}): no server the class started may still run, save the
 * JVM's shared topologies. A leaked server would slow every later class of its fork and hold ports and memory;
 * this names the class that leaked it. (It replaces a check that ran last in the module, which cannot exist once
 * classes run in parallel forks.) The shared topologies are stopped by the JVM's shutdown hook.
 */
public final class LeftoverServersCheck implements AfterAllCallback {

    @Override
    public void afterAll(ExtensionContext context) {
        if (context.getRequiredTestClass().getEnclosingClass() != null) {
            return; // a @Nested class: its outer class is checked when it is done
        }
        assertThat(Sandboxes.liveServersOutsideShared())
                .as("servers that %s started and left running (under %s)", context.getRequiredTestClass().getSimpleName(),
                        Sandboxes.runDirectory())
                .isEmpty();
    }
}
