package io.gantry.admin.protocol;

import static io.gantry.admin.protocol.JsonFields.array;
import static io.gantry.admin.protocol.JsonFields.describe;
import static io.gantry.admin.protocol.JsonFields.invalid;
import static io.gantry.admin.protocol.JsonFields.optionalDouble;
import static io.gantry.admin.protocol.JsonFields.optionalInstant;
import static io.gantry.admin.protocol.JsonFields.optionalInt;
import static io.gantry.admin.protocol.JsonFields.optionalLong;
import static io.gantry.admin.protocol.JsonFields.optionalText;
import static io.gantry.admin.protocol.JsonFields.parseInstant;
import static io.gantry.admin.protocol.JsonFields.requiredBoolean;
import static io.gantry.admin.protocol.JsonFields.requiredInstant;
import static io.gantry.admin.protocol.JsonFields.requiredInt;
import static io.gantry.admin.protocol.JsonFields.requiredLong;
import static io.gantry.admin.protocol.JsonFields.requiredObject;
import static io.gantry.admin.protocol.JsonFields.requiredText;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The admin socket's protocol, version {@value #VERSION}: one JSON object per line (UTF-8, ending in {@code \n}),
 * each with a {@code type}. The client's first line is a {@code hello} with the protocol version it speaks; the
 * engine answers with its own {@code hello}. docs/console.md ("The socket's protocol") shows every message with an
 * example.
 *
 * <p>Both sides use this class: the engine decodes requests and encodes replies, a client the other way round.
 * Decoding never throws: a line that is not a well-formed message becomes a {@link Decoded.Invalid} that says what is
 * wrong (and the request's id when it could be read), which the engine sends back as an {@code error}. A message's
 * fields are read by {@code JsonFields}.
 */
public final class AdminProtocol {

    /** The protocol version this side speaks. */
    public static final int VERSION = 1;
    /** The longest line either side accepts, in bytes (1 MiB for requests; replies may be longer). */
    public static final int MAX_REQUEST_BYTES = 1 << 20;
    /** Samples in a health page when the request names no limit. */
    public static final int DEFAULT_HEALTH_LIMIT = 1000;
    /** Entries in an events answer when the request names no limit. */
    public static final int DEFAULT_EVENTS_LIMIT = 100;

    /** Numbers with a fraction are read as decimals, so that a {@code decimal} column keeps its digits (1.50). */
    private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .setNodeFactory(NODES);

    private AdminProtocol() {
    }

    /** A decoded line: the message, or why it is not one. */
    public sealed interface Decoded<T> {

        record Valid<T>(T message) implements Decoded<T> {
        }

        /**
         * @param id      the id of the request, when it could be read, else null
         * @param error   the kind, as {@link Reply.Error#error()} names them
         * @param message what is wrong, naming the field and the value found
         */
        record Invalid<T>(String id, String error, String message) implements Decoded<T> {
        }
    }

    // ---- requests ----------------------------------------------------------------------------------------------

    /** A request as one line of JSON, without the newline. */
    public static String encode(Request request) {
        ObjectNode node = NODES.objectNode();
        if (request instanceof Request.Hello hello) {
            node.put("type", "hello").put("protocol", hello.protocol()).put("client", hello.client());
        } else if (request instanceof Request.Sql sql) {
            head(node, "sql", sql.id()).put("sql", sql.sql());
        } else if (request instanceof Request.Servers servers) {
            head(node, "servers", servers.id());
        } else if (request instanceof Request.Health health) {
            head(node, "health", health.id());
            putInstant(node, "from", health.from());
            putInstant(node, "until", health.until());
            node.put("server", health.server()).put("limit", health.limit());
        } else if (request instanceof Request.Events events) {
            head(node, "events", events.id());
            putInstant(node, "since", events.since());
            node.put("limit", events.limit());
        } else if (request instanceof Request.Subscribe subscribe) {
            head(node, "subscribe", subscribe.id()).set("topics", topics(subscribe.topics()));
        } else if (request instanceof Request.Unsubscribe unsubscribe) {
            head(node, "unsubscribe", unsubscribe.id()).set("topics", topics(unsubscribe.topics()));
        } else if (request instanceof Request.Ping ping) {
            head(node, "ping", ping.id());
        }
        return write(node);
    }

    /** Reads a request line. */
    public static Decoded<Request> decodeRequest(String line) {
        return decode(line, AdminProtocol::request);
    }

    private static Request request(String id, String type, JsonNode node) throws BadMessage {
        return switch (type) {
            case "hello" -> new Request.Hello(requiredInt(node, "protocol"), optionalText(node, "client", "?"));
            case "sql" -> new Request.Sql(id, requiredText(node, "sql"));
            case "servers" -> new Request.Servers(id);
            case "health" -> new Request.Health(id, optionalInstant(node, "from"), optionalInstant(node, "until"),
                    optionalText(node, "server", null), optionalInt(node, "limit", DEFAULT_HEALTH_LIMIT));
            case "events" -> new Request.Events(id, optionalInstant(node, "since"),
                    optionalInt(node, "limit", DEFAULT_EVENTS_LIMIT));
            case "subscribe" -> new Request.Subscribe(id, topics(node));
            case "unsubscribe" -> new Request.Unsubscribe(id, topics(node));
            case "ping" -> new Request.Ping(id);
            default -> throw new BadMessage("unknown_type", "unknown request type '" + type + "' (known: hello, "
                    + "sql, servers, health, events, subscribe, unsubscribe, ping)");
        };
    }

    /** What a line's body reads as, once it is known to be an object with a type. */
    private interface Body<T> {
        T read(String id, String type, JsonNode node) throws BadMessage;
    }

    /** The envelope of every line: one JSON object with a {@code type} and, but for pushes, an {@code id}. */
    private static <T> Decoded<T> decode(String line, Body<T> body) {
        JsonNode node;
        try {
            node = object(line);
        } catch (BadMessage e) {
            return new Decoded.Invalid<>(null, e.error(), e.getMessage());
        }
        String id = null;
        try {
            id = id(node);
            return new Decoded.Valid<>(body.read(id, type(node), node));
        } catch (BadMessage e) {
            return new Decoded.Invalid<>(id, e.error(), e.getMessage());
        }
    }

    // ---- replies -----------------------------------------------------------------------------------------------

    /** A reply as one line of JSON, without the newline. */
    public static String encode(Reply reply) {
        ObjectNode node = NODES.objectNode();
        if (reply instanceof Reply.Welcome welcome) {
            node.put("type", "hello").put("protocol", welcome.protocol()).put("version", welcome.version())
                    .put("listen", welcome.listen()).put("data_dir", welcome.dataDir());
        } else if (reply instanceof Reply.Rows rows) {
            head(node, "rows", rows.id());
            ArrayNode columns = node.putArray("columns");
            for (Column column : rows.columns()) {
                columns.addObject().put("name", column.name()).put("type", column.type().wireName());
            }
            ArrayNode values = node.putArray("rows");
            for (List<Object> row : rows.rows()) {
                ArrayNode array = values.addArray();
                for (Object value : row) {
                    array.add(value(value));
                }
            }
        } else if (reply instanceof Reply.Done done) {
            head(node, "ok", done.id()).put("affected_rows", done.affectedRows()).put("message", done.message());
        } else if (reply instanceof Reply.Error error) {
            head(node, "error", error.id()).put("error", error.error()).put("message", error.message());
        } else if (reply instanceof Reply.Servers servers) {
            ArrayNode array = head(node, "servers", servers.id()).putArray("servers");
            servers.servers().forEach(server -> array.add(server(server)));
        } else if (reply instanceof Reply.Health health) {
            ArrayNode array = head(node, "health", health.id()).putArray("samples");
            health.samples().forEach(sample -> array.add(sample(sample)));
            putInstant(node, "next", health.next());
        } else if (reply instanceof Reply.Events events) {
            ArrayNode array = head(node, "events", events.id()).putArray("events");
            events.events().forEach(event -> array.add(event(event)));
        } else if (reply instanceof Reply.Subscribed subscribed) {
            head(node, "subscribed", subscribed.id()).set("topics", topics(subscribed.topics()));
        } else if (reply instanceof Reply.Pong pong) {
            head(node, "pong", pong.id());
        } else if (reply instanceof Reply.ServerChanged changed) {
            node.put("type", "server").set("server", server(changed.server()));
        } else if (reply instanceof Reply.ServerRemoved removed) {
            node.put("type", "server_removed").put("address", removed.address());
        } else if (reply instanceof Reply.Event event) {
            node.put("type", "event").set("event", event(event.event()));
        } else if (reply instanceof Reply.Queries queries) {
            node.put("type", "queries");
            putInstant(node, "at", queries.at());
            ArrayNode array = node.putArray("shapes");
            queries.shapes().forEach(shape -> array.add(shape(shape)));
        }
        return write(node);
    }

    /** Reads a reply line. */
    public static Decoded<Reply> decodeReply(String line) {
        return decode(line, AdminProtocol::reply);
    }

    private static Reply reply(String id, String type, JsonNode node) throws BadMessage {
        return switch (type) {
            case "hello" -> new Reply.Welcome(requiredInt(node, "protocol"), optionalText(node, "version", ""),
                    optionalText(node, "listen", ""), optionalText(node, "data_dir", ""));
            case "rows" -> rows(id, node);
            case "ok" -> new Reply.Done(id, requiredLong(node, "affected_rows"), requiredText(node, "message"));
            case "error" -> new Reply.Error(id, requiredText(node, "error"), requiredText(node, "message"));
            case "servers" -> {
                List<ServerState> servers = new ArrayList<>();
                for (JsonNode server : array(node, "servers")) {
                    servers.add(server(server));
                }
                yield new Reply.Servers(id, servers);
            }
            case "health" -> {
                List<HealthPoint> samples = new ArrayList<>();
                for (JsonNode sample : array(node, "samples")) {
                    samples.add(new HealthPoint(requiredInstant(sample, "at"), requiredText(sample, "server"),
                            requiredText(sample, "health"), requiredText(sample, "role"),
                            optionalDouble(sample, "rtt_ms"), optionalLong(sample, "lag_ms"),
                            optionalDouble(sample, "connect_ms")));
                }
                yield new Reply.Health(id, samples, optionalInstant(node, "next"));
            }
            case "events" -> {
                List<TimelineEvent> events = new ArrayList<>();
                for (JsonNode event : array(node, "events")) {
                    events.add(event(event));
                }
                yield new Reply.Events(id, events);
            }
            case "subscribed" -> new Reply.Subscribed(id, topics(node));
            case "pong" -> new Reply.Pong(id);
            case "server" -> new Reply.ServerChanged(server(requiredObject(node, "server")));
            case "server_removed" -> new Reply.ServerRemoved(requiredText(node, "address"));
            case "event" -> new Reply.Event(event(requiredObject(node, "event")));
            case "queries" -> {
                List<QueryShape> shapes = new ArrayList<>();
                for (JsonNode shape : array(node, "shapes")) {
                    shapes.add(shape(shape));
                }
                yield new Reply.Queries(requiredInstant(node, "at"), shapes);
            }
            default -> throw new BadMessage("unknown_type", "unknown reply type '" + type + "'");
        };
    }

    // ---- values ------------------------------------------------------------------------------------------------

    private static ObjectNode server(ServerState server) {
        ObjectNode node = NODES.objectNode();
        node.put("address", server.address()).put("host", server.host()).put("port", server.port())
                .put("database", server.database()).put("user", server.user()).put("weight", server.weight())
                .put("purpose", server.purpose()).put("active_cdc", server.activeCdc())
                .put("health", server.health());
        putInstant(node, "down_since", server.downSince());
        putInstant(node, "last_ok", server.lastOk());
        node.put("connections", server.connections()).put("role", server.role()).put("lag_ms", server.lagMs())
                .put("rtt_ms", server.rttMs()).put("connect_ms", server.connectMs())
                .put("rtt_smoothed_ms", server.rttSmoothedMs());
        return node;
    }

    private static ServerState server(JsonNode node) throws BadMessage {
        return new ServerState(requiredText(node, "host"), requiredInt(node, "port"), requiredText(node, "database"),
                requiredText(node, "user"), requiredInt(node, "weight"), requiredText(node, "purpose"),
                requiredBoolean(node, "active_cdc"), requiredText(node, "health"), optionalInstant(node, "down_since"),
                optionalInstant(node, "last_ok"), requiredInt(node, "connections"), requiredText(node, "role"),
                optionalLong(node, "lag_ms"), optionalDouble(node, "rtt_ms"), optionalDouble(node, "connect_ms"),
                optionalDouble(node, "rtt_smoothed_ms"));
    }

    private static ObjectNode sample(HealthPoint sample) {
        ObjectNode node = NODES.objectNode();
        putInstant(node, "at", sample.at());
        return node.put("server", sample.server()).put("health", sample.health()).put("role", sample.role())
                .put("rtt_ms", sample.rttMs()).put("lag_ms", sample.lagMs()).put("connect_ms", sample.connectMs());
    }

    private static ObjectNode event(TimelineEvent event) {
        ObjectNode node = NODES.objectNode();
        if (event.id() != 0) {
            node.put("id", event.id());
        }
        putInstant(node, "at", event.at());
        node.put("server", event.server()).put("kind", event.kind()).put("reason", event.reason());
        if (event.instance() != null) {
            node.put("instance", event.instance());
        }
        return node;
    }

    private static TimelineEvent event(JsonNode node) throws BadMessage {
        return new TimelineEvent(node.has("id") ? requiredLong(node, "id") : 0, requiredInstant(node, "at"),
                optionalText(node, "server", null), requiredText(node, "kind"), requiredText(node, "reason"),
                optionalText(node, "instance", null));
    }

    private static ObjectNode shape(QueryShape shape) {
        ObjectNode node = NODES.objectNode();
        node.put("shape", shape.shape()).put("schema", shape.schema()).put("account", shape.account())
                .put("count", shape.count()).put("errors", shape.errors()).put("error_codes", shape.errorCodes())
                .put("rows_sent", shape.rowsSent()).put("rows_affected", shape.rowsAffected())
                .put("total_us", shape.totalMicros()).put("p50_us", shape.p50Micros())
                .put("p95_us", shape.p95Micros()).put("p99_us", shape.p99Micros()).put("max_us", shape.maxMicros())
                .put("on_primary", shape.onPrimary()).put("on_replica", shape.onReplica())
                .put("on_cache", shape.onCache()).put("on_gantry", shape.onGantry())
                .put("routing_reasons", shape.reasons());
        putInstant(node, "first_seen", shape.firstSeen());
        putInstant(node, "last_seen", shape.lastSeen());
        return node.put("folded", shape.folded());
    }

    private static QueryShape shape(JsonNode node) throws BadMessage {
        return new QueryShape(requiredText(node, "shape"), requiredText(node, "schema"),
                requiredText(node, "account"), requiredLong(node, "count"), requiredLong(node, "errors"),
                requiredText(node, "error_codes"), requiredLong(node, "rows_sent"),
                requiredLong(node, "rows_affected"), requiredLong(node, "total_us"), requiredLong(node, "p50_us"),
                requiredLong(node, "p95_us"), requiredLong(node, "p99_us"), requiredLong(node, "max_us"),
                requiredLong(node, "on_primary"), requiredLong(node, "on_replica"), requiredLong(node, "on_cache"),
                requiredLong(node, "on_gantry"), requiredText(node, "routing_reasons"),
                requiredInstant(node, "first_seen"), requiredInstant(node, "last_seen"),
                requiredBoolean(node, "folded"));
    }

    private static Reply.Rows rows(String id, JsonNode node) throws BadMessage {
        List<Column> columns = new ArrayList<>();
        for (JsonNode column : array(node, "columns")) {
            String type = requiredText(column, "type");
            try {
                columns.add(new Column(requiredText(column, "name"), Column.Type.fromWireName(type)));
            } catch (IllegalArgumentException e) {
                throw new BadMessage("invalid_reply", e.getMessage());
            }
        }
        List<List<Object>> rows = new ArrayList<>();
        for (JsonNode row : array(node, "rows")) {
            if (!row.isArray() || row.size() != columns.size()) {
                throw new BadMessage("invalid_reply", "a row must be an array of " + columns.size() + " values, not "
                        + row);
            }
            List<Object> values = new ArrayList<>(row.size());
            for (int i = 0; i < row.size(); i++) {
                values.add(value(columns.get(i), row.get(i)));
            }
            rows.add(values);
        }
        return new Reply.Rows(id, columns, rows);
    }

    /** A typed value as JSON: numbers as numbers, instants as ISO-8601 strings, bytes as hex. */
    private static JsonNode value(Object value) {
        if (value == null) {
            return NODES.nullNode();
        }
        if (value instanceof String text) {
            return NODES.textNode(text);
        }
        if (value instanceof Long || value instanceof Integer) {
            return NODES.numberNode(((Number) value).longValue());
        }
        if (value instanceof BigDecimal decimal) {
            return NODES.numberNode(decimal);
        }
        if (value instanceof Double number) {
            return Double.isFinite(number) ? NODES.numberNode(number) : NODES.textNode(number.toString());
        }
        if (value instanceof Boolean flag) {
            return NODES.booleanNode(flag);
        }
        if (value instanceof Instant at) {
            return NODES.textNode(at.toString());
        }
        if (value instanceof byte[] bytes) {
            return NODES.textNode(HexFormat.of().formatHex(bytes));
        }
        return NODES.textNode(value.toString());
    }

    private static Object value(Column column, JsonNode value) throws BadMessage {
        if (value.isNull()) {
            return null;
        }
        boolean fits = switch (column.type()) {
            case TEXT, BINARY, TIMESTAMP -> value.isTextual();
            case INTEGER -> value.isIntegralNumber();
            case DECIMAL -> value.isNumber();
            case DOUBLE -> value.isNumber() || value.isTextual();
            case BOOLEAN -> value.isBoolean();
        };
        if (!fits) {
            throw new BadMessage("invalid_reply", "column '" + column.name() + "' is " + column.type().wireName()
                    + ", but holds " + value);
        }
        return switch (column.type()) {
            case TEXT, BINARY -> value.asText();
            case INTEGER -> value.asLong();
            case DECIMAL -> value.decimalValue();
            case DOUBLE -> value.isTextual() ? Double.valueOf(value.asText()) : value.asDouble();
            case BOOLEAN -> value.asBoolean();
            case TIMESTAMP -> parseInstant(column.name(), value.asText());
        };
    }

    private static Set<Topic> topics(JsonNode node) throws BadMessage {
        Set<Topic> topics = EnumSet.noneOf(Topic.class);
        for (JsonNode topic : array(node, "topics")) {
            if (!topic.isTextual()) {
                throw invalid("topics", "an array of topic names (servers, events, queries)", node.get("topics"));
            }
            try {
                topics.add(Topic.fromWireName(topic.asText()));
            } catch (IllegalArgumentException e) {
                throw new BadMessage("invalid_request", e.getMessage());
            }
        }
        return topics;
    }

    private static ArrayNode topics(Set<Topic> topics) {
        ArrayNode array = NODES.arrayNode();
        new TreeSet<>(topics).forEach(topic -> array.add(topic.wireName()));
        return array;
    }

    // ---- envelope ----------------------------------------------------------------------------------------------

    private static JsonNode object(String line) throws BadMessage {
        if (line == null || line.isBlank()) {
            throw new BadMessage("malformed_json", "an empty line; each line must be one JSON object");
        }
        JsonNode node;
        try {
            node = JSON.readTree(line);
        } catch (JsonProcessingException e) {
            String message = e.getOriginalMessage();
            throw new BadMessage("malformed_json", "not JSON: " + (message == null ? e.toString() : message)
                    + " (at column " + e.getLocation().getColumnNr() + ")");
        }
        if (node == null || !node.isObject()) {
            throw new BadMessage("malformed_json", "each line must be one JSON object, not " + describe(node));
        }
        return node;
    }

    private static String id(JsonNode node) throws BadMessage {
        JsonNode id = node.get("id");
        if (id == null || id.isNull()) {
            return null;
        }
        if (id.isTextual() || id.isIntegralNumber()) {
            return id.asText();
        }
        throw new BadMessage("invalid_request", "'id' must be a string or a whole number, not " + id);
    }

    private static String type(JsonNode node) throws BadMessage {
        JsonNode type = node.get("type");
        if (type == null || !type.isTextual()) {
            throw new BadMessage("invalid_request", "'type' must be a string naming the message, not "
                    + describe(type));
        }
        return type.asText();
    }

    // ---- writing -----------------------------------------------------------------------------------------------

    private static ObjectNode head(ObjectNode node, String type, String id) {
        node.put("type", type);
        if (id != null) {
            node.put("id", id);
        }
        return node;
    }

    private static void putInstant(ObjectNode node, String field, Instant at) {
        node.put(field, at == null ? null : at.toString());
    }

    private static String write(ObjectNode node) {
        try {
            // Jackson escapes control characters, so a line never holds a raw newline.
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write " + Objects.toString(node.get("type")), e);
        }
    }
}
