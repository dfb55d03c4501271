package io.gantry.proxy;

import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * CPU time of the benchmark's JVM per operation ({@code cpu.time.norm}, ns/op): on a shared machine, wall time per
 * operation also counts the time other processes hold the cores, CPU time does not. It includes the JVM's own
 * threads (GC, JIT), as the proxy's CPU per query does. Use with {@code -prof io.gantry.proxy.CpuTimeProfiler}.
 */
public final class CpuTimeProfiler implements InternalProfiler {

    private final com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private long startNanos;

    @Override
    public String getDescription() {
        return "process CPU time per operation";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        startNanos = os.getProcessCpuTime();
    }

    @Override
    public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams,
                                                       IterationParams iterationParams, IterationResult result) {
        long cpu = os.getProcessCpuTime() - startNanos;
        long ops = result.getMetadata().getAllOps();
        return List.of(new ScalarResult("cpu.time.norm", ops == 0 ? Double.NaN : (double) cpu / ops, "ns/op",
                AggregationPolicy.AVG));
    }
}
