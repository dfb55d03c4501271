package io.gantry.cdc;

import io.gantry.topology.UpstreamUrl;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * The commands to the change stream and its server list, between the threads that give them (the admin statements,
 * {@link CdcStream#close()}, a failed checkpoint) and the stream thread that takes them. One lock guards them; the
 * stream thread waits on it while stopped or pausing between attempts, and a command wakes it and disconnects the
 * binlog session it is reading.
 */
final class StreamControl {

    private final Object lock = new Object();
    private List<UpstreamUrl> servers;
    private boolean started;
    private boolean stopRequested;
    private boolean restartFromTop;
    private boolean announceRestart;
    private boolean closed;
    private boolean closeCalled;
    private String commandReason;
    private BinlogSession session;
    private volatile boolean stoppedForGood;

    StreamControl(List<UpstreamUrl> servers) {
        this.servers = List.copyOf(servers);
    }

    /** @throws IllegalStateException once the stream has started */
    void addListener(ChangeListeners listeners, ChangeListener listener) {
        synchronized (lock) {
            if (started) {
                throw new IllegalStateException("listeners are added before the change stream starts");
            }
            listeners.add(listener, false);
        }
    }

    void markStarted() {
        synchronized (lock) {
            started = true;
        }
    }

    /** Stops the stream; false if it was stopped already. */
    boolean stop(String reason) {
        synchronized (lock) {
            if (stopRequested) {
                return false;
            }
            stopRequested = true;
            interruptLocked(reason);
            return true;
        }
    }

    /** Streams again, from the highest-weight server that answers; false if the stream was not stopped. */
    boolean restart(String reason) {
        synchronized (lock) {
            if (!stopRequested) {
                return false;
            }
            stopRequested = false;
            restartFromTop = true;
            announceRestart = true;
            commandReason = reason;
            lock.notifyAll();
            return true;
        }
    }

    /**
     * Takes the new list; the stream moves to its highest-weight server when {@code current}, the server streamed
     * from now, is not on it, or when it streams from none.
     */
    void changeServers(List<UpstreamUrl> newServers, UpstreamUrl current, String by) {
        synchronized (lock) {
            servers = List.copyOf(newServers);
            if (current != null && newServers.stream().noneMatch(u -> u.address().equals(current.address()))) {
                restartFromTop = true;
                announceRestart = false;
                interruptLocked("ALTER GANTRY CHANGE CDC by '" + by + "' removed " + current.address());
            } else if (current == null) {
                // Between servers (or stopped): whatever was being tried may have left the list.
                restartFromTop = true;
                announceRestart = false;
                interruptLocked("ALTER GANTRY CHANGE CDC by '" + by + "'");
            }
        }
    }

    /** Takes a pending restart command into the policy; returns the server list by weight. */
    List<UpstreamUrl> takeCommand(FailoverPolicy policy) {
        synchronized (lock) {
            if (restartFromTop) {
                restartFromTop = false;
                policy.restart(commandReason, announceRestart);
            }
            commandReason = null;
            return FailoverPolicy.byWeight(servers);
        }
    }

    /**
     * Waits while the stream is stopped, once {@code stopped} has been told why (outside the lock); false once the
     * stream is closed.
     */
    boolean awaitNotStopped(Consumer<String> stopped) {
        String reason;
        synchronized (lock) {
            if (closed || !stopRequested) {
                return !closed;
            }
            reason = commandReason;
        }
        stopped.accept(reason == null ? "stopped" : reason);
        synchronized (lock) {
            while (stopRequested && !closed) {
                waitLocked(Duration.ZERO);
            }
            return !closed;
        }
    }

    /** Makes {@code candidate} the session a command disconnects; false when a command came first. */
    boolean attach(BinlogSession candidate) {
        synchronized (lock) {
            if (commandReason != null || closed) {
                return false;
            }
            session = candidate;
            return true;
        }
    }

    void detach() {
        synchronized (lock) {
            session = null;
        }
    }

    /** Waits {@code pause} unless a command comes first. */
    void pause(Duration pause) {
        if (pause.isZero()) {
            return;
        }
        synchronized (lock) {
            if (commandReason == null && !closed) {
                waitLocked(pause);
            }
        }
    }

    boolean commandPending() {
        synchronized (lock) {
            return commandReason != null || closed;
        }
    }

    /** Ends the stream for good; false if it was ended for good already. */
    boolean stopForGood(String reason) {
        synchronized (lock) {
            if (stoppedForGood) {
                return false;
            }
            stoppedForGood = true;
            closed = true;
            interruptLocked(reason);
            return true;
        }
    }

    boolean stoppedForGood() {
        return stoppedForGood;
    }

    /** Ends the stream as Gantry stops; false on every call but the first. */
    boolean close(String reason) {
        synchronized (lock) {
            if (closeCalled) {
                return false;
            }
            closeCalled = true;
            closed = true;
            interruptLocked(reason);
            return true;
        }
    }

    private void interruptLocked(String reason) {
        commandReason = reason;
        lock.notifyAll();
        if (session != null) {
            session.disconnect();
        }
    }

    private void waitLocked(Duration timeout) {
        try {
            lock.wait(timeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }
}
