package io.gantry.sandbox;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/** The kinds of sandbox topology the same tests run against. */
public enum TopologyKind {

    /** Real {@code mariadbd} processes: the bundled MariaDB, or the install named by {@code GANTRY_MARIADB_HOME}. */
    MARIADB {
        @Override
        public Optional<String> unavailableBecause() {
            return Optional.empty();
        }

        @Override
        public Topology start(Path directory, int replicas) {
            return MariaDbTopology.start(MariaDbInstallation.locate(), directory, replicas, 0);
        }
    },

    /**
     * MySQL from the {@linkplain #mySqlProvider() provider} this machine has: MySQL 8.4 in Docker containers
     * through Testcontainers where a Docker engine answers, else real {@code mysqld} processes (the bundled MySQL
     * 8.0.15, or the install named by {@code GANTRY_MYSQL_HOME}).
     */
    MYSQL {
        @Override
        public Optional<String> unavailableBecause() {
            return switch (mySqlProvider()) {
                case LOCAL -> MySqlInstallation.unavailableBecause();
                case DOCKER -> dockerUnavailableBecause();
            };
        }

        @Override
        public Topology start(Path directory, int replicas) {
            return switch (mySqlProvider()) {
                case LOCAL -> MySqlTopology.start(MySqlInstallation.locate(), directory, replicas, 0);
                case DOCKER -> MySqlContainerTopology.start(replicas);
            };
        }
    };

    /** Environment variable choosing the MySQL provider: {@code local} or {@code docker}. */
    public static final String MYSQL_PROVIDER_VARIABLE = "GANTRY_MYSQL_PROVIDER";

    /** Where {@link #MYSQL} servers come from. */
    public enum MySqlProvider {
        /** {@code mysqld} processes from the bundled binaries or {@code GANTRY_MYSQL_HOME}. */
        LOCAL,
        /** MySQL 8.4 containers through Testcontainers. */
        DOCKER
    }

    private static volatile MySqlProvider provider;

    /**
     * The MySQL provider: {@value #MYSQL_PROVIDER_VARIABLE} when set; otherwise Docker where a Docker engine
     * answers (and Testcontainers is on the class path), else the local binaries. Decided once per JVM.
     */
    public static MySqlProvider mySqlProvider() {
        MySqlProvider chosen = provider;
        if (chosen == null) {
            String explicit = System.getenv(MYSQL_PROVIDER_VARIABLE);
            if (explicit != null && !explicit.isBlank()) {
                try {
                    chosen = MySqlProvider.valueOf(explicit.strip().toUpperCase(Locale.ROOT));
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException(MYSQL_PROVIDER_VARIABLE + " must be 'local' or 'docker', not '"
                            + explicit + "'", e);
                }
            } else {
                chosen = dockerUnavailableBecause().isEmpty() ? MySqlProvider.DOCKER : MySqlProvider.LOCAL;
            }
            provider = chosen;
        }
        return chosen;
    }

    private static Optional<String> dockerUnavailableBecause() {
        try {
            return MySqlContainerTopology.unavailableBecause();
        } catch (NoClassDefFoundError e) {
            return Optional.of("MySQL 8.4 runs need Testcontainers on the class path");
        }
    }

    /** Why this kind cannot run on this machine, or empty when it can. */
    public abstract Optional<String> unavailableBecause();

    /**
     * Environment variable set where MySQL must be tested (CI sets it): a MySQL that cannot run here then fails the
     * test that needs it instead of skipping it. Not {@code GANTRY_}-prefixed: {@code gantry run} takes those for
     * its flags.
     */
    public static final String MYSQL_REQUIRED_VARIABLE = "REQUIRE_MYSQL";

    /**
     * Why a test of this kind is skipped on this machine, or empty when it runs.
     *
     * @throws IllegalStateException when the kind cannot run here but {@value #MYSQL_REQUIRED_VARIABLE} says it must
     */
    public Optional<String> skipReason() {
        Optional<String> reason = unavailableBecause();
        if (reason.isPresent() && this == MYSQL && System.getenv(MYSQL_REQUIRED_VARIABLE) != null) {
            throw new IllegalStateException(MYSQL_REQUIRED_VARIABLE + " is set, but " + reason.get());
        }
        return reason;
    }

    /** Starts a primary and {@code replicas} replicas; {@code directory} holds their files where there are any. */
    public abstract Topology start(Path directory, int replicas);
}
