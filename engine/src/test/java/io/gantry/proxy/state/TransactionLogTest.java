package io.gantry.proxy.state;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What a session keeps of its open transaction for a replay, and when it stops keeping it. */
class TransactionLogTest {

    @Test
    void keepsEachAnsweredStatementUntilNoTransactionIsOpen() {
        TransactionLog log = new TransactionLog(true, 1024);
        log.sending(bytes("BEGIN"));
        log.answered(1, true);
        log.sending(bytes("INSERT INTO t VALUES (1)"));
        log.answered(2, true);
        assertThat(log.replayable()).isTrue();
        assertThat(log.entries()).extracting(TransactionLog.Entry::answerChecksum).containsExactly(1L, 2L);
        assertThat(log.describe()).startsWith("2 statements kept (31 bytes)");

        log.sending(bytes("COMMIT"));
        log.answered(3, false);
        assertThat(log.replayable()).isFalse();
        assertThat(log.isEmpty()).isTrue();
    }

    @Test
    void aStatementLostBeforeItsAnswerIsNotKept() {
        TransactionLog log = new TransactionLog(true, 1024);
        log.sending(bytes("BEGIN"));
        log.answered(1, true);
        log.sending(bytes("UPDATE t SET v = 2"));
        log.unanswered();
        assertThat(log.entries()).hasSize(1);
    }

    @Test
    void aTransactionPastTheLimitIsNotReplayableUntilItEnds() {
        TransactionLog log = new TransactionLog(true, 20);
        log.sending(bytes("BEGIN"));
        log.answered(1, true);
        assertThat(log.sending(bytes("INSERT INTO t VALUES (1)"))).isFalse();
        log.answered(2, true);
        assertThat(log.replayable()).isFalse();
        assertThat(log.records()).isFalse();
        assertThat(log.describe()).contains("--transaction-replay-max-bytes (20 bytes)");

        log.answered(3, false); // COMMIT
        assertThat(log.records()).isTrue();
        log.sending(bytes("BEGIN"));
        log.answered(4, true);
        assertThat(log.replayable()).isTrue();
    }

    @Test
    void aLostTransactionIsDueOnceUntilTheReplayStarts() {
        TransactionLog log = new TransactionLog(true, 1024);
        log.sending(bytes("BEGIN"));
        log.answered(1, true);
        log.lost("10.0.0.1:3306", "the connection closed");
        assertThat(log.replayDue()).isTrue();
        assertThat(log.lostServer()).isEqualTo("10.0.0.1:3306");
        log.replayStarted();
        assertThat(log.replayDue()).isFalse();
        assertThat(log.entries()).hasSize(1);
    }

    @Test
    void offKeepsNothing() {
        TransactionLog log = new TransactionLog(false, 1024);
        assertThat(log.records()).isFalse();
        assertThat(log.replayable()).isFalse();
        assertThat(log.describe()).startsWith("off");
    }

    private static byte[] bytes(String sql) {
        byte[] command = new byte[sql.length() + 1];
        command[0] = 3;
        System.arraycopy(sql.getBytes(), 0, command, 1, sql.length());
        return command;
    }
}
