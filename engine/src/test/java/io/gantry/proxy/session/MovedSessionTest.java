package io.gantry.proxy.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.proxy.backend.BackendSecret;
import io.gantry.proxy.login.ClientIdentity;
import io.gantry.proxy.prepared.PreparedStatements;
import io.gantry.proxy.state.NextTransaction;
import io.gantry.proxy.state.SessionStateLog;
import io.gantry.proxy.state.SessionTracking;
import io.gantry.route.ReadBalance;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.ReplicaPreference;
import io.gantry.route.RoutingConfig;
import io.gantry.route.SessionConsistency;
import io.gantry.wire.ComQuery;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A session's state as it crosses the hand-over socket: one line of JSON, read back to the same values. */
class MovedSessionTest {

    private static MovedSession session() {
        ClientIdentity.Kept client = new ClientIdentity.Kept(0x3aa285, 0x8, 224, "app", "shop",
                new BackendSecret.Kept(false, new byte[] {1, 2, 3, (byte) 0xff}), "G4%r'x;Vq!8\\zP0~k\"Lm]a", true);
        List<SessionStateLog.Recorded> settings = List.of(
                new SessionStateLog.Recorded(ComQuery.payload("SET NAMES utf8mb4"), null, null),
                new SessionStateLog.Recorded(ComQuery.payload("SET @`v` = _binary 0x00ff\n"), "user variable v",
                        null),
                new SessionStateLog.Recorded(ComQuery.payload("SET time_zone = '+00:00'"), null, "time_zone"));
        PreparedStatements.Kept prepared = new PreparedStatements.Kept(List.of(new PreparedStatements.KeptStatement(
                3, "SELECT ?\n+ 1", "SELECT ?\n+ 1", false, 1, 1, "READ", null, List.of("USES_USER_VARIABLES"),
                "NONE", 1, new byte[] {8, 0})), 4, 3);
        SessionConsistency.Kept consistency = new SessionConsistency.Kept("0-1-12", "0-1-15",
                List.of(new SessionConsistency.KeptCompletion("db2:3306", false, 1_700_000_000_123L)));
        return new MovedSession(4711, "10.0.0.8", client, settings, prepared, consistency,
                new SessionTracking.Kept(false, true, true, false),
                MovedSession.Routing.of(new RoutingConfig(false, 20, ReadBalance.STATEMENT, true,
                        new ReplicaPreference(true, 2_000))),
                MovedSession.Guarantees.of(new ReadGuarantees(true, Duration.ofMillis(750), Duration.ofSeconds(60),
                        Duration.ofMillis(250), false, Duration.ofSeconds(2))),
                new NextTransaction("SET TRANSACTION READ ONLY", true), "SETS_USER_VARIABLES", 42, 0x0002, 28_800,
                "\u0003\u0000\u0000\u0000\u0003SEL".getBytes(StandardCharsets.ISO_8859_1));
    }

    @Test
    void aSessionIsOneLineOfJsonThatReadsBackToTheSameValues() {
        MovedSession session = session();
        String json = session.toJson();
        assertThat(json).doesNotContain("\n");
        MovedSession read = MovedSession.fromJson(json);
        assertThat(read.toJson()).isEqualTo(json);
        assertThat(read.id()).isEqualTo(4711);
        assertThat(read.client().secret().bytes()).containsExactly(1, 2, 3, 0xff);
        assertThat(read.client().scramble()).isEqualTo(session.client().scramble());
        assertThat(read.client().greetedAsMariaDb()).isTrue();
        assertThat(read.settings().get(1).payload()).isEqualTo(session.settings().get(1).payload());
        assertThat(read.settings().get(1).key()).isEqualTo("user variable v");
        assertThat(read.prepared().statements().get(0).sql()).isEqualTo("SELECT ?\n+ 1");
        assertThat(read.routing().config()).isEqualTo(session.routing().config());
        assertThat(read.guarantees().value()).isEqualTo(session.guarantees().value());
        assertThat(read.nextTransaction()).isEqualTo(new NextTransaction("SET TRANSACTION READ ONLY", true));
        assertThat(read.unread()).isEqualTo(session.unread());
    }

    @Test
    void whatIsNotASessionsStateIsSaidSo() {
        assertThatThrownBy(() -> MovedSession.fromJson("{\"id\":1,\"colour\":\"blue\"}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a session's state")
                .hasMessageContaining("colour");
        assertThatThrownBy(() -> MovedSession.fromJson("SESSION 1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a session's state");
    }
}
