package io.gantry;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gantry.sandbox.MariaDbInstallation;
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

    /**
     * Set where the distribution's MariaDB must be tested (CI): its absence then fails instead of skipping. Not
     * {@code GANTRY_}-prefixed: {@code gantry run} takes those for its flags and warns of any other.
     */
    public static final String DISTRIBUTION_REQUIRED_VARIABLE = "REQUIRE_DISTRIBUTION_MARIADB";

    private TopologyKinds() {
    }

    /** MariaDB and MySQL. */
    public static Stream<TopologyKind> all() {
        return Stream.of(TopologyKind.values());
    }

    /** Skips the test when this kind cannot run here. */
    public static void assumeAvailable(TopologyKind kind) {
        Optional<String> reason = kind.skipReason();
        assumeTrue(reason.isEmpty(), () -> "skipped: " + reason.orElse(""));
    }

    /** A topology of its own, after {@link #assumeAvailable}; the caller closes it. */
    public static Topology startPrivate(TopologyKind kind, String name, int replicas) {
        assumeAvailable(kind);
        return Sandboxes.startPrivate(kind, name + "-" + kind.name().toLowerCase(), replicas);
    }

    /**
     * A topology of the distribution's packaged MariaDB (Debian 12: 10.11), the caller closes it. Skipped where it
     * is not installed, unless {@value #DISTRIBUTION_REQUIRED_VARIABLE} is set (CI installs it and sets it, so a
     * missing install fails there instead of passing unseen).
     */
    public static Topology startDistributionMariaDb(String name, int replicas) {
        Optional<MariaDbInstallation> installation = MariaDbInstallation.distribution();
        if (installation.isEmpty()) {
            String reason = "no packaged MariaDB under " + MariaDbInstallation.DISTRIBUTION_HOME
                    + " (apt-get install mariadb-server)";
            if (System.getenv(DISTRIBUTION_REQUIRED_VARIABLE) != null) {
                throw new IllegalStateException(DISTRIBUTION_REQUIRED_VARIABLE + " is set but there is " + reason);
            }
            assumeTrue(false, "skipped: " + reason);
        }
        return Sandboxes.startPrivate(installation.get(), name + "-distribution", replicas);
    }

    /** The JVM's shared topology of this kind, after {@link #assumeAvailable}. */
    public static Topology shared(TopologyKind kind) {
        assumeAvailable(kind);
        return Sandboxes.shared(kind);
    }
}
