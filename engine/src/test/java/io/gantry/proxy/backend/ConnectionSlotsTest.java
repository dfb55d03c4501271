package io.gantry.proxy.backend;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The per-server cap: slots up to it at once, then a queue, first come first served, and a bounded wait. */
class ConnectionSlotsTest {

    private final EventLoop loop = new DefaultEventLoop();
    private final UpstreamServer server = new UpstreamServer(UpstreamUrl.parse("mysql://app:app@db1:3306/app"));

    @AfterEach
    void stop() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    private static ConnectionSlots slots(int cap, Duration wait) {
        return new ConnectionSlots(new BackendPool.Settings(true, Duration.ofSeconds(60), 64, cap, wait));
    }

    @Test
    void slotsUpToTheCapAreGivenAtOnceAndAFreedOneGoesToTheFirstWaiter() throws Exception {
        ConnectionSlots slots = slots(2, Duration.ofSeconds(5));
        List<String> askedToFree = new CopyOnWriteArrayList<>();
        slots.onWaiting(askedToFree::add);
        assertThat(slots.acquire(server, loop).isSuccess()).isTrue();
        assertThat(slots.acquire(server, loop).isSuccess()).isTrue();
        Future<Void> first = slots.acquire(server, loop);
        Future<Void> second = slots.acquire(server, loop);
        assertThat(first.isDone()).isFalse();
        assertThat(slots.hasWaiters("db1:3306")).isTrue();
        assertThat(askedToFree).containsExactly("db1:3306", "db1:3306");
        assertThat(slots.use("db1:3306")).extracting(ConnectionSlots.Use::open, ConnectionSlots.Use::waiting,
                ConnectionSlots.Use::waited).containsExactly(2, 2, 2L);

        slots.release("db1:3306");
        assertThat(first.await(1, TimeUnit.SECONDS) && first.isSuccess()).isTrue();
        assertThat(second.isDone()).isFalse();
        assertThat(slots.use("db1:3306")).as("the slot passed on: still 2 open")
                .extracting(ConnectionSlots.Use::open, ConnectionSlots.Use::waiting).containsExactly(2, 1);
        slots.release("db1:3306");
        slots.release("db1:3306");
        slots.release("db1:3306");
        assertThat(second.await(1, TimeUnit.SECONDS) && second.isSuccess()).isTrue();
        assertThat(slots.use("db1:3306")).extracting(ConnectionSlots.Use::open, ConnectionSlots.Use::waiting)
                .containsExactly(0, 0);
        // Recorded by the grant's listener, on the loop.
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(2))
                .until(() -> slots.use("db1:3306").waitP99Millis() > 0);
    }

    @Test
    void aWaitThatRunsOutFailsWithError1040NamingTheServerAndTheCap() throws Exception {
        ConnectionSlots slots = slots(1, Duration.ofMillis(100));
        slots.acquire(server, loop);
        long started = System.nanoTime();
        Future<Void> late = slots.acquire(server, loop);
        assertThat(late.await(2, TimeUnit.SECONDS)).isTrue();
        assertThat((System.nanoTime() - started) / 1_000_000).isGreaterThanOrEqualTo(90);
        assertThat(late.cause()).isInstanceOfSatisfying(BackendFailure.class, failure -> {
            assertThat(failure.serverUnreachable()).as("not taken for a server down").isFalse();
            assertThat(failure.serverError().errorCode()).isEqualTo(1040);
            assertThat(failure.serverError().message()).contains("db1:3306").contains("1 connections")
                    .contains("--max-backend-connections-per-server").contains("100 ms");
        });
        assertThat(slots.hasWaiters("db1:3306")).isFalse();
        slots.release("db1:3306");
        assertThat(slots.use("db1:3306").open()).isZero();
        assertThat(slots.use("db1:3306").waited()).isEqualTo(1);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(2)).untilAsserted(() ->
                assertThat(slots.use("db1:3306").waitP99Millis()).as("the 100 ms wait that ran out")
                        .isGreaterThanOrEqualTo(90));
    }

    @Test
    void withoutAWaitTheSessionIsRefusedAtOnce() {
        ConnectionSlots slots = slots(1, Duration.ZERO);
        slots.acquire(server, loop);
        Future<Void> refused = slots.acquire(server, loop);
        assertThat(refused.isDone()).isTrue();
        assertThat(refused.cause()).hasMessageContaining("none is free");
    }

    @Test
    void automaticallyFourFifthsOfTheServersMaxConnectionsOnceKnown() {
        ConnectionSlots slots = slots(0, Duration.ofSeconds(5));
        assertThat(slots.capOf(server)).as("not read yet: no cap").isZero();
        List<Future<Void>> many = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            many.add(slots.acquire(server, loop));
        }
        assertThat(many).allMatch(Future::isSuccess);
        assertThat(slots(25, Duration.ofSeconds(5)).capOf(server)).isEqualTo(25);
    }
}
