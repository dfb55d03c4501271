package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BinlogNameCharsetTest {

    @Test
    void theChangeStreamRefusesADefaultCharsetThatWouldGarbleNames() {
        assertThatThrownBy(() -> BinlogNameCharset.requireUtf8(StandardCharsets.US_ASCII))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("the change stream needs Java's default charset to be UTF-8, and it is US-ASCII")
                .hasMessageContaining("-Dfile.encoding=UTF-8");
        assertThatCode(() -> BinlogNameCharset.requireUtf8(StandardCharsets.UTF_8)).doesNotThrowAnyException();
    }
}
