package io.gantry.proxy;

import io.gantry.sandbox.TopologyKind;

/** {@link SessionStateIT} against MySQL. */
class SessionStateMySqlIT extends SessionStateIT {

    @Override
    TopologyKind kind() {
        return TopologyKind.MYSQL;
    }
}
