package io.gantry.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class VersionHistoryTest {

    @Test
    void theNewestThousandVersionsAreKept() {
        assertThat(VersionHistory.prunableUpTo(1)).isZero();
        assertThat(VersionHistory.prunableUpTo(1000)).isZero();
        assertThat(VersionHistory.prunableUpTo(1001)).isEqualTo(1);
        assertThat(VersionHistory.prunableUpTo(5000)).isEqualTo(4000);
    }

    @Test
    void anInstanceWhoseNextVersionWasPrunedTakesTheNewest() {
        assertThat(VersionHistory.missesPruned(7, 8)).as("the next one is there").isFalse();
        assertThat(VersionHistory.missesPruned(0, 1)).as("a newcomer to an unpruned cluster").isFalse();
        assertThat(VersionHistory.missesPruned(7, 9)).isTrue();
        assertThat(VersionHistory.missesPruned(0, 4001)).as("a newcomer to a pruned cluster").isTrue();
    }
}
