package io.gantry.handover;

import java.util.OptionalLong;

/**
 * The Gantry a hand-over was done to: its name for the logs and its process id, which the kernel gives with the
 * hand-over connection (empty where it did not). A service manager is told the id, since it becomes the main process.
 *
 * @param name the Gantry taking over as the logs name it ("the Gantry taking over (pid 42)")
 * @param pid  its process id
 */
public record Successor(String name, OptionalLong pid) {
}
