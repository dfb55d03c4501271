package io.gantry.topology;

/**
 * Why a reachable replica cannot be trusted with reads.
 *
 * @param health {@link Health#BROKEN} or {@link Health#DIVERGED}
 * @param detail what is wrong, in plain words, e.g. "its SQL thread stopped with error 1062: Duplicate entry ..."
 */
record ReplicationProblem(Health health, String detail) {

    ReplicationProblem {
        if (health != Health.BROKEN && health != Health.DIVERGED) {
            throw new IllegalArgumentException("a replication problem is broken or diverged, not " + health);
        }
    }

    /** The line operators see: "replica host:port is broken: its SQL thread stopped ...". */
    String describe(String address) {
        return "replica " + address + " is " + health.sqlName() + ": " + detail;
    }
}
