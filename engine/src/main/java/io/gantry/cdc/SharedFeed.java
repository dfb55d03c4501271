package io.gantry.cdc;

import java.util.Optional;

/**
 * A change feed written by one instance of several at a time (a cluster's {@code --cdc-sink}, owned by a lease):
 * its position lives where every instance reads it, and only the owner of the moment may write the sink or save
 * the position. A stream on such a feed asks {@link #mayWrite()} before each write of the sink, and a position it
 * cannot save stops it for good, so an owner that lost the lease writes nothing more.
 */
public interface SharedFeed {

    /** The position the feed's last owner saved, as a GTID set's text; empty when none was ever saved. */
    Optional<String> savedPosition();

    /**
     * Saves the position, only while this instance owns the feed.
     *
     * @throws IllegalStateException when another instance owns it now (nothing is saved), or it cannot be saved
     */
    void savePosition(String gtidSet, String server);

    /** Whether this instance owns the feed now and may write its sink. */
    boolean mayWrite();
}
