package io.gantry.cdc;

import io.gantry.sandbox.Topology;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A single writer on the primary with autocommit, inserting ids 1, 2, 3, ... until told to stop: commit order is id
 * order, so a change feed must hold exactly 1..{@link #lastCommitted()} in that order.
 */
public final class IdWriter {

    private final Topology topology;
    private final String insert;
    private final AtomicLong lastCommitted = new AtomicLong();
    private final AtomicBoolean writing = new AtomicBoolean(true);
    private final Thread thread;

    /** @param insert the statement, with {@code %d} for the id ({@code INSERT INTO feed VALUES (%d)}) */
    public IdWriter(Topology topology, String insert) {
        this.topology = topology;
        this.insert = insert;
        this.thread = new Thread(this::write, "id-writer");
    }

    public void start() {
        thread.start();
    }

    /** Stops writing and waits for the last insert; returns the last id committed. */
    public long stop() throws InterruptedException {
        writing.set(false);
        if (thread.isAlive()) {
            thread.join();
        }
        return lastCommitted.get();
    }

    public long lastCommitted() {
        return lastCommitted.get();
    }

    private void write() {
        try (Connection primary = topology.connectAsApp(topology.primary());
             Statement statement = primary.createStatement()) {
            long id = 1;
            while (writing.get()) {
                statement.executeUpdate(String.format(insert, id));
                lastCommitted.set(id);
                id++;
                Thread.sleep(2);
            }
        } catch (SQLException | InterruptedException e) {
            throw new IllegalStateException("the writer failed", e);
        }
    }
}
