package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Read-your-writes across the sessions of an account or a token: what one writes, another's reads must find. */
class CausalScopesTest {

    private static final ServerId PRIMARY = new ServerId("p:1");
    private static final ServerId R1 = new ServerId("r1:1");
    private static final ReadGuarantees DEFAULTS = ReadGuarantees.DEFAULTS;

    private final CausalScopes scopes = new CausalScopes(3);
    private final Map<ServerId, SampledPosition> positions = new HashMap<>();

    @Test
    void aCommitOfOneSessionOfTheAccountKeepsAnotherSessionsReadsOffReplicasWithoutIt() {
        SessionConsistency writer = inScope(CausalScopes.ofAccount("app"));
        SessionConsistency reader = inScope(CausalScopes.ofAccount("app"));
        SessionConsistency otherAccount = inScope(CausalScopes.ofAccount("report"));
        SessionConsistency alone = new SessionConsistency();

        writer.committed(gtids("0-1-15"));
        assertThat(reader.judge(R1, at("0-1-14", 2_000), DEFAULTS, 2_001)).isEqualTo(ReplicaRefusal.OWN_WRITES);
        assertThat(reader.judge(R1, at("0-1-15", 2_000), DEFAULTS, 2_001)).isNull();
        assertThat(reader.floor(true)).hasToString("0-1-15");
        assertThat(reader.scopeFloor()).hasToString("0-1-15");
        // Not a write of the reader itself: its own last write position stays empty.
        assertThat(reader.writePosition()).isNull();
        assertThat(otherAccount.judge(R1, at("0-1-14", 2_000), DEFAULTS, 2_001)).isNull();
        assertThat(alone.judge(R1, at("0-1-14", 2_000), DEFAULTS, 2_001)).isNull();
        // Read-your-writes off: the scope does not hold the reader back either.
        assertThat(reader.judge(R1, at("0-1-14", 2_000), DEFAULTS.withReadYourWrites(false), 2_001)).isNull();
    }

    @Test
    void aWriteWhoseGtidIsUnknownHoldsTheScopeUntilThePrimaryIsSampledAfterIt() {
        SessionConsistency writer = inScope(CausalScopes.ofToken("user-42"));
        SessionConsistency reader = inScope(CausalScopes.ofToken("user-42"));

        writer.completed(PRIMARY, 5_000, true);
        assertThat(reader.hasPendingWrite()).isTrue();
        assertThat(reader.waitingCanQualify(R1, true)).isFalse();
        assertThat(reader.judge(R1, at("0-1-99", 5_000), DEFAULTS, 5_001)).isEqualTo(ReplicaRefusal.OWN_WRITES);
        assertThat(reader.pendingDescriptions()).singleElement().asString().startsWith("write of token:user-42");

        // A sample of the primary in the same millisecond may predate the write: it settles nothing.
        positions.put(PRIMARY, at("0-1-20", 5_000));
        reader.settle(PRIMARY, positions::get);
        assertThat(reader.hasPendingWrite()).isTrue();
        positions.put(PRIMARY, at("0-1-21", 5_001));
        reader.settle(PRIMARY, positions::get);
        assertThat(reader.hasPendingWrite()).isFalse();
        assertThat(reader.judge(R1, at("0-1-20", 5_002), DEFAULTS, 5_003)).isEqualTo(ReplicaRefusal.OWN_WRITES);
        assertThat(reader.judge(R1, at("0-1-21", 5_002), DEFAULTS, 5_003)).isNull();
    }

