package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.events.EventPublisher;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;
import io.gantry.topology.AccountLookup.AccountEntry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class KnownAccountsTest {

    private static final Instant NOW = Instant.parse("2026-05-01T10:00:00Z");
    private static final Duration WINDOW = Duration.ofMillis(500);
    private static final List<AccountEntry> APP = List.of(new AccountEntry("%", "mysql_native_password",
            "*7B9EBEED26AA52ED10C0F549FA863F13C39E0209", false, false));

    private Upstreams upstreams;
    private UpstreamServer primary;
    private KnownAccounts accounts;

    @BeforeEach
    void primaryAtTen() {
        upstreams = new Upstreams(List.of(UpstreamUrl.parse("mysql://svc:pw@10.0.0.1:3306/app")), Clock.systemUTC(),
                EventPublisher.NONE);
        primary = upstreams.servers().get(0);
        upstreams.markChecked(primary, Role.PRIMARY, 100, 1000);
        upstreams.setPrimary(primary, "");
        sampled("0-1-10", NOW.minusMillis(100));
        accounts = new KnownAccounts(upstreams, WINDOW, Clock.fixed(NOW, ZoneOffset.UTC));
    }

    private void sampled(String executed, Instant at) {
        primary.positionSampled(new SampledPosition(gtids(executed), at, at), 0);
    }

    private static GtidSet gtids(String text) {
        return GtidSet.parse(text, Flavour.MARIADB);
    }

    @Test
    void entriesAreUsedOnlyWhileTheStreamHasAppliedTheNewestPrimarySample() {
        accounts.remember("app", APP, accounts.generation());
        assertThat(accounts.current("app")).as("the stream has not started").isEmpty();

        accounts.streamStarted(gtids("0-1-9"));
        assertThat(accounts.current("app")).as("behind the primary's sample").isEmpty();

        accounts.streamApplied(gtids("0-1-10"));
        assertThat(accounts.current("app")).contains(APP);
        assertThat(accounts.current("other")).as("never looked up").isEmpty();
    }

    @Test
    void anOldSampleVouchesForNothing() {
        accounts.remember("app", APP, accounts.generation());
        accounts.streamStarted(gtids("0-1-10"));
        sampled("0-1-10", NOW.minus(WINDOW).minusMillis(1));
        assertThat(accounts.current("app")).as("the sampler stalled: changes since may be unseen").isEmpty();
        sampled("0-1-10", NOW.minus(WINDOW));
        assertThat(accounts.current("app")).contains(APP);

        upstreams.setPrimary(null, "lost");
        assertThat(accounts.current("app")).as("no primary to measure the stream by").isEmpty();
    }

    @Test
    void anAccountChangeOrAStreamThatStopsForgetsEveryAccount() {
        accounts.streamStarted(gtids("0-1-10"));
        accounts.remember("app", APP, accounts.generation());
        accounts.remember("report", APP, accounts.generation());
        accounts.forgetAll("ALTER USER");
        assertThat(accounts.current("app")).isEmpty();
        assertThat(accounts.current("report")).isEmpty();

        accounts.remember("app", APP, accounts.generation());
        accounts.streamStopped("is retrying");
        accounts.streamStarted(gtids("0-1-10"));
        assertThat(accounts.current("app")).as("the stream may have skipped changes while away").isEmpty();
    }

    @Test
    void aLookUpThatAForgettingOvertookIsNotKept() {
        accounts.streamStarted(gtids("0-1-10"));
        long before = accounts.generation();
        accounts.forgetAll("DROP USER while the look-up ran");
        accounts.remember("app", APP, before);
        assertThat(accounts.current("app")).isEmpty();
        assertThat(accounts.size()).isZero();
    }

    @Test
    void anAccountWithoutEntriesIsNotKept() {
        accounts.remember("nobody", List.of(), accounts.generation());
        assertThat(accounts.size()).isZero();
    }

    @Test
    void streamCurrencyNeedsTheSameFlavourAndAContainedRecentSample() {
        SampledPosition sample = new SampledPosition(gtids("0-1-10"), NOW, NOW);
        assertThat(KnownAccounts.streamCurrent(gtids("0-1-10,1-2-3"), sample, NOW, WINDOW)).isTrue();
        assertThat(KnownAccounts.streamCurrent(gtids("0-1-9"), sample, NOW, WINDOW)).isFalse();
        assertThat(KnownAccounts.streamCurrent(null, sample, NOW, WINDOW)).isFalse();
        assertThat(KnownAccounts.streamCurrent(gtids("0-1-10"), null, NOW, WINDOW)).isFalse();
        assertThat(KnownAccounts.streamCurrent(GtidSet.parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-10",
                Flavour.MYSQL), sample, NOW, WINDOW)).isFalse();
    }

    /** The demo's primary: no transaction in its binlog, and a stream that started from its beginning. */
    @Test
    void aPrimaryThatCommittedNothingHasNothingToMiss() {
        SampledPosition nothing = new SampledPosition(GtidSet.empty(Flavour.MARIADB), NOW, NOW);
        assertThat(KnownAccounts.streamCurrent(null, nothing, NOW, WINDOW)).isTrue();
        assertThat(KnownAccounts.streamCurrent(GtidSet.empty(Flavour.MARIADB), nothing, NOW, WINDOW)).isTrue();
        SampledPosition old = new SampledPosition(GtidSet.empty(Flavour.MARIADB), NOW.minus(WINDOW.multipliedBy(2)),
                NOW.minus(WINDOW.multipliedBy(2)));
        assertThat(KnownAccounts.streamCurrent(null, old, NOW, WINDOW)).as("a stale sample says nothing").isFalse();
    }

    @Test
    void windowMustBePositive() {
        assertThatThrownBy(() -> new KnownAccounts(upstreams, Duration.ZERO, Clock.systemUTC()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive");
    }
}
