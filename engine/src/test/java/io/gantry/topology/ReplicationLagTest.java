package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ReplicationLagTest {

    private static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");

    private static GtidSet mariadb(String position) {
        return GtidSet.parse(position, Flavour.MARIADB);
    }

    @Test
    void caughtUpReplicaHasNoLag() {
        ReplicationLag lag = new ReplicationLag(Duration.ofMinutes(15));
        lag.sample(T0, mariadb("0-1-10"));
        assertThat(lag.lagOf(mariadb("0-1-10"), T0.plusMillis(300)).millis()).isZero();
    }

    @Test
    void lagIsTheAgeOfTheLatestPrimarySampleTheReplicaContains() {
        ReplicationLag lag = new ReplicationLag(Duration.ofMinutes(15));
        lag.sample(T0, mariadb("0-1-10"));
        lag.sample(T0.plusSeconds(1), mariadb("0-1-12"));
        lag.sample(T0.plusSeconds(2), mariadb("0-1-15"));
        assertThat(lag.lagOf(mariadb("0-1-12"), T0.plusSeconds(2)).millis()).isEqualTo(1000);
        assertThat(lag.lagOf(mariadb("0-1-11"), T0.plusSeconds(2)).millis()).isEqualTo(2000);
    }

    @Test
    void replicaOlderThanEverySampleIsAtLeastAsFarBehindAsTheOldest() {
        ReplicationLag lag = new ReplicationLag(Duration.ofSeconds(10));
        lag.sample(T0, mariadb("0-1-10"));
        lag.sample(T0.plusSeconds(20), mariadb("0-1-20"));
        ReplicationLag.Lag result = lag.lagOf(mariadb("0-1-5"), T0.plusSeconds(20));
        assertThat(result.lowerBound()).isTrue();
        // The sample from T0 was dropped; behind the only one kept, it is still never reported as caught up.
        assertThat(result.millis()).isEqualTo(1);
    }

    @Test
    void mySqlSetsWork() {
        ReplicationLag lag = new ReplicationLag(Duration.ofMinutes(15));
        String uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
        lag.sample(T0, GtidSet.parse(uuid + ":1-5", Flavour.MYSQL));
        lag.sample(T0.plusSeconds(3), GtidSet.parse(uuid + ":1-9", Flavour.MYSQL));
        assertThat(lag.lagOf(GtidSet.parse(uuid + ":1-7", Flavour.MYSQL), T0.plusSeconds(3)).millis())
                .isEqualTo(3000);
    }

    @Test
    void unknownWithoutSamplesOrAcrossFlavours() {
        ReplicationLag lag = new ReplicationLag(Duration.ofMinutes(15));
        assertThat(lag.lagOf(mariadb("0-1-1"), T0)).isEqualTo(ReplicationLag.Lag.UNKNOWN);
        lag.sample(T0, mariadb("0-1-1"));
        assertThat(lag.lagOf(GtidSet.parse("", Flavour.MYSQL), T0)).isEqualTo(ReplicationLag.Lag.UNKNOWN);
    }
}
