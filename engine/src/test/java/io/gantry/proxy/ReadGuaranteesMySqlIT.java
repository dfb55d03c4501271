package io.gantry.proxy;

import io.gantry.sandbox.TopologyKind;
import org.junit.jupiter.api.BeforeAll;

/** {@link ReadGuaranteesIT} against MySQL: positions sampled from {@code gtid_executed}. */
class ReadGuaranteesMySqlIT extends ReadGuaranteesIT {

    @BeforeAll
    static void start() {
        start(TopologyKind.MYSQL);
    }
}
