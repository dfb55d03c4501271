package io.gantry.console;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock a test sets by hand ({@link #now}), in UTC. */
public final class MovableClock extends Clock {

    public Instant now;

    public MovableClock(Instant start) {
        this.now = start;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return now;
    }
}
