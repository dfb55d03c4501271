package io.gantry.admin.protocol;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What the engine sends on the admin socket, one per line: answers to requests (with the request's id) and pushes
 * of subscribed topics (without one).
 */
public sealed interface Reply {

    /** The id of the request answered; null for pushes and for errors about a line without an id. */
    String id();

    /** Whether this is a push of a subscription rather than an answer. */
    default boolean isPush() {
        return false;
    }

    /** A push of a subscribed topic: it answers no request. */
    sealed interface Push extends Reply {
        @Override
        default String id() {
            return null;
        }

        @Override
        default boolean isPush() {
            return true;
        }
    }

    /**
     * The answer to {@link Request.Hello}.
     *
     * @param protocol the protocol version the engine speaks
     * @param version  Gantry's version
     * @param listen   the proxy port's address ({@code host:port})
     * @param dataDir  the engine's data directory
     */
    record Welcome(int protocol, String version, String listen, String dataDir) implements Reply {

        @Override
        public String id() {
            return null;
        }
    }

    /**
     * A result set.
     *
     * @param rows values typed as their column says ({@link Column.Type}); null for SQL NULL
     */
    record Rows(String id, List<Column> columns, List<List<Object>> rows) implements Reply {

        public Rows {
            columns = List.copyOf(columns);
            List<List<Object>> copy = new ArrayList<>(rows.size());
            for (List<Object> row : rows) {
                copy.add(Collections.unmodifiableList(new ArrayList<>(row)));
            }
            rows = Collections.unmodifiableList(copy);
        }
    }

    /** An admin statement that changes something is done; {@code message} says what changed. */
    record Done(String id, long affectedRows, String message) implements Reply {
    }

    /**
     * A request failed; the connection stays open (except after {@code unsupported_protocol}).
     *
     * @param error   what kind: {@code malformed_json}, {@code invalid_request}, {@code unknown_type},
     *                {@code line_too_long}, {@code hello_first}, {@code unsupported_protocol}, or an admin
     *                statement's failure: {@code invalid_statement}, {@code refused}, {@code failed}
     * @param message why, in words
     */
    record Error(String id, String error, String message) implements Reply {

        public Error {
            Objects.requireNonNull(error, "error");
            Objects.requireNonNull(message, "message");
        }
    }

    /** The answer to {@link Request.Servers}. */
    record Servers(String id, List<ServerState> servers) implements Reply {

        public Servers {
            servers = List.copyOf(servers);
        }
    }

    /** The answer to {@link Request.Health}; {@code next} null on the last page. */
    record Health(String id, List<HealthPoint> samples, Instant next) implements Reply {

        public Health {
            samples = List.copyOf(samples);
        }
    }

    /** The answer to {@link Request.Events}. */
    record Events(String id, List<TimelineEvent> events) implements Reply {

        public Events {
            events = List.copyOf(events);
        }
    }

    /** The answer to a subscribe or unsubscribe: the topics now subscribed. */
    record Subscribed(String id, Set<Topic> topics) implements Reply {

        public Subscribed {
            topics = Set.copyOf(topics);
        }
    }

    /** The answer to {@link Request.Ping}. */
    record Pong(String id) implements Reply {
    }

    /** Push ({@link Topic#SERVERS}): a server's state, whole, when anything in it changed. */
    record ServerChanged(ServerState server) implements Push {
    }

    /** Push ({@link Topic#SERVERS}): a server left both lists. */
    record ServerRemoved(String address) implements Push {
    }

    /** Push ({@link Topic#EVENTS}): a new timeline entry. */
    record Event(TimelineEvent event) implements Push {
    }

    /**
     * Push ({@link Topic#QUERIES}): the statement digests' rows with the largest total latency, largest first, as
     * they were {@code at}; each push holds them all again (a row left out has fallen out of the top, or was
     * flushed).
     */
    record Queries(Instant at, List<QueryShape> shapes) implements Push {

        public Queries {
            Objects.requireNonNull(at, "at");
            shapes = List.copyOf(shapes);
        }
    }
}
