package io.gantry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class GtidPositionsTest {

    @Test
    void mariaDbPositionGivesTheSequencePerDomain() {
        assertThat(MariaDbTopology.sequenceByDomain("0-33061-47,1-33062-5")).isEqualTo(Map.of(0L, 47L, 1L, 5L));
        assertThat(MariaDbTopology.sequenceByDomain("")).isEmpty();
    }

    @Test
    void malformedMariaDbPositionIsRefusedWithTheOffendingPart() {
        assertThatThrownBy(() -> MariaDbTopology.sequenceByDomain("0-1-2,banana"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'banana'");
    }

    @Test
    void mySqlGtidSetCountsEveryTransaction() {
        assertThat(MySqlReplicationSql.countTransactions(
                "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7,\n4e11fa47-71ca-11e1-9e33-c80aa9429562:3")).isEqualTo(7);
    }
}
