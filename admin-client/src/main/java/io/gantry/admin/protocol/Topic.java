package io.gantry.admin.protocol;

import java.util.Locale;

/** What a subscription pushes. */
public enum Topic {
    /** Every change of a server's live state (health, role, weight, lag, RTT, connections...): {@code server}. */
    SERVERS,
    /** Every new entry of the failover timeline: {@code event}. */
    EVENTS,
    /**
     * The statement digests' rows with the largest total latency, at once and then every few seconds:
     * {@code queries}.
     */
    QUERIES;

    /** The name on the wire: {@code servers}, {@code events}, {@code queries}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** @throws IllegalArgumentException naming the value and the known topics */
    public static Topic fromWireName(String name) {
        for (Topic topic : values()) {
            if (topic.wireName().equals(name)) {
                return topic;
            }
        }
        throw new IllegalArgumentException("unknown topic '" + name + "' (known: servers, events, queries)");
    }
}
