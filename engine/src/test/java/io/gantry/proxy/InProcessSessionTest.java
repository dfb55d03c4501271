package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.digest.DigestSettings;
import io.gantry.digest.RanOn;
import io.gantry.proxy.session.ProxyConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The benchmark's session answers as a proxy would: if it did not, the benchmark would measure something else. */
class InProcessSessionTest {

    @Test
    void pointSelectsGoToTheReplicaAndTheRowReachesTheClient() {
        try (InProcessSession session = new InProcessSession()) {
            ByteBuf query = session.queryFrame("SELECT c FROM sbtest1 WHERE id=5021");
            assertThat(text(session.command(query))).contains(InProcessSession.ROW_VALUE);
            long statement = session.prepare("SELECT c FROM sbtest1 WHERE id=?");
            assertThat(text(session.command(session.executeFrame(statement, 1, true))))
                    .contains(InProcessSession.ROW_VALUE);
            assertThat(text(session.command(session.executeFrame(statement, 2, false))))
                    .contains(InProcessSession.ROW_VALUE);
            query.release();
            // The login and the prepare on the primary; the reads on one replica connection.
            assertThat(session.backends().values()).allSatisfy(channels -> assertThat(channels).hasSize(1));
            assertThat(session.backends()).hasSize(2);
        }
    }

    @Test
    void theBenchmarksTextAndExecutionsAreCountedAsOneShapeOnTheReplica() {
        try (InProcessSession session = new InProcessSession()) {
            ByteBuf query = session.queryFrame("SELECT c FROM sbtest1 WHERE id=5021");
            text(session.command(query));
            long statement = session.prepare("SELECT c FROM sbtest1 WHERE id=?");
            text(session.command(session.executeFrame(statement, 1, true)));
            text(session.command(session.executeFrame(statement, 2, false)));
            query.release();
            assertThat(session.digests().snapshot())
                    .filteredOn(row -> row.shape().equals("SELECT c FROM sbtest1 WHERE id = ?")).singleElement()
                    .satisfies(row -> {
                        assertThat(row.count()).isEqualTo(3);
                        assertThat(row.rowsSent()).isEqualTo(3);
                        assertThat(row.ran(RanOn.REPLICA)).isEqualTo(3);
                        assertThat(row.errors()).isZero();
                    });
        }
    }

    @Test
    void withDigestsOffTheSameStatementsAnswerAndNothingIsCounted() {
        ProxyConfig config = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withDigests(new DigestSettings(false, 100, Optional.empty(), false, Optional.empty()));
        try (InProcessSession session = new InProcessSession(false, config)) {
            ByteBuf query = session.queryFrame("SELECT c FROM sbtest1 WHERE id=5021");
            assertThat(text(session.command(query))).contains(InProcessSession.ROW_VALUE);
            long statement = session.prepare("SELECT c FROM sbtest1 WHERE id=?");
            assertThat(text(session.command(session.executeFrame(statement, 1, true))))
                    .contains(InProcessSession.ROW_VALUE);
            query.release();
            assertThat(session.digests().snapshot()).isEmpty();
        }
    }

    @Test
    void laterLoginsOnTheSameLoopTakeTheConnectionAnEarlierOneGaveToThePool() {
        try (InProcessSession session = new InProcessSession()) {
            // The first session keeps its primary connection (retention): the second login opens one of its own.
            session.login().close();
            assertThat(session.backends().get(session.primaryAddress())).hasSize(2);
            for (int i = 0; i < 3; i++) {
                InProcessSession later = session.login();
                ByteBuf query = later.queryFrame("SELECT c FROM sbtest1 WHERE id=5021");
                assertThat(text(later.command(query))).contains(InProcessSession.ROW_VALUE);
                query.release();
                later.close();
            }
            assertThat(session.backends().get(session.primaryAddress())).hasSize(2);
            assertThat(session.backends().get(session.replicaAddress())).hasSize(1);
        }
    }

    private static String text(List<ByteBuf> written) {
        StringBuilder out = new StringBuilder();
        for (ByteBuf buffer : written) {
            out.append(new String(ByteBufUtil.getBytes(buffer), StandardCharsets.ISO_8859_1));
            buffer.release();
        }
        return out.toString();
    }
}
