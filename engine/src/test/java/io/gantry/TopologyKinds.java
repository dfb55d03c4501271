package io.gantry;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The server flavours integration tests run against: {@code @MethodSource("io.gantry.TopologyKinds#all")}. A kind
 * this machine cannot run is skipped with the reason in the report (MySQL runs from the bundled binaries on Linux
 * x86-64, so in CI nothing is skipped).
 */
public final class TopologyKinds {

    private TopologyKinds() {
    }

    /** MariaDB and MySQL. */
    public static Stream<TopologyKind> all() {
        return Stream.of(TopologyKind.values());
    }

    /** Skips the test when this kind cannot run here. */
    public static void assumeAvailable(TopologyKind kind) {
        Optional<String> reason = kind.unavailableBecause();
        assumeTrue(reason.isEmpty(), () -> "skipped: " + reason.orElse(""));
    }

    /** A topology of its own, after {@link #assumeAvailable}; the caller closes it. */
    public static Topology startPrivate(TopologyKind kind, String name, int replicas) {
        assumeAvailable(kind);
        return Sandboxes.startPrivate(kind, name + "-" + kind.name().toLowerCase(), replicas);
    }

    /** The JVM's shared topology of this kind, after {@link #assumeAvailable}. */
    public static Topology shared(TopologyKind kind) {
        assumeAvailable(kind);
        return Sandboxes.shared(kind);
    }
}
