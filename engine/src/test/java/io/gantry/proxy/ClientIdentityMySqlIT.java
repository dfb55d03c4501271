package io.gantry.proxy;

import io.gantry.sandbox.TopologyKind;

/** {@link ClientIdentityIT} against MySQL. */
class ClientIdentityMySqlIT extends ClientIdentityIT {

    @Override
    TopologyKind kind() {
        return TopologyKind.MYSQL;
    }
}