    @Test
    void aScopeForgottenLeavesItsWritesToEveryScopedRead() {
        for (int i = 1; i <= 5; i++) {
            inScope(CausalScopes.ofToken("t" + i)).committed(gtids("0-1-" + (40 + i)));
        }
        assertThat(scopes.forgottenCount()).isEqualTo(2);
        assertThat(scopes.size()).isEqualTo(3);
        // Whichever two were forgotten, each token's reads still find its own write...
        for (int i = 1; i <= 5; i++) {
            SessionConsistency reader = inScope(CausalScopes.ofToken("t" + i));
            assertThat(reader.judge(R1, at("0-1-" + (39 + i), 1_000), DEFAULTS, 1_001)).as("t%d", i)
                    .isEqualTo(ReplicaRefusal.OWN_WRITES);
            assertThat(reader.judge(R1, at("0-1-45", 1_000), DEFAULTS, 1_001)).as("t%d", i).isNull();
        }
        // ... and a read of any scope finds the writes of those forgotten (at least 0-1-42): waiting, never stale.
        assertThat(inScope(CausalScopes.ofToken("new")).judge(R1, at("0-1-41", 1_000), DEFAULTS, 1_001))
                .isEqualTo(ReplicaRefusal.OWN_WRITES);
        // A session alone is not held by other sessions' scopes.
        assertThat(new SessionConsistency().judge(R1, at("0-1-39", 1_000), DEFAULTS, 1_001)).isNull();
    }

    @Test
    void aWriteToAScopeAlreadyForgottenStillReachesTheReadsThatMustFindIt() {
        CausalScope looked = scopes.forWrite(CausalScopes.ofToken("old"));
        // Which scope the cache forgets is its choice (frequency as well as recency): add until it is this one.
        for (int i = 0; !looked.retired(); i++) {
            assertThat(i).as("scopes added before 'old' was forgotten").isLessThan(10_000);
            scopes.forWrite(CausalScopes.ofToken("other" + i));
        }
        looked.committed(gtids("0-1-77"));
        assertThat(inScope(CausalScopes.ofToken("any")).judge(R1, at("0-1-76", 1_000), DEFAULTS, 1_001))
                .isEqualTo(ReplicaRefusal.OWN_WRITES);
    }

    @Test
    void theScopeIsReadAtEachUseSoASetOrAChangeOfUserTakesEffectAtOnce() {
        AtomicReference<String> key = new AtomicReference<>(null);
        SessionConsistency session = new SessionConsistency(scopes, key::get);
        inScope(CausalScopes.ofAccount("app")).committed(gtids("0-1-9"));
        assertThat(session.judge(R1, at("0-1-8", 1_000), DEFAULTS, 1_001)).isNull();
        key.set(CausalScopes.ofAccount("app"));
        assertThat(session.judge(R1, at("0-1-8", 1_000), DEFAULTS, 1_001)).isEqualTo(ReplicaRefusal.OWN_WRITES);
        assertThat(session.scope()).isEqualTo("account:app");
    }

    @Test
    void aSessionsScopeKeyFollowsItsScopeAccountAndTokenAndIsMadeOncePerChange() {
        CausalScopeKey key = new CausalScopeKey();
        assertThat(key.of(ReadYourWritesScope.SESSION, "app", "t")).isNull();
        assertThat(key.of(ReadYourWritesScope.TOKEN, "app", null)).as("a token scope before a token").isNull();
        String account = key.of(ReadYourWritesScope.ACCOUNT, "app", "t");
        assertThat(account).isEqualTo("account:app");
        assertThat(key.of(ReadYourWritesScope.ACCOUNT, "app", "t")).isSameAs(account);
        assertThat(key.of(ReadYourWritesScope.ACCOUNT, "report", "t")).isEqualTo("account:report");
        assertThat(key.of(ReadYourWritesScope.TOKEN, "report", "t")).isEqualTo("token:t");
    }

    @Test
    void scopesAreNamedByLowerCaseWordsAndNothingElse() {
        assertThat(ReadYourWritesScope.named(" Account ")).isEqualTo(ReadYourWritesScope.ACCOUNT);
        assertThat(ReadYourWritesScope.named("token")).isEqualTo(ReadYourWritesScope.TOKEN);
        assertThat(ReadYourWritesScope.named("global")).isNull();
        assertThat(ReadYourWritesScope.SESSION.sqlName()).isEqualTo("session");
    }

    private SessionConsistency inScope(String key) {
        return new SessionConsistency(scopes, () -> key);
    }

    private static GtidSet gtids(String text) {
        return GtidSet.parse(text, Flavour.MARIADB);
    }

    private static SampledPosition at(String gtids, long sampledAt) {
        return new SampledPosition(gtids(gtids), Instant.ofEpochMilli(sampledAt), Instant.ofEpochMilli(sampledAt));
    }
}
