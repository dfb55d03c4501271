package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
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
        return new LoginGate(new ProxyConfig.LoginLimits(Duration.ofSeconds(10), maxPending, perHost, maxErrors,
                Duration.ofSeconds(60)), clock);
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
    void aHostIsBlockedAfterFailuresInARowForTheCoolDown() {
        LoginGate gate = gate(10, 10, 3);
        assertThat(gate.failed("a")).isEmpty();
        assertThat(gate.failed("a")).isEmpty();
        Optional<LoginGate.Refusal.Blocked> blocked = gate.failed("a");
        assertThat(blocked).get().extracting(LoginGate.Refusal.Blocked::failures).isEqualTo(3);
        assertThat(gate.admit("a")).get().isInstanceOf(LoginGate.Refusal.Blocked.class);
        assertThat(gate.admit("b")).as("other hosts are not affected").isEmpty();
        clock.now = clock.now.plusSeconds(61);
        assertThat(gate.admit("a")).isEmpty();
    }

    @Test
    void aSuccessStartsTheCountAgainAndZeroTurnsBlockingOff() {
        LoginGate gate = gate(10, 10, 2);
        assertThat(gate.failed("a")).isEmpty();
        gate.succeeded("a");
        assertThat(gate.failed("a")).isEmpty();
        assertThat(gate.failed("a")).isPresent();

        LoginGate open = gate(10, 10, 0);
        for (int i = 0; i < 100; i++) {
            assertThat(open.failed("a")).isEmpty();
        }
        assertThat(open.admit("a")).isEmpty();
    }

    @Test
    void peerChosenNamesCannotForgeLogLines() {
        assertThat(SessionContext.printable("app")).isEqualTo("app");
        assertThat(SessionContext.printable("app\n12:00:00 [main] INFO forged\u0014"))
                .isEqualTo("app\\x0a12:00:00 [main] INFO forged\\x14");
    }
}
