package io.gantry.proxy.prepared;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import io.gantry.proxy.prepared.PreparedStatements.LongData;
import io.gantry.proxy.prepared.PreparedStatements.Statement;
import io.gantry.route.SqlMode;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementClassifier;
import io.gantry.route.StatementKind;
import io.gantry.wire.MalformedPacketException;
import io.gantry.wire.StmtPrepareOk;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class PreparedStatementsTest {

    private static final String PRIMARY = "db1:3306";
    private static final String REPLICA = "db2:3306";
    private static final String OTHER_REPLICA = "[::1]:3307";

    private static final StatementClass READ = StatementClass.of(StatementKind.READ);

    private final PreparedStatements statements = new PreparedStatements();

    @Test
    void allocatesClientIdsFromOneAndNeverReusesThem() {
        assertThat(register("SELECT 1", PRIMARY, 900).clientId()).isEqualTo(1);
        assertThat(register("SELECT 2", PRIMARY, 901).clientId()).isEqualTo(2);
        assertThat(register("SELECT 3", REPLICA, 7).clientId()).isEqualTo(3);
        statements.close(3);
        assertThat(register("SELECT 4", PRIMARY, 902).clientId()).isEqualTo(4);
        statements.clear();
        assertThat(statements.size()).isZero();
        assertThat(register("SELECT 5", PRIMARY, 903).clientId()).isEqualTo(5);
        assertThat(statements.size()).isEqualTo(1);
    }

    @Test
    void keepsTheTextAndCountsOfTheFirstPrepare() {
        Statement statement = statements.register("SELECT a, b FROM t WHERE id = ? AND c > ?", READ, PRIMARY,
                new StmtPrepareOk(77, 2, 2, 0));
        assertThat(statement).isEqualTo(new Statement(1, "SELECT a, b FROM t WHERE id = ? AND c > ?", READ, 2, 2));
        assertThat(statements.find(1)).contains(statement);
        assertThat(statements.find(2)).isEmpty();
    }

    @Test
    void givesBackTheClientsExactBytesWhateverTheirCharacterSet() {
        byte[] utf8 = "SELECT 'é€' FROM t".getBytes(StandardCharsets.UTF_8);
        byte[] gbkLike = {'S', 'E', 'L', 'E', 'C', 'T', ' ', '\'', (byte) 0xB5, (byte) 0x5C, '\''};
        Statement first = statements.register(new String(utf8, StandardCharsets.ISO_8859_1), READ, PRIMARY,
                new StmtPrepareOk(1, 1, 0, 0));
        Statement second = statements.register(new String(gbkLike, StandardCharsets.ISO_8859_1), READ, PRIMARY,
                new StmtPrepareOk(2, 1, 0, 0));
        assertThat(first.sqlBytes()).containsExactly(utf8);
        assertThat(second.sqlBytes()).containsExactly(gbkLike);
        ByteBuf prepare = Unpooled.buffer();
        second.writePrepare(prepare);
        assertThat((int) prepare.readUnsignedByte()).isEqualTo(0x16);
        assertThat(ByteBufUtil.getBytes(prepare)).containsExactly(gbkLike);
        prepare.release();
        assertThatThrownBy(() -> new Statement(1, "SELECT '€'", READ, 0, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("U+20AC");
    }

    @Test
    void rewritesTheBackendsPrepareOkWithTheClientId() {
        register("SELECT 1", PRIMARY, 1);
        Statement statement = register("SELECT ? + ?", PRIMARY, 0x0A0B0C0DL);
        ByteBuf backend = Unpooled.buffer();
        new StmtPrepareOk(0x0A0B0C0DL, 1, 2, 3).encode(backend);
        ByteBuf client = statement.clientPrepareOk(backend);
        assertThat(ByteBufUtil.getBytes(client))
                .containsExactly(0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00);
        assertThat(StmtPrepareOk.decode(backend)).isEqualTo(new StmtPrepareOk(0x0A0B0C0DL, 1, 2, 3));
        client.release();
        backend.release();
        ByteBuf err = Unpooled.wrappedBuffer(new byte[] {(byte) 0xFF, 0x10, 0x04});
        assertThatThrownBy(() -> statement.clientPrepareOk(err)).isInstanceOf(MalformedPacketException.class);
        err.release();
    }

    @Test
    void mapsTheStatementToEachBackendsOwnId() {
        Statement statement = register("SELECT * FROM t WHERE id = ?", PRIMARY, 41);
        long id = statement.clientId();
        assertThat(statements.backendId(id, PRIMARY)).hasValue(41);
        assertThat(statements.backendId(id, REPLICA)).isEmpty();
        assertThat(statements.addBackend(id, REPLICA, 3)).isEmpty();
        assertThat(statements.addBackend(id, OTHER_REPLICA, 41)).isEmpty();
        assertThat(statements.backendId(id, REPLICA)).hasValue(3);
        assertThat(statements.backendIds(id)).containsExactly(entry(PRIMARY, 41L), entry(REPLICA, 3L),
                entry(OTHER_REPLICA, 41L));
        assertThat(statements.addBackend(id, REPLICA, 4)).isEqualTo(OptionalLong.of(3));
        assertThat(statements.backendId(id, REPLICA)).hasValue(4);
        assertThat(statements.backendId(99, PRIMARY)).isEmpty();
        assertThat(statements.backendIds(99)).isEmpty();
        assertThatThrownBy(() -> statements.addBackend(99, REPLICA, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("99");
    }

    @Test
    void forgettingABackendDropsOnlyItsIdsAndKeepsTheStatements() {
        long first = register("SELECT 1", PRIMARY, 10).clientId();
        long second = register("SELECT 2", REPLICA, 20).clientId();
        statements.addBackend(first, REPLICA, 11);
        statements.forgetBackend(REPLICA);
        assertThat(statements.backendIds(first)).containsExactly(entry(PRIMARY, 10L));
        assertThat(statements.backendIds(second)).isEmpty();
        assertThat(statements.find(second)).isPresent();
        statements.addBackend(second, REPLICA, 21);
        assertThat(statements.backendId(second, REPLICA)).hasValue(21);
    }

    @Test
    void closingReturnsTheBackendIdsToCloseAndForgetsTheStatement() {
        long id = register("DELETE FROM t WHERE id = ?", PRIMARY, 5).clientId();
        statements.addBackend(id, REPLICA, 6);
        assertThat(statements.close(id)).containsExactly(entry(PRIMARY, 5L), entry(REPLICA, 6L));
        assertThat(statements.find(id)).isEmpty();
        assertThat(statements.close(id)).isEmpty();
        assertThat(statements.backendId(id, PRIMARY)).isEmpty();
    }

    @Test
    void clearingForgetsEveryStatement() {
        long id = register("SELECT 1", PRIMARY, 5).clientId();
        statements.longDataSent(id, PRIMARY);
        statements.clear();
        assertThat(statements.find(id)).isEmpty();
        assertThat(statements.longData(id)).isEmpty();
        assertThat(statements.find(PreparedStatements.LAST_PREPARED)).isEmpty();
    }

    @Test
    void lastPreparedIdMeansTheLatestSuccessfulPrepare() {
        assertThat(statements.find(PreparedStatements.LAST_PREPARED)).isEmpty();
        register("SELECT 1", PRIMARY, 5);
        Statement second = register("SELECT 2", PRIMARY, 6);
        assertThat(statements.find(PreparedStatements.LAST_PREPARED)).contains(second);
        assertThat(statements.backendId(PreparedStatements.LAST_PREPARED, PRIMARY)).hasValue(6);
        statements.prepareFailed();
        assertThat(statements.find(PreparedStatements.LAST_PREPARED)).isEmpty();
        Statement third = register("SELECT 3", PRIMARY, 7);
        assertThat(statements.find(PreparedStatements.LAST_PREPARED)).contains(third);
        statements.close(third.clientId());
        assertThat(statements.find(PreparedStatements.LAST_PREPARED)).isEmpty();
        assertThat(statements.find(second.clientId())).contains(second);
    }

    @Test
    void typesBoundByAnExecutionAnsweredFromACacheGoToEveryBackendNext() {
        long id = register("SELECT c FROM t WHERE id = ?", PRIMARY, 5).clientId();
        statements.addBackend(id, REPLICA, 9);
        byte[] longs = {0x08, 0x00};
        statements.typesBound(id, longs);
        assertThat(statements.missingTypes(id, PRIMARY)).hasValueSatisfying(types -> assertThat(types)
                .containsExactly(longs));
        assertThat(statements.missingTypes(id, REPLICA)).hasValueSatisfying(types -> assertThat(types)
                .containsExactly(longs));
    }

    @Test
    void tracksWhichBackendsKnowTheLatestParameterTypes() {
        long id = register("SELECT ? + ?", PRIMARY, 5).clientId();
        byte[] longs = {0x08, 0x00, 0x08, 0x00};
        byte[] strings = {(byte) 0xFD, 0x00, (byte) 0xFD, 0x00};
        assertThat(statements.paramTypes(id)).isEmpty();
        assertThat(statements.missingTypes(id, REPLICA)).isEmpty();

        statements.typesSent(id, PRIMARY, longs);
        assertThat(statements.paramTypes(id)).hasValueSatisfying(types -> assertThat(types).containsExactly(longs));
        assertThat(statements.missingTypes(id, PRIMARY)).isEmpty();
        assertThat(statements.missingTypes(id, REPLICA))
                .hasValueSatisfying(types -> assertThat(types).containsExactly(longs));

        statements.addBackend(id, REPLICA, 9);
        statements.typesSent(id, REPLICA, longs);
        assertThat(statements.missingTypes(id, REPLICA)).isEmpty();
        assertThat(statements.missingTypes(id, PRIMARY)).isEmpty();

        statements.typesSent(id, PRIMARY, strings);
        assertThat(statements.missingTypes(id, PRIMARY)).isEmpty();
        assertThat(statements.missingTypes(id, REPLICA))
                .hasValueSatisfying(types -> assertThat(types).containsExactly(strings));

        longs[0] = 0x01;
        assertThat(statements.paramTypes(id)).hasValueSatisfying(types -> assertThat(types).containsExactly(strings));
        assertThatThrownBy(() -> statements.typesSent(id, OTHER_REPLICA, strings))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(OTHER_REPLICA);
    }

    @Test
    void aBackendPreparedAgainHasToBeToldTheTypesAgain() {
        long id = register("SELECT ?", PRIMARY, 5).clientId();
        byte[] types = {0x03, 0x00};
        statements.typesSent(id, PRIMARY, types);
        statements.forgetBackend(PRIMARY);
        statements.addBackend(id, PRIMARY, 6);
        assertThat(statements.missingTypes(id, PRIMARY))
                .hasValueSatisfying(missing -> assertThat(missing).containsExactly(types));
        statements.typesSent(id, PRIMARY, types);
        statements.addBackend(id, PRIMARY, 7);
        assertThat(statements.missingTypes(id, PRIMARY)).isPresent();
    }

    @Test
    void longDataSticksToOneBackendUntilTheNextExecution() {
        long id = register("INSERT INTO t (blob_col) VALUES (?)", PRIMARY, 5).clientId();
        assertThat(statements.longData(id)).isEmpty();
        statements.longDataSent(id, PRIMARY);
        statements.longDataSent(id, PRIMARY);
        assertThat(statements.longData(id)).contains(new LongData(PRIMARY, false));
        assertThatThrownBy(() -> statements.longDataSent(id, REPLICA))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(PRIMARY);
        statements.forgetBackend(REPLICA);
        assertThat(statements.longData(id)).contains(new LongData(PRIMARY, false));

        statements.executed(id, PRIMARY);
        assertThat(statements.longData(id)).isEmpty();
        statements.longDataSent(id, REPLICA);
        assertThat(statements.longData(id)).contains(new LongData(REPLICA, false));
        assertThatThrownBy(() -> statements.longDataSent(99, PRIMARY)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aConnectionLeavingTheSessionClosesItsStatementsUnlessLongDataWaitsThere() {
        long first = register("SELECT ?", PRIMARY, 5).clientId();
        long second = register("SELECT ?, ?", PRIMARY, 6).clientId();
        statements.addBackend(second, REPLICA, 9);
        assertThat(statements.backendIdsOn(PRIMARY)).containsExactlyInAnyOrder(5L, 6L);
        assertThat(statements.backendIdsOn(REPLICA)).containsExactly(9L);
        assertThat(statements.longDataWaitsOn(PRIMARY)).isFalse();
        statements.longDataSent(first, PRIMARY);
        assertThat(statements.longDataWaitsOn(PRIMARY)).isTrue();
        assertThat(statements.longDataWaitsOn(REPLICA)).isFalse();
        statements.executed(first, PRIMARY);
        assertThat(statements.longDataWaitsOn(PRIMARY)).isFalse();
        statements.forgetBackend(PRIMARY);
        assertThat(statements.backendIdsOn(PRIMARY)).isEmpty();
    }

    @Test
    void longDataOnAClosedConnectionIsReportedLost() {
        long id = register("INSERT INTO t (blob_col) VALUES (?)", PRIMARY, 5).clientId();
        statements.longDataSent(id, PRIMARY);
        statements.forgetBackend(PRIMARY);
        assertThat(statements.longData(id)).contains(new LongData(PRIMARY, true));
        assertThat(statements.reset(id)).isEmpty();
        assertThat(statements.longData(id)).isEmpty();
    }

    @Test
    void longDataThatCouldNotBeDeliveredIsReportedLost() {
        long id = register("INSERT INTO t (blob_col) VALUES (?)", PRIMARY, 5).clientId();
        statements.longDataLost(id, REPLICA);
        assertThat(statements.longData(id)).contains(new LongData(REPLICA, true));
        statements.longDataSent(id, REPLICA);
        assertThat(statements.longData(id)).contains(new LongData(REPLICA, true));
        statements.executed(id, PRIMARY);
        assertThat(statements.longData(id)).isEmpty();
    }

    @Test
    void remembersWhereTheStatementLastRanForFetch() {
        long id = register("SELECT * FROM big", PRIMARY, 5).clientId();
        assertThat(statements.executedOn(id)).isEmpty();
        statements.addBackend(id, REPLICA, 8);
        statements.executed(id, REPLICA);
        assertThat(statements.executedOn(id)).contains(REPLICA);
        statements.forgetBackend(PRIMARY);
        assertThat(statements.executedOn(id)).contains(REPLICA);
        statements.forgetBackend(REPLICA);
        assertThat(statements.executedOn(id)).isEmpty();
        assertThat(statements.executedOn(99)).isEmpty();
    }

    @Test
    void resetTargetsTheBackendsHoldingLongDataOrACursor() {
        long id = register("SELECT * FROM t WHERE doc = ?", PRIMARY, 5).clientId();
        assertThat(statements.reset(id)).isEmpty();
        statements.addBackend(id, REPLICA, 6);
        statements.executed(id, REPLICA);
        statements.longDataSent(id, PRIMARY);
        assertThat(statements.reset(id)).containsExactly(PRIMARY, REPLICA);
        assertThat(statements.longData(id)).isEmpty();
        assertThat(statements.executedOn(id)).isEmpty();
        assertThat(statements.reset(id)).isEmpty();
        statements.executed(id, PRIMARY);
        statements.longDataSent(id, PRIMARY);
        assertThat(statements.reset(id)).containsExactly(PRIMARY);
        assertThat(statements.reset(99)).isEmpty();
    }

    @Test
    void keptStatementsComeBackWithTheirIdsClassesAndTypesButOnNoServer() {
        register("SELECT 1", PRIMARY, 900);
        Statement insert = statements.register("INSERT INTO t VALUES (?)", "INSERT INTO t VALUES (?)", true,
                StatementClassifier.classify("INSERT INTO t VALUES (?)", SqlMode.DEFAULT), PRIMARY,
                new StmtPrepareOk(901, 0, 1, 0));
        statements.typesBound(insert.clientId(), new byte[] {3, 0});
        statements.close(1);
        Statement begin = register("BEGIN", REPLICA, 7);

        PreparedStatements moved = new PreparedStatements();
        moved.restore(statements.kept());
        assertThat(moved.find(insert.clientId())).contains(insert);
        assertThat(moved.find(begin.clientId())).contains(begin);
        assertThat(moved.find(1)).isEmpty();
        assertThat(moved.paramTypes(insert.clientId())).hasValueSatisfying(types -> assertThat(types)
                .containsExactly(3, 0));
        assertThat(moved.backendIds(insert.clientId())).isEmpty();
        assertThat(moved.find(PreparedStatements.LAST_PREPARED)).contains(begin);
        Statement next = moved.register("SELECT 2", READ, PRIMARY, new StmtPrepareOk(5, 0, 0, 0));
        assertThat(next.clientId()).as("ids go on where they were").isEqualTo(4);
    }

    private Statement register(String sql, String hostPort, long backendId) {
        return statements.register(sql, StatementClassifier.classify(sql, SqlMode.DEFAULT), hostPort,
                new StmtPrepareOk(backendId, 0, 0, 0));
    }
}
