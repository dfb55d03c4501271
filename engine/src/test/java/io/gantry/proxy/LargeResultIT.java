package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.TopologyKind;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A result far larger than any buffer streams through while the proxy's memory stays flat. */
class LargeResultIT {

    private static final int ROWS = 100_000;
    private static final int ROW_BYTES = 1_000;

    @Test
    void hundredMegabyteResultStreamsWithFlatProxyMemory() throws Exception {
        try (ProxyHarness gantry = ProxyHarness.start(Sandboxes.shared(TopologyKind.MARIADB));
             Connection connection = gantry.connect(Driver.MYSQL_CONNECTOR_J);
             Statement statement = connection.createStatement(ResultSet.TYPE_FORWARD_ONLY,
                     ResultSet.CONCUR_READ_ONLY)) {
            statement.setFetchSize(Integer.MIN_VALUE); // connector-j: stream rows instead of buffering them
            AtomicLong peakDirect = new AtomicLong();
            Thread sampler = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    peakDirect.accumulateAndGet(directMemoryInUse(), Math::max);
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "direct-memory-sampler");
            long before = directMemoryInUse();
            sampler.start();
            long bytes = 0;
            long rows = 0;
            try (ResultSet result = statement.executeQuery(
                    "SELECT seq, REPEAT('x', " + ROW_BYTES + ") FROM seq_1_to_" + ROWS)) {
                while (result.next()) {
                    bytes += result.getString(2).length();
                    rows++;
                    if (rows % 10_000 == 0) {
                        // A slow reader for a moment: the proxy must stop reading from the server, not buffer.
                        Thread.sleep(100);
                    }
                }
            } finally {
                sampler.interrupt();
                sampler.join();
            }
            assertThat(rows).isEqualTo(ROWS);
            assertThat(bytes).isEqualTo((long) ROWS * ROW_BYTES);
            assertThat(peakDirect.get()).as("the sampler sees the proxy's pooled buffers").isPositive();
            long growthMb = (peakDirect.get() - before) / (1024 * 1024);
            System.out.printf("LargeResultIT: buffer memory before %d KB, peak %d KB for %d MB streamed%n",
                    before / 1024, peakDirect.get() / 1024, bytes / (1024 * 1024));
            assertThat(growthMb).as("peak growth of the proxy's buffer memory in MB while 100 MB went through")
                    .isLessThan(32);
        }
    }

    private static long directMemoryInUse() {
        return Math.max(PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory(), PlatformDependent.usedDirectMemory());
    }
}
