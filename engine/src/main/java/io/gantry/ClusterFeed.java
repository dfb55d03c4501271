package io.gantry;

import io.gantry.cdc.CdcSettings;
import io.gantry.cdc.CdcStream;
import io.gantry.cdc.SharedFeed;
import io.gantry.cluster.ClusterSettings;
import io.gantry.cluster.FeedLease;
import io.gantry.events.EventPublisher;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A cluster's change feed on this instance ({@code --cluster} with {@code --cdc-sink}): a stream writing the sink,
 * open only while this instance holds the feed's lease ({@link FeedLease}), its position the feed's. The instance's
 * own stream (caches, the cluster's versions) runs beside it without a sink.
 */
final class ClusterFeed implements FeedLease.Holder, SharedFeed, AutoCloseable {

    private final CdcSettings settings;
    private final Supplier<List<UpstreamUrl>> servers;
    private final Upstreams upstreams;
    private final Clock clock;
    private final EventPublisher events;
    private final long binlogClientId;
    private final FeedLease lease;
    private volatile CdcStream stream;

    /**
     * @param settings the change stream's settings, with the sink every instance of the cluster shares
     * @param servers  the CDC servers as they are when the lease is taken
     */
    ClusterFeed(ClusterSettings cluster, CdcSettings settings, Supplier<List<UpstreamUrl>> servers,
                Upstreams upstreams, Duration leaseTime, Path dataDir, Clock clock, EventPublisher events) {
        this.settings = settings;
        this.servers = servers;
        this.upstreams = upstreams;
        this.clock = clock;
        this.events = events;
        // Not the instance's own stream's id: both read binlogs at once, and a server keeps one dump per id.
        this.binlogClientId = 0x2000_0000L | (dataDir.toAbsolutePath().hashCode() & 0x1FFF_FFFFL);
        this.lease = new FeedLease(cluster, upstreams, settings.connectTimeout(), leaseTime, this);
    }

    void start() {
        lease.start();
    }

    @Override
    public synchronized void taken(long epoch, Optional<String> position) {
        closeStream();
        CdcStream opened = CdcStream.openShared(this, binlogClientId, servers.get(), settings, clock, events);
        opened.start(address -> upstreams.find(address).map(server -> !server.isUp()).orElse(false));
        stream = opened;
    }

    /** The CDC list changed: the feed's stream, if open, moves as the instance's own does. */
    void changeServers(List<UpstreamUrl> newServers, String by) {
        CdcStream current = stream;
        if (current != null) {
            current.changeServers(newServers, by);
        }
    }

    @Override
    public synchronized void lost(String why) {
        closeStream();
    }

    @Override
    public boolean stopped() {
        CdcStream current = stream;
        return current != null && current.stoppedForGood();
    }

    private void closeStream() {
        CdcStream current = stream;
        stream = null;
        if (current != null) {
            current.close();
        }
    }

    @Override
    public Optional<String> savedPosition() {
        return lease.takenPosition();
    }

    @Override
    public void savePosition(String gtidSet, String server) {
        lease.savePosition(gtidSet, server);
    }

    @Override
    public boolean mayWrite() {
        return lease.mayWrite();
    }

    @Override
    public void close() {
        lease.close();
    }
}
