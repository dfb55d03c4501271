package io.gantry.cache;

import io.gantry.authority.Authority;
import io.gantry.cdc.CdcStream;
import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import java.time.Clock;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the caches know of the change stream (its state, its server, its applied position, since when it had what
 * the primary had executed) and the judgement drawn from it: whether the stream keeps the caches fresh now. Kept
 * apart from the definitions and the entries because it is written only by the stream's thread and the freshness
 * check, while the data path only reads it.
 */
final class StreamFreshness {

    private static final Logger LOG = LoggerFactory.getLogger(QueryCaches.class);

    private final CacheSettings settings;
    private final boolean streamed;
    private final Upstreams upstreams;
    private final Clock clock;

    private volatile CdcStream.State state;
    private volatile String server = "";
    private volatile GtidSet position;
    private volatile long caughtUpMillis;
    private volatile QueryCaches.Freshness freshness;

    /** @param streamed whether there is a change stream at all (false with {@code --no-cdc}) */
    StreamFreshness(CacheSettings settings, boolean streamed, Upstreams upstreams, Clock clock) {
        this.settings = settings;
        this.streamed = streamed;
        this.upstreams = upstreams;
        this.clock = clock;
        this.freshness = new QueryCaches.Freshness(false, streamed ? "the change stream has not started: TTL only"
                : "no change stream (--no-cdc): TTL only");
    }

    /** The change stream resumes from its saved position: that is where the caches start to be kept fresh from. */
    void loadSavedPosition(Authority authority) {
        authority.loadPosition(CdcStream.STREAM).filter(saved -> !saved.gtidSet().isBlank()).ifPresent(saved -> {
            try {
                position = GtidSet.parseAnyFlavour(saved.gtidSet());
            } catch (IllegalArgumentException unreadable) {
                LOG.warn("cache: the saved change-stream position '{}' is unreadable: {}", saved.gtidSet(),
                        unreadable.getMessage());
            }
        });
    }

    QueryCaches.Freshness freshness() {
        return freshness;
    }

    /** The stream's applied position, or null before its first transaction. */
    GtidSet position() {
        return position;
    }

    void applied(GtidSet position) {
        this.position = position;
    }

    String server() {
        return server;
    }

    void stateChanged(CdcStream.State state, Optional<String> server) {
        this.state = state;
        this.server = server.orElse("");
    }

    /** See {@link QueryCaches#stalenessMillis}. */
    long stalenessMillis(CachedResult entry, long nowMillis) {
        return freshness.live() ? Math.max(0, nowMillis - caughtUpMillis)
                : nowMillis - entry.filledMillis();
    }

    void checkSafely() {
        try {
            check();
        } catch (RuntimeException e) {
            LOG.error("cache: the freshness check failed: {}", e.toString(), e);
        }
    }

    synchronized void check() {
        long now = clock.millis();
        QueryCaches.Freshness next;
        if (!streamed) {
            next = freshness;
        } else if (state != CdcStream.State.STREAMING) {
            next = new QueryCaches.Freshness(false, "the change stream is " + (state == null ? "not started"
                    : state.displayName()) + ": TTL only");
        } else {
            Optional<UpstreamServer> primary = upstreams.primary();
            SampledPosition sample = primary.map(UpstreamServer::position).orElse(null);
            GtidSet applied = position;
            if (sample != null && applied != null && applied.flavour() == sample.executed().flavour()
                    && applied.contains(sample.executed())) {
                caughtUpMillis = Math.max(caughtUpMillis, sample.sampledAt().toEpochMilli());
            } else if (sample != null && applied == null && sample.executed().isEmpty()) {
                caughtUpMillis = Math.max(caughtUpMillis, sample.sampledAt().toEpochMilli());
            }
            long lag = now - caughtUpMillis;
            if (primary.isEmpty()) {
                next = new QueryCaches.Freshness(false, "no primary to measure the change stream's lag by: TTL only");
            } else if (lag > settings.maxStreamLag().toMillis()) {
                next = new QueryCaches.Freshness(false, "the change stream from " + server + " is " + lag
                        + " ms behind the primary (over --cache-max-stream-lag-ms=" + settings.maxStreamLag().toMillis()
                        + "): TTL only");
            } else {
                next = new QueryCaches.Freshness(true, "kept fresh by the change stream from " + server);
            }
        }
        QueryCaches.Freshness was = freshness;
        if (was.live() != next.live()) {
            LOG.info("cache: {}", next.reason());
        }
        freshness = next;
    }
}
