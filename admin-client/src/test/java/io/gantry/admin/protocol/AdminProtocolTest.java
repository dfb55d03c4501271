package io.gantry.admin.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AdminProtocolTest {

    private static final Instant T0 = Instant.parse("2026-11-30T21:00:05.123Z");
    private static final ServerState REPLICA = new ServerState("db2", 3306, "app", "svc", 50, "cdc, proxy", true,
            "up", null, T0, 3, "replica", 12L, 0.25, 3.5, 0.3);

    private static final List<Request> REQUESTS = List.of(
            new Request.Hello(1, "gantry admin"),
            new Request.Sql("1", "SELECT * FROM gantry.upstream_servers"),
            new Request.Servers("2"),
            new Request.Health("3", T0, T0.plusSeconds(60), "db2:3306", 500),
            new Request.Health("4", null, null, null, 1000),
            new Request.Events("5", T0, 10),
            new Request.Subscribe("6", EnumSet.allOf(Topic.class)),
            new Request.Unsubscribe("7", Set.of(Topic.EVENTS)),
            new Request.Subscribe("9", Set.of(Topic.QUERIES)),
            new Request.Ping("8"));

    private static final List<Reply> REPLIES = List.of(
            new Reply.Welcome(1, "0.1.0", "127.0.0.1:3307", "/var/lib/gantry"),
            new Reply.Rows("1", List.of(new Column("host", Column.Type.TEXT), new Column("port", Column.Type.INTEGER),
                    new Column("active_cdc", Column.Type.BOOLEAN), new Column("last_ok", Column.Type.TIMESTAMP),
                    new Column("rtt_ms", Column.Type.DOUBLE), new Column("d", Column.Type.DECIMAL),
                    new Column("b", Column.Type.BINARY)),
                    List.of(Arrays.asList("db1", 3306L, true, T0, 0.25, new BigDecimal("1.50"), "cafe"),
                            Arrays.asList(null, null, null, null, null, null, null))),
            new Reply.Done("2", 1, "weight of db1:3306 is now 70"),
            new Reply.Error("3", "invalid_statement", "ALTER GANTRY SET WEIGHT expects 'host:port' TO 1..100"),
            new Reply.Error(null, "malformed_json", "not JSON"),
            new Reply.Servers("4", List.of(REPLICA)),
            new Reply.Health("5", List.of(new HealthPoint(T0, "db2:3306", "up", "replica", 0.5, 0L, 4.0),
                    new HealthPoint(T0, "db3:3306", "down", "unknown", null, null, null)), T0.plusSeconds(1)),
            new Reply.Health("6", List.of(), null),
            new Reply.Events("7", List.of(new TimelineEvent(12, T0, "db2:3306", "down", "connection refused"),
                    new TimelineEvent(13, T0, null, "startup", "Gantry started"),
                    new TimelineEvent(14, T0, "db3:3306", "up", "answers again", "gantry-b"))),
            new Reply.Subscribed("8", EnumSet.of(Topic.SERVERS)),
            new Reply.Pong("9"),
            new Reply.ServerChanged(REPLICA),
            new Reply.ServerRemoved("db4:3306"),
            new Reply.Event(new TimelineEvent(0, T0, "db2:3306", "weight_changed", "weight 50 -> 70")),
            new Reply.Queries(T0, List.of(new QueryShape("SELECT c FROM t WHERE id = ?", "app", "alice", 102, 1,
                            "1146:1", 101, 0, 5_050_501, 49_000, 95_000, 99_000, 100_000, 1, 100, 1, 0,
                            "read_on_replica:100 no_replica_up:1", T0, T0.plusSeconds(60), false),
                    new QueryShape("other", "", "", 7, 0, "", 0, 7, 700, 100, 100, 100, 100, 7, 0, 0, 0, "not_a_read:7",
                            T0, T0, true))),
            new Reply.Queries(T0, List.of()));

    @Test
    void everyRequestRoundTrips() {
        for (Request request : REQUESTS) {
            String line = AdminProtocol.encode(request);
            assertThat(line).doesNotContain("\n");
            assertThat(AdminProtocol.decodeRequest(line)).as(line).isEqualTo(new AdminProtocol.Decoded.Valid<>(request));
        }
    }

    @Test
    void everyReplyRoundTrips() {
        for (Reply reply : REPLIES) {
            String line = AdminProtocol.encode(reply);
            assertThat(line).doesNotContain("\n");
            AdminProtocol.Decoded<Reply> decoded = AdminProtocol.decodeReply(line);
            assertThat(decoded).as(line).isInstanceOf(AdminProtocol.Decoded.Valid.class);
            assertThat(((AdminProtocol.Decoded.Valid<Reply>) decoded).message()).as(line).isEqualTo(reply);
        }
    }

    @Test
    void theWireFormIsTheDocumentedOne() {
        assertThat(AdminProtocol.encode(new Request.Sql("1", "SHOW GANTRY STATUS")))
                .isEqualTo("{\"type\":\"sql\",\"id\":\"1\",\"sql\":\"SHOW GANTRY STATUS\"}");
        assertThat(AdminProtocol.encode(new Reply.Event(new TimelineEvent(0, T0, "db2:3306", "down", "refused"))))
                .isEqualTo("{\"type\":\"event\",\"event\":{\"at\":\"2026-11-30T21:00:05.123Z\",\"server\":\"db2:3306\","
                        + "\"kind\":\"down\",\"reason\":\"refused\"}}");
        assertThat(AdminProtocol.encode(new Reply.Event(new TimelineEvent(0, T0, null, "startup", "started", "gantry-b"))))
                .endsWith("\"kind\":\"startup\",\"reason\":\"started\",\"instance\":\"gantry-b\"}}");
        assertThat(AdminProtocol.encode(REPLIES.get(1))).contains("\"rows\":[[\"db1\",3306,true,"
                + "\"2026-11-30T21:00:05.123Z\",0.25,1.50,\"cafe\"],[null,null,null,null,null,null,null]]");
        assertThat(AdminProtocol.encode(new Reply.Done("x", 0, "line one\nline two"))).doesNotContain("\n");
    }

    @Test
    void aServerAndASampleWithoutConnectMsFromAnOlderEngineReadAsNotMeasured() {
        Reply servers = ((AdminProtocol.Decoded.Valid<Reply>) AdminProtocol.decodeReply("{\"type\":\"servers\",\"id\":"
                + "\"1\",\"servers\":[{\"host\":\"db2\",\"port\":3306,\"database\":\"app\",\"user\":\"svc\","
                + "\"weight\":50,\"purpose\":\"proxy\",\"active_cdc\":false,\"health\":\"up\",\"connections\":0,"
                + "\"role\":\"replica\",\"lag_ms\":0,\"rtt_ms\":17.5}]}")).message();
        assertThat(((Reply.Servers) servers).servers()).singleElement()
                .satisfies(s -> assertThat(s.rttMs()).isEqualTo(17.5))
                .satisfies(s -> assertThat(s.connectMs()).isNull());
        Reply health = ((AdminProtocol.Decoded.Valid<Reply>) AdminProtocol.decodeReply("{\"type\":\"health\",\"id\":"
                + "\"2\",\"samples\":[{\"at\":\"2026-11-30T21:00:05.123Z\",\"server\":\"db2:3306\",\"health\":"
                + "\"up\",\"role\":\"replica\",\"rtt_ms\":17.5,\"lag_ms\":0}]}")).message();
        assertThat(((Reply.Health) health).samples()).singleElement()
                .satisfies(s -> assertThat(s.connectMs()).isNull());
    }

    @Test
    void aNumericIdIsReadAndRepeatedAsAString() {
        assertThat(AdminProtocol.decodeRequest("{\"type\":\"ping\",\"id\":42}"))
                .isEqualTo(new AdminProtocol.Decoded.Valid<>(new Request.Ping("42")));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"type\":\"ping\"|malformed_json|not JSON",
            "[1,2]|malformed_json|each line must be one JSON object, not [1,2]",
            "'   '|malformed_json|an empty line",
            "{\"id\":\"1\"}|invalid_request|'type' must be a string naming the message, not missing",
            "{\"type\":\"dance\",\"id\":\"1\"}|unknown_type|unknown request type 'dance'",
            "{\"type\":\"sql\",\"id\":\"1\"}|invalid_request|'sql' must be a string, not missing",
            "{\"type\":\"sql\",\"id\":\"1\",\"sql\":7}|invalid_request|'sql' must be a string, not 7",
            "{\"type\":\"health\",\"id\":\"1\",\"limit\":\"ten\"}|invalid_request|'limit' must be a whole number, not \"ten\"",
            "{\"type\":\"health\",\"id\":\"1\",\"from\":\"yesterday\"}|invalid_request|'from' must be an ISO-8601 time",
            "{\"type\":\"subscribe\",\"id\":\"1\",\"topics\":[\"weather\"]}|invalid_request|unknown topic 'weather'",
            "{\"type\":\"hello\"}|invalid_request|'protocol' must be a whole number, not missing",
            "{\"type\":\"ping\",\"id\":[1]}|invalid_request|'id' must be a string or a whole number",
    })
    void aMalformedRequestIsAValueThatSaysWhatIsWrong(String line, String error, String message) {
        AdminProtocol.Decoded<Request> decoded = AdminProtocol.decodeRequest(line);
        assertThat(decoded).isInstanceOf(AdminProtocol.Decoded.Invalid.class);
        AdminProtocol.Decoded.Invalid<Request> invalid = (AdminProtocol.Decoded.Invalid<Request>) decoded;
        assertThat(invalid.error()).isEqualTo(error);
        assertThat(invalid.message()).startsWith(message);
    }

    @Test
    void anInvalidRequestKeepsItsIdWhenItHasOne() {
        AdminProtocol.Decoded<Request> decoded = AdminProtocol.decodeRequest("{\"type\":\"sql\",\"id\":\"17\"}");
        assertThat(((AdminProtocol.Decoded.Invalid<Request>) decoded).id()).isEqualTo("17");
    }

    @Test
    void flippingAnyByteOfAValidLineNeverThrows() {
        for (Request request : REQUESTS) {
            byte[] line = AdminProtocol.encode(request).getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < line.length; i++) {
                for (int bit = 0; bit < 8; bit++) {
                    byte[] flipped = line.clone();
                    flipped[i] ^= (byte) (1 << bit);
                    assertThat(AdminProtocol.decodeRequest(new String(flipped, StandardCharsets.UTF_8))).isNotNull();
                }
            }
        }
        for (Reply reply : REPLIES) {
            byte[] line = AdminProtocol.encode(reply).getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < line.length; i++) {
                byte[] flipped = line.clone();
                flipped[i] ^= 0x20;
                assertThat(AdminProtocol.decodeReply(new String(flipped, StandardCharsets.UTF_8))).isNotNull();
            }
        }
    }
}
