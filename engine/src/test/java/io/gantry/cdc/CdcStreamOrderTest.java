package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.gantry.topology.UpstreamUrl;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class CdcStreamOrderTest {

    private static final UpstreamUrl A = server("a", 50);
    private static final UpstreamUrl B = server("b", 90);
    private static final UpstreamUrl C = server("c", 50);
    private static final UpstreamUrl D = server("d", 10);

    // ---- byWeight ----

    @Test
    void byWeightPutsTheHeaviestFirstAndKeepsListOrderForTies() {
        assertThat(FailoverPolicy.byWeight(List.of(A, B, C, D))).containsExactly(B, A, C, D);
        assertThat(FailoverPolicy.byWeight(List.of(C, D, A, B))).containsExactly(B, C, A, D);
    }

    @Test
    void byWeightLeavesItsInputAlone() {
        List<UpstreamUrl> servers = List.of(D, A, B);
        assertThat(FailoverPolicy.byWeight(servers)).containsExactly(B, A, D);
        assertThat(servers).containsExactly(D, A, B);
    }

    // ---- after ----

    @Test
    void afterGivesTheNextByWeightAndWrapsAround() {
        List<UpstreamUrl> order = FailoverPolicy.byWeight(List.of(A, B, C, D)); // B, A, C, D
        assertThat(FailoverPolicy.after(order, B)).isEqualTo(A);
        assertThat(FailoverPolicy.after(order, A)).isEqualTo(C);
        assertThat(FailoverPolicy.after(order, C)).isEqualTo(D);
        assertThat(FailoverPolicy.after(order, D)).isEqualTo(B);
    }

    @Test
    void afterMatchesByAddressEvenWhenTheWeightChanged() {
        List<UpstreamUrl> order = List.of(B, A, C);
        assertThat(FailoverPolicy.after(order, A.withWeight(1))).isEqualTo(C);
    }

    @Test
    void afterAnUnknownServerIsTheFirst() {
        List<UpstreamUrl> order = List.of(B, A, C);
        assertThat(FailoverPolicy.after(order, D)).isEqualTo(B);
        assertThat(FailoverPolicy.after(List.of(A), A)).isEqualTo(A);
    }

    // ---- describe ----

    @Test
    void describeGivesTheFirstLineOfTheMessage() {
        assertThat(FailureText.describe(new IOException("  read failed\n  at line 2\nline 3")))
                .isEqualTo("read failed");
    }

    @Test
    void describeAppendsARootCauseThatSaysSomethingNew() {
        Exception failure = new IllegalStateException("cannot reach db1:3306\nmore detail",
                new UncheckedIOException("wrapped", new ConnectException("Connection refused\n(details)")));
        assertThat(FailureText.describe(failure)).isEqualTo("cannot reach db1:3306: Connection refused");
    }

    @Test
    void describeDoesNotRepeatARootCauseTheMessageAlreadyHolds() {
        assertThat(FailureText.describe(new IOException("connect failed: Connection refused",
                new ConnectException("Connection refused")))).isEqualTo("connect failed: Connection refused");
        // new RuntimeException(cause) takes the cause's toString as its message
        assertThat(FailureText.describe(new RuntimeException(new ConnectException("Connection refused"))))
                .isEqualTo("java.net.ConnectException: Connection refused");
    }

    @Test
    void describeFallsBackToToStringWithoutAMessage() {
        assertThat(FailureText.describe(new IllegalStateException())).isEqualTo("java.lang.IllegalStateException");
        assertThat(FailureText.describe(new IOException("  "))).isEqualTo("java.io.IOException:   ");
        assertThat(FailureText.describe(new IOException("stream ended", new EOFException())))
                .isEqualTo("stream ended: java.io.EOFException");
    }

    @Test
    void describeEndsOnACyclicCauseChain() {
        IOException a = new IOException("outer");
        IOException b = new IOException("inner", a);
        a.initCause(b);
        String text = assertTimeoutPreemptively(Duration.ofSeconds(2), () -> FailureText.describe(a));
        assertThat(text).startsWith("outer");
    }

    private static UpstreamUrl server(String host, int weight) {
        return new UpstreamUrl(host, 3306, "app", "gantry", "secret", weight);
    }
}
