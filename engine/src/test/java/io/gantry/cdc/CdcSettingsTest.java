package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CdcSettingsTest {

    private static final TableFilter TABLES = TableFilter.allOf("app");

    @Test
    void jsonlSinkGivesItsPath() {
        assertThat(CdcSettings.parseSink("jsonl:/x/y.jsonl")).contains(Path.of("/x/y.jsonl"));
        assertThat(CdcSettings.parseSink("  jsonl:relative/changes.jsonl ")).contains(Path.of("relative/changes.jsonl"));
    }

    @Test
    void noneOrBlankMeansNoSink() {
        assertThat(CdcSettings.parseSink("none")).isEmpty();
        assertThat(CdcSettings.parseSink(" NONE ")).isEmpty();
        assertThat(CdcSettings.parseSink("")).isEmpty();
        assertThat(CdcSettings.parseSink("   ")).isEmpty();
        assertThat(CdcSettings.parseSink(null)).isEmpty();
    }

    @Test
    void jsonlWithoutAPathIsRejectedQuotingTheValue() {
        assertThatThrownBy(() -> CdcSettings.parseSink("jsonl:"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--cdc-sink 'jsonl:' is not understood")
                .hasMessageContaining("jsonl:PATH");
    }

    @Test
    void otherSinkKindIsRejectedQuotingTheValue() {
        assertThatThrownBy(() -> CdcSettings.parseSink("kafka:x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--cdc-sink 'kafka:x' is not understood")
                .hasMessageContaining("jsonl:PATH")
                .hasMessageContaining("none");
    }

    @Test
    void validSettingsKeepTheirValues() {
        CdcSettings settings = new CdcSettings(Duration.ofSeconds(3), 0, Optional.of(Path.of("/c.jsonl")), 1, TABLES,
                true);
        assertThat(settings.connectTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThat(settings.connectRetries()).isZero();
        assertThat(settings.sink()).contains(Path.of("/c.jsonl"));
        assertThat(settings.sinkRotateBytes()).isEqualTo(1);
        assertThat(settings.tables()).isSameAs(TABLES);
        assertThat(settings.snapshot()).isTrue();
    }

    @Test
    void connectTimeoutMustBePositive() {
        assertThatThrownBy(() -> settings(Duration.ZERO, 2, 1024))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--upstream-connect-timeout must be positive, not 0 ms");
        assertThatThrownBy(() -> settings(Duration.ofMillis(-1), 2, 1024))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--upstream-connect-timeout must be positive, not -1 ms");
        assertThat(settings(Duration.ofMillis(1), 2, 1024).connectTimeout()).isEqualTo(Duration.ofMillis(1));
    }

    @Test
    void connectRetriesMustNotBeNegative() {
        assertThatThrownBy(() -> settings(Duration.ofSeconds(1), -1, 1024))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--upstream-connect-retries must be 0 or more, not -1");
    }

    @Test
    void rotateSizeMustBePositive() {
        assertThatThrownBy(() -> settings(Duration.ofSeconds(1), 2, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--cdc-sink-rotate-mb must be at least 1");
        assertThatThrownBy(() -> settings(Duration.ofSeconds(1), 2, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--cdc-sink-rotate-mb must be at least 1");
    }

    private static CdcSettings settings(Duration timeout, int retries, long rotateBytes) {
        return new CdcSettings(timeout, retries, Optional.empty(), rotateBytes, TABLES, false);
    }
}
