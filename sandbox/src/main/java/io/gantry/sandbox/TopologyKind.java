package io.gantry.sandbox;

import java.nio.file.Path;
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

    /** MySQL 8.4 in Docker containers through Testcontainers; skipped where no Docker engine answers. */
    MYSQL_84 {
        @Override
        public Optional<String> unavailableBecause() {
            try {
                return MySqlContainerTopology.unavailableBecause();
            } catch (NoClassDefFoundError e) {
                return Optional.of("MySQL 8.4 runs need Testcontainers on the class path");
            }
        }

        @Override
        public Topology start(Path directory, int replicas) {
            return MySqlContainerTopology.start(replicas);
        }
    };

    /** Why this kind cannot run on this machine, or empty when it can. */
    public abstract Optional<String> unavailableBecause();

    /** Starts a primary and {@code replicas} replicas; {@code directory} holds their files where there are any. */
    public abstract Topology start(Path directory, int replicas);
}
