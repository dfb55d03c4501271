package io.gantry.proxy;

import io.gantry.sandbox.TopologyKind;

/**
 * {@link CachedReadsIT} against MySQL 8.0: the differential test, the account checks and the REVOKE seen in the change
 * stream, on MySQL GTID sets. The byte-for-byte comparison is not run here: {@link WireClient} logs in with
 * mysql_native_password only, and MySQL's sandbox accounts use caching_sha2_password (MariaDB's run covers it).
 */
class CachedReadsMySqlIT extends CachedReadsIT {

    @Override
    TopologyKind kind() {
        return TopologyKind.MYSQL;
    }

    /** Overridden without {@code @Test}, so JUnit does not run it for MySQL (see the class comment). */
    @Override
    void textAndPreparedReadsHitOneCacheWithTheServersOwnBytes() {
    }
}
