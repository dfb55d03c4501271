package io.gantry.sandbox;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Optional;
import java.util.stream.Stream;

/** Runs a test once per topology kind; kinds this machine cannot run are skipped with the reason in the report. */
final class TopologyKinds {

    private TopologyKinds() {
    }

    static Stream<TopologyKind> all() {
        return Stream.of(TopologyKind.values());
    }

    static void assumeAvailable(TopologyKind kind) {
        Optional<String> reason = kind.skipReason();
        assumeTrue(reason.isEmpty(), () -> "skipped: " + reason.orElse(""));
    }
}
