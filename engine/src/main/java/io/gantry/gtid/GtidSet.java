package io.gantry.gtid;

import java.util.Objects;

/**
 * A set of transactions named by GTIDs, in one of the two {@linkplain Flavour flavours}: what a server has executed,
 * or how far a change stream has applied. Values are immutable; operations return new sets (or the receiver itself
 * when nothing changes) and are defined only between sets of one flavour: mixing flavours throws an
 * {@link IllegalArgumentException} that names both.
 *
 * <ul>
 *   <li>{@link MySqlGtidSet} is an exact set: {@code uuid:1-5:7-9} holds exactly those transactions, gaps included.
 *   <li>{@link MariaDbGtidSet} is a MariaDB GTID <em>position</em>: per replication domain, every transaction up to
 *       the highest sequence number listed, whichever server committed it. See that class for why, and for what
 *       {@code gtid_strict_mode} has to do with it.
 * </ul>
 *
 * <p>{@code toString()} prints the canonical text, which {@link #parse(String, Flavour)} reads back to an equal value;
 * {@code equals} and {@code hashCode} compare values.
 */
public sealed interface GtidSet permits MySqlGtidSet, MariaDbGtidSet {

    /**
     * Parses a GTID set in the text form the flavour's servers print ({@code @@gtid_executed}, {@code @@gtid_binlog_pos},
     * {@code @@gtid_binlog_state}, ...). The empty or blank string is the empty set.
     *
     * @throws IllegalArgumentException if the text is malformed; the message quotes the whole text and the bad part
     */
    static GtidSet parse(String text, Flavour flavour) {
        Objects.requireNonNull(flavour, "flavour");
        return switch (flavour) {
            case MYSQL -> MySqlGtidSet.parse(text);
            case MARIADB -> MariaDbGtidSet.parse(text);
        };
    }

    /**
     * Parses a GTID set whose flavour is known only from its text, as Gantry saves positions and servers report
     * GTIDs: MySQL's hold a {@code ':'} after each UUID, MariaDB's never hold one. The empty text is MariaDB's empty
     * set.
     *
     * @throws IllegalArgumentException if the text is malformed, as {@link #parse(String, Flavour)}
     */
    static GtidSet parseAnyFlavour(String text) {
        return parse(text, text.indexOf(':') >= 0 ? Flavour.MYSQL : Flavour.MARIADB);
    }

    /** The empty set of a flavour. */
    static GtidSet empty(Flavour flavour) {
        Objects.requireNonNull(flavour, "flavour");
        return switch (flavour) {
            case MYSQL -> MySqlGtidSet.EMPTY;
            case MARIADB -> MariaDbGtidSet.EMPTY;
        };
    }

    /** The flavour of this set. */
    Flavour flavour();

    /** Whether the set holds no transaction; only the empty set, which prints as {@code ""}, does. */
    boolean isEmpty();

    /** Every transaction of this set and of {@code other}. */
    GtidSet union(GtidSet other);

    /** Whether every transaction of {@code other} is in this set (superset test, true for equal sets). */
    boolean contains(GtidSet other);

    /** Whether the transaction {@code gtid} is in this set. Allocates nothing. */
    boolean containsTransaction(Gtid gtid);

    /**
     * This set with {@code gtid} added, as a change stream advances its position when it has applied a transaction:
     * the result contains this set and {@code gtid}. Returns this set itself when nothing changes; otherwise copies
     * only the part of the set that changes.
     */
    GtidSet with(Gtid gtid);
}
