package io.gantry.proxy;

import io.gantry.sandbox.TopologyKind;

/** {@link KillTranslationIT} against MySQL. */
class KillTranslationMySqlIT extends KillTranslationIT {

    @Override
    TopologyKind kind() {
        return TopologyKind.MYSQL;
    }
}
