package io.gantry.proxy;

import io.gantry.sandbox.TopologyKind;

/** {@link ReadGuaranteesIT} against MySQL: positions sampled from {@code gtid_executed}. */
class ReadGuaranteesMySqlIT extends ReadGuaranteesIT {

    @Override
    TopologyKind kind() {
        return TopologyKind.MYSQL;
    }
}
