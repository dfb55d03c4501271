package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ServerStatusTest {

    @Test
    void bitsMatchTheProtocol() {
        assertThat(ServerStatus.SERVER_STATUS_IN_TRANS).isEqualTo(0x1);
        assertThat(ServerStatus.SERVER_STATUS_AUTOCOMMIT).isEqualTo(0x2);
        assertThat(ServerStatus.SERVER_MORE_RESULTS_EXISTS).isEqualTo(0x8);
        assertThat(ServerStatus.SERVER_STATUS_CURSOR_EXISTS).isEqualTo(0x40);
        assertThat(ServerStatus.SERVER_STATUS_LAST_ROW_SENT).isEqualTo(0x80);
        assertThat(ServerStatus.SERVER_PS_OUT_PARAMS).isEqualTo(0x1000);
        assertThat(ServerStatus.SERVER_STATUS_IN_TRANS_READONLY).isEqualTo(0x2000);
        assertThat(ServerStatus.SERVER_SESSION_STATE_CHANGED).isEqualTo(0x4000);
    }

    @Test
    void helpersReadTransactionAndResultState() {
        int readOnlyTx = ServerStatus.SERVER_STATUS_IN_TRANS | ServerStatus.SERVER_STATUS_IN_TRANS_READONLY;
        assertThat(ServerStatus.inTransaction(readOnlyTx)).isTrue();
        assertThat(ServerStatus.inReadOnlyTransaction(readOnlyTx)).isTrue();
        assertThat(ServerStatus.inReadOnlyTransaction(ServerStatus.SERVER_STATUS_IN_TRANS)).isFalse();
        assertThat(ServerStatus.autocommit(ServerStatus.SERVER_STATUS_AUTOCOMMIT)).isTrue();
        assertThat(ServerStatus.moreResultsExist(ServerStatus.SERVER_MORE_RESULTS_EXISTS)).isTrue();
        assertThat(ServerStatus.describe(0x0003)).isEqualTo("SERVER_STATUS_IN_TRANS|SERVER_STATUS_AUTOCOMMIT");
        assertThat(ServerStatus.describe(1 << 20)).isEqualTo("BIT_20");
    }
}
