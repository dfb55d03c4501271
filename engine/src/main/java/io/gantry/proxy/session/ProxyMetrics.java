package io.gantry.proxy.session;

import io.gantry.route.RouteReason;
import io.gantry.route.RouteTarget;

/**
 * What the proxy's data path tells the metrics, per statement: where it was routed and why, how long its answer
 * took, and the errors Gantry answered itself. Called on event loops: implementations only add to counters and
 * histograms made in advance.
 */
public interface ProxyMetrics {

    /** A statement was routed to {@code target} for {@code reason}. */
    void routed(RouteTarget target, RouteReason reason);

    /** A command's answer came back from a server of {@code target} {@code nanos} after it was sent. */
    void answered(RouteTarget target, long nanos);

    /** Gantry answered a command with this error itself (a refusal, a lost server, a malformed packet). */
    void gantryError(int code);

    /** No metrics (without {@code --metrics-listen}). */
    ProxyMetrics NONE = new ProxyMetrics() {
        @Override
        public void routed(RouteTarget target, RouteReason reason) {
        }

        @Override
        public void answered(RouteTarget target, long nanos) {
        }

        @Override
        public void gantryError(int code) {
        }
    };
}
