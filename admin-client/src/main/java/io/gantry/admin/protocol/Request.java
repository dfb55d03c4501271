package io.gantry.admin.protocol;

import java.time.Instant;
import java.util.Objects;
import java.util.Set;

/**
 * What a client sends on the admin socket, one per line. Every request but {@link Hello} carries an {@code id} that
 * the reply repeats; ids are the client's to choose (a string, or a number, repeated as a string).
 */
public sealed interface Request {

    /** The request's id, null for {@link Hello}. */
    String id();

    /**
     * The first line of every connection.
     *
     * @param protocol the protocol version the client speaks ({@link AdminProtocol#VERSION})
     * @param client   what the client is, for the engine's log ({@code gantry admin}, {@code gantry console})
     */
    record Hello(int protocol, String client) implements Request {

        public Hello {
            Objects.requireNonNull(client, "client");
        }

        @Override
        public String id() {
            return null;
        }
    }

    /** Runs an admin SQL statement, the same as on the proxy port; answered with rows, ok or error. */
    record Sql(String id, String sql) implements Request {

        public Sql {
            Objects.requireNonNull(sql, "sql");
        }
    }

    /** Every server's live state now; answered with {@code servers}. */
    record Servers(String id) implements Request {
    }

    /**
     * A page of health history; answered with {@code health}, whose {@code next} is where the next page starts.
     *
     * @param from   oldest sample's time, inclusive; null for the start
     * @param until  end, exclusive; null for now
     * @param server {@code host:port}, or null for every server
     * @param limit  most samples in the page, 1..10000
     */
    record Health(String id, Instant from, Instant until, String server, int limit) implements Request {
    }

    /**
     * The latest timeline entries at or after {@code since}, oldest first; answered with {@code events}.
     *
     * @param since null for no lower bound
     * @param limit most entries, 1..10000
     */
    record Events(String id, Instant since, int limit) implements Request {
    }

    /** Starts pushes of these topics; answered with {@code subscribed}, then the current state of every server. */
    record Subscribe(String id, Set<Topic> topics) implements Request {

        public Subscribe {
            topics = Set.copyOf(topics);
        }
    }

    /** Stops pushes of these topics; answered with {@code subscribed} (what remains). */
    record Unsubscribe(String id, Set<Topic> topics) implements Request {

        public Unsubscribe {
            topics = Set.copyOf(topics);
        }
    }

    /** Answered with {@code pong}: the connection and the engine are alive. */
    record Ping(String id) implements Request {
    }
}
