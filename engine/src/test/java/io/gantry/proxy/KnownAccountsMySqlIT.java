package io.gantry.proxy;

import io.gantry.sandbox.TopologyKind;

/** {@link KnownAccountsIT} against MySQL 8, whose account facts are columns of {@code mysql.user}. */
class KnownAccountsMySqlIT extends KnownAccountsIT {

    @Override
    TopologyKind kind() {
        return TopologyKind.MYSQL;
    }

    /** MySQL's ER_ACCOUNT_HAS_BEEN_LOCKED. */
    @Override
    Login lockedAccount() {
        return Login.refused(3118, "HY000");
    }
}
