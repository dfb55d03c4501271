package io.gantry.console.queries;

/**
 * One point of a shape's latency over time, from one push of the engine's {@code queries} topic.
 *
 * @param atMillis   when the engine read the digests
 * @param statements the shape's statements since the push before (all of them, for its first push)
 * @param meanMillis their mean latency; NaN when there was none
 * @param p99Millis  the shape's 99th percentile since it was first seen
 */
public record LatencyPoint(long atMillis, long statements, double meanMillis, double p99Millis) {
}
