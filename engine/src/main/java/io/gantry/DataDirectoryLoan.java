package io.gantry;

import io.gantry.authority.Authority;
import io.gantry.cdc.CdcStream;
import io.gantry.cluster.ClusterMember;
import io.gantry.handover.HandOverSocket;
import io.gantry.handover.MovingSession;
import io.gantry.handover.Successor;
import io.gantry.proxy.RunningProxy;
import io.netty.channel.unix.FileDescriptor;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a running Gantry lends to the one taking over from it ({@link HandOverSocket}): the listening socket, shared
 * (both accept until the new one listens; then this one stops, and passes its sessions), and everything that holds
 * the data directory or a port the new one binds, let go in the order that loses nothing: the change stream pauses
 * and saves its position, the admin socket and the metrics port close, a cluster's feed lets its lease go, the
 * Authority's pruner and recorder stop (the recorder after writing what it holds), the instance's place in its
 * cluster passes (it stops reading and writing the cluster), and the Authority closes its H2 file, which H2 locks
 * while it is open. The proxy goes on serving and accepting meanwhile. If the new Gantry goes away before it
 * listens, all of it comes back in the reverse order.
 */
final class DataDirectoryLoan implements HandOverSocket.Lender {

    private static final Logger LOG = LoggerFactory.getLogger(DataDirectoryLoan.class);

    private final RunningProxy proxy;
    private final Authority authority;
    private final Optional<CdcStream> cdc;
    /** Stopped last first on a lend, started first last on a take-back: the recorder first, the admin socket last. */
    private final List<Restartable<?>> parts;
    private final String transport;
    private final String version;
    /** This instance's membership of its {@code --cluster}, whose place the Gantry taking over takes. */
    private final Optional<ClusterMember> cluster;
    private final CompletableFuture<Successor> handedOver = new CompletableFuture<>();
    private boolean streamPaused;

    DataDirectoryLoan(RunningProxy proxy, Authority authority, Optional<CdcStream> cdc, List<Restartable<?>> parts,
                      String transport, String version, Optional<ClusterMember> cluster) {
        this.proxy = proxy;
        this.authority = authority;
        this.cdc = cdc;
        this.parts = List.copyOf(parts);
        this.transport = transport;
        this.version = version;
        this.cluster = cluster;
    }

    /** Completes with the new Gantry once the hand-over is done: this one then drains and stops. */
    CompletableFuture<Successor> handedOver() {
        return handedOver;
    }

    @Override
    public String listenAddress() {
        InetSocketAddress address = proxy.address();
        return address.getHostString() + ":" + address.getPort();
    }

    @Override
    public String transport() {
        return transport;
    }

    @Override
    public String version() {
        return version;
    }

    @Override
    public Optional<FileDescriptor> listener() {
        return proxy.listenerDescriptor();
    }

    @Override
    public void lend(String borrower) throws Exception {
        if (cdc.isPresent()) {
            CdcStream stream = cdc.get();
            streamPaused = stream.pauseForHandOver("handed to " + borrower, stream.stopWait());
        }
        try {
            for (int i = parts.size() - 1; i >= 0; i--) {
                parts.get(i).stop();
            }
            cluster.ifPresent(member -> member.pauseForHandOver(borrower));
            authority.lend(borrower);
        } catch (RuntimeException e) {
            takeBack(borrower);
            throw e;
        }
        LOG.info("gantry: the data directory is lent to {}; still serving and accepting until it listens", borrower);
    }

    @Override
    public void takeBack(String borrower) {
        try {
            authority.takeBack();
        } catch (RuntimeException e) {
            LOG.error("gantry: cannot take the Authority back from {}: {}; the proxy goes on serving, but the "
                    + "admin socket, metrics, history and change stream stay stopped until Gantry restarts", borrower,
                    e.getMessage(), e);
            return;
        }
        cluster.ifPresent(ClusterMember::resumeAfterHandOver);
        for (Restartable<?> part : parts) {
            try {
                part.restart();
            } catch (RuntimeException e) {
                LOG.error("gantry: cannot start again after the take-over by {} failed: {}", borrower, e.toString(),
                        e);
            }
        }
        if (streamPaused) {
            cdc.get().resumeAfterHandOver("the take-over by " + borrower + " did not happen");
            streamPaused = false;
        }
        LOG.info("gantry: took the data directory back from {}; serving as before", borrower);
    }

    @Override
    public long sessionIdsUpTo() {
        return proxy.sessionIdsUpTo();
    }

    @Override
    public void stopAccepting() {
        proxy.stopAccepting();
    }

    @Override
    public void acceptAgain() {
        proxy.acceptAgain();
    }

    @Override
    public List<MovingSession> nextSessions(int max) {
        try {
            return proxy.nextMovingSessions(max).stream().map(moving -> new MovingSession(moving.id(),
                    moving.descriptor(), moving.state(), moving.moved(), moving.stays(), moving.open())).toList();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    @Override
    public int sessionsHeld() {
        return proxy.sessionsHeld();
    }

    @Override
    public String sessionsWaiting() {
        return proxy.sessionsWaiting();
    }

    @Override
    public int sessionsEnded() {
        return proxy.sessionsEnded();
    }

    @Override
    public void handedOver(Successor successor) {
        handedOver.complete(successor);
    }
}
