package io.gantry.proxy;

import io.gantry.sandbox.TopologyKind;

/** {@link PreparedStatementIT} against MySQL. */
class PreparedStatementMySqlIT extends PreparedStatementIT {

    @Override
    TopologyKind kind() {
        return TopologyKind.MYSQL;
    }
}
