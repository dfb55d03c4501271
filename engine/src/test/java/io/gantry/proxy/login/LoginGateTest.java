package io.gantry.proxy.login;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.login.LoginGate;
import io.gantry.proxy.login.LoginLimits;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LoginGateTest {

    private static final class MovableClock extends Clock {
        Instant now = Instant.parse("2026-12-01T10:00:00Z");

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    private final MovableClock clock = new MovableClock();

    private LoginGate gate(int maxPending, int perHost, int maxErrors) {
        return gate(maxPending, perHost, maxErrors, 3);
    }

    private LoginGate gate(int maxPending, int perHost, int maxErrors, int delayAfter) {
        return new LoginGate(new LoginLimits(Duration.ofSeconds(10), maxPending, perHost, maxErrors,
                Duration.ofSeconds(60), delayAfter, Duration.ofSeconds(5)), clock);
    }

    @Test
    void pendingLoginsAreBoundedInTotalAndPerHost() {
        LoginGate gate = gate(3, 2, 0);
        assertThat(gate.admit("a")).isEmpty();
        assertThat(gate.admit("a")).isEmpty();
        assertThat(gate.admit("a")).get().isInstanceOfSatisfying(LoginGate.Refusal.TooManyPending.class,
                refusal -> assertThat(refusal.perHost()).isTrue());
        assertThat(gate.admit("b")).isEmpty();
        assertThat(gate.admit("c")).get().isInstanceOfSatisfying(LoginGate.Refusal.TooManyPending.class,
                refusal -> assertThat(refusal.perHost()).isFalse());
        gate.leave("a");
        assertThat(gate.admit("c")).isEmpty();
        assertThat(gate.pending()).isEqualTo(3);
    }

    @Test
    void connectionsBeyondTheLimitsWaitForTheirTurnInArrivalOrderTheirHostFirst() {
        LoginGate gate = gate(3, 2, 0);
        List<String> turns = new ArrayList<>();
        assertThat(gate.admitOrQueue("a", () -> turns.add("a1")).admitted()).isTrue();
        assertThat(gate.admitOrQueue("a", () -> turns.add("a2")).admitted()).isTrue();
        LoginGate.Admission third = gate.admitOrQueue("a", () -> turns.add("a3"));
        assertThat(third.queued()).isTrue();
        assertThat(third.refusal()).isInstanceOfSatisfying(LoginGate.Refusal.TooManyPending.class,
                refusal -> assertThat(refusal.perHost()).isTrue());
        Runnable a4 = () -> turns.add("a4");
        assertThat(gate.admitOrQueue("a", a4).queued()).isTrue();
        assertThat(gate.admitOrQueue("b", () -> turns.add("b1")).admitted()).isTrue();
        assertThat(gate.admitOrQueue("c", () -> turns.add("c1")).queued()).isTrue();
        assertThat(gate.queued()).isEqualTo(3);
        assertThat(turns).isEmpty();

        // a's login ends: a's first waiter takes its place (a has room again, and the total is full again).
        gate.leave("a");
        assertThat(turns).containsExactly("a3");
        // b's ends: a is at its own limit, so c's waiter comes next.
        gate.leave("b");
        assertThat(turns).containsExactly("a3", "c1");
        // A waiter that went away is not admitted later.
        assertThat(gate.withdraw("a", a4)).isTrue();
        assertThat(gate.withdraw("a", a4)).isFalse();
        gate.leave("a");
        assertThat(turns).containsExactly("a3", "c1");
        assertThat(gate.queued()).isZero();
        assertThat(gate.pending()).isEqualTo(2);
    }

    @Test
    void theQueueIsBoundedAndABlockedHostNeverWaits() {
        LoginGate gate = gate(1, 1, 1);
        assertThat(gate.admitOrQueue("a", () -> { }).admitted()).isTrue();
        for (int i = 0; i < LoginGate.MAX_QUEUED_PER_PENDING; i++) {
            assertThat(gate.admitOrQueue("b", () -> { }).queued()).isTrue();
        }
        LoginGate.Admission beyond = gate.admitOrQueue("b", () -> { });
        assertThat(beyond.admitted()).isFalse();
        assertThat(beyond.queued()).isFalse();
        gate.handshakeFailed("c", "malformed");
        LoginGate.Admission blocked = gate.admitOrQueue("c", () -> { });
        assertThat(blocked.queued()).isFalse();
        assertThat(blocked.refusal()).isInstanceOf(LoginGate.Refusal.Blocked.class);
    }

    @Test
    void leavingTwiceDoesNotFreeASlotThatIsNotThere() {
        LoginGate gate = gate(1, 1, 0);
        assertThat(gate.admit("a")).isEmpty();
        gate.leave("a");
        gate.leave("a");
        assertThat(gate.pending()).isZero();
        assertThat(gate.admit("a")).isEmpty();
        assertThat(gate.admit("b")).isPresent();
    }

    @Test
    void aHostIsBlockedAfterFailedHandshakesInARowForTheCoolDown() {
        LoginGate gate = gate(10, 10, 3);
        assertThat(gate.handshakeFailed("a", "sent a malformed packet")).isEmpty();
        assertThat(gate.handshakeFailed("a", "sent a malformed packet")).isEmpty();
        Optional<LoginGate.Refusal.Blocked> blocked = gate.handshakeFailed("a", "left unfinished");
        assertThat(blocked).get().extracting(LoginGate.Refusal.Blocked::failures).isEqualTo(3);
        assertThat(gate.admit("a")).get().isInstanceOf(LoginGate.Refusal.Blocked.class);
        assertThat(gate.admit("b")).as("other hosts are not affected").isEmpty();
        assertThat(gate.blockedHosts()).singleElement().satisfies(host -> {
            assertThat(host.host()).isEqualTo("a");
            assertThat(host.failures()).isEqualTo(3);
            assertThat(host.reason()).isEqualTo("3 failed handshakes in a row, the last one left unfinished");
            assertThat(host.left()).isEqualTo(Duration.ofSeconds(60));
        });
        clock.now = clock.now.plusSeconds(61);
        assertThat(gate.admit("a")).isEmpty();
        assertThat(gate.blockedHosts()).isEmpty();
    }

    @Test
    void aSuccessStartsTheCountAgainAndZeroTurnsBlockingOff() {
        LoginGate gate = gate(10, 10, 2);
        assertThat(gate.handshakeFailed("a", "x")).isEmpty();
        gate.succeeded("a", "app");
        assertThat(gate.handshakeFailed("a", "x")).isEmpty();
        assertThat(gate.handshakeFailed("a", "x")).isPresent();

        LoginGate open = gate(10, 10, 0);
        for (int i = 0; i < 100; i++) {
            assertThat(open.handshakeFailed("a", "x")).isEmpty();
        }
        assertThat(open.admit("a")).isEmpty();
    }

    @Test
    void refusedPasswordsNeverBlockAHostButDelayThatAccountMoreAndMore() {
        LoginGate gate = gate(10, 10, 2, 3);
        List<Duration> delays = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            delays.add(gate.loginRefused("a", "stale"));
        }
        assertThat(delays).containsExactly(Duration.ZERO, Duration.ZERO, Duration.ofSeconds(1),
                Duration.ofSeconds(2), Duration.ofSeconds(4), Duration.ofSeconds(5), Duration.ofSeconds(5),
                Duration.ofSeconds(5));
        assertThat(gate.admit("a")).as("the host is not blocked").isEmpty();
        assertThat(gate.loginRefused("a", "admin")).as("another account of the host").isZero();
        assertThat(gate.loginRefused("b", "stale")).as("the account from another host").isZero();
        gate.succeeded("a", "stale");
        assertThat(gate.loginRefused("a", "stale")).as("the right password cleared the count").isZero();
    }

    @Test
    void refusalsAreForgottenAWhileAfterTheLastOneAndZeroTurnsTheDelayOff() {
        LoginGate gate = gate(10, 10, 2, 1);
        assertThat(gate.loginRefused("a", "stale")).isEqualTo(Duration.ofSeconds(1));
        clock.now = clock.now.plus(LoginGate.FORGET_REFUSALS_AFTER).plusSeconds(1);
        assertThat(gate.loginRefused("a", "stale")).isEqualTo(Duration.ofSeconds(1));

        LoginGate off = gate(10, 10, 2, 0);
        for (int i = 0; i < 50; i++) {
            assertThat(off.loginRefused("a", "stale")).isZero();
        }
    }

    @Test
    void flushingLiftsBlocksAndForgetsFailures() {
        LoginGate gate = gate(10, 10, 1, 1);
        gate.handshakeFailed("a", "x");
        gate.handshakeFailed("b", "x");
        gate.loginRefused("a", "stale");
        assertThat(gate.unblock("a")).isTrue();
        assertThat(gate.unblock("a")).as("no longer blocked").isFalse();
        assertThat(gate.unblock("c")).as("never seen").isFalse();
        assertThat(gate.admit("a")).isEmpty();
        assertThat(gate.loginRefused("a", "stale")).as("its refusals forgotten too").isEqualTo(Duration.ofSeconds(1));
        assertThat(gate.admit("b")).isPresent();
        assertThat(gate.unblockAll()).isEqualTo(1);
        assertThat(gate.admit("b")).isEmpty();
        assertThat(gate.blockedHosts()).isEmpty();
    }
}
