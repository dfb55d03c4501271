package io.gantry.wire;

import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_ATTRS;
import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_WITH_DB;
import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static io.gantry.wire.CapabilityFlags.CLIENT_SESSION_TRACK;
import static io.gantry.wire.CapabilityFlags.CLIENT_SSL;
import static io.gantry.wire.CapabilityFlags.CLIENT_TRANSACTIONS;
import static io.gantry.wire.CapabilityFlags.CLIENT_ZSTD_COMPRESSION_ALGORITHM;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/** Valid packet records of every kind the fuzz tests start from (their encodings are then mutated). */
public final class WireArbitraries {

    private WireArbitraries() {
    }

    /** Capability words: arbitrary bits, with the common ones set more often than chance. */
    public static Arbitrary<Integer> capabilities() {
        Arbitrary<Integer> typical = Arbitraries.integers().map(bits -> bits | CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION
                | CLIENT_PLUGIN_AUTH | CLIENT_TRANSACTIONS);
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(3, typical), net.jqwik.api.Tuple.of(1, Arbitraries.integers()));
    }

    /** Text without NUL: ASCII letters and punctuation and a few multi-byte characters. */
    public static Arbitrary<String> text(int maxLength) {
        return Arbitraries.strings().withCharRange(' ', '~').withChars('é', '€', '中', '\n').ofMaxLength(maxLength);
    }

    public static Arbitrary<byte[]> bytes(int maxLength) {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(maxLength);
    }

    private static Arbitrary<byte[]> bytesWithoutNul(int maxLength) {
        return Arbitraries.bytes().filter(b -> b != 0).array(byte[].class).ofMaxSize(maxLength);
    }

    private static Arbitrary<Long> unsignedLongs() {
        return Arbitraries.oneOf(Arbitraries.longs().between(0, 300), Arbitraries.longs(),
                Arbitraries.of(250L, 251L, 65535L, 65536L, 0xFFFFFFL, 0x1000000L, -1L));
    }

    public static Arbitrary<HandshakeResponse41> handshakeResponses() {
        return handshakeResponsesGenerated().withoutEdgeCases();
    }

    private static Arbitrary<HandshakeResponse41> handshakeResponsesGenerated() {
        return capabilities().map(c -> c | CLIENT_PROTOCOL_41).flatMap(caps -> {
            Arbitrary<byte[]> auth;
            if ((caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA) != 0) {
                auth = bytes(300);
            } else if ((caps & CLIENT_SECURE_CONNECTION) != 0) {
                auth = bytes(255);
            } else {
                auth = bytesWithoutNul(40);
            }
            Arbitrary<String> database = (caps & CLIENT_CONNECT_WITH_DB) != 0 ? text(20) : Arbitraries.just("");
            Arbitrary<String> plugin = (caps & CLIENT_PLUGIN_AUTH) != 0
                    ? Arbitraries.oneOf(Arbitraries.of("mysql_native_password", "caching_sha2_password"), text(30))
                    : Arbitraries.just("");
            Arbitrary<Map<String, String>> attributes = (caps & CLIENT_CONNECT_ATTRS) != 0
                    ? Arbitraries.maps(text(10), text(20)).ofMaxSize(4).map(LinkedHashMap::new)
                    : Arbitraries.just(Map.of());
            Arbitrary<Integer> zstd = (caps & CLIENT_ZSTD_COMPRESSION_ALGORITHM) != 0
                    ? Arbitraries.integers().between(0, 255) : Arbitraries.just(0);
            Arbitrary<Integer> mariaDb = (caps & CLIENT_MYSQL) != 0 ? Arbitraries.just(0) : Arbitraries.integers();
            Arbitrary<long[]> numbers = Combinators.combine(Arbitraries.longs().between(0, 0xFFFF_FFFFL),
                    Arbitraries.integers().between(0, 255)).as((max, charset) -> new long[] {max, charset});
            return Combinators.combine(numbers, mariaDb, text(32), auth, database, plugin, attributes, zstd)
                    .as((n, m, user, a, db, p, attrs, z) -> new HandshakeResponse41(caps, n[0], (int) n[1], m, user, a,
                            db, p, attrs, z));
        });
    }

    public static Arbitrary<SslRequest> sslRequests() {
        return sslRequestsGenerated().withoutEdgeCases();
    }

    private static Arbitrary<SslRequest> sslRequestsGenerated() {
        return Combinators.combine(capabilities().map(c -> c | CLIENT_SSL | CLIENT_PROTOCOL_41),
                Arbitraries.longs().between(0, 0xFFFF_FFFFL), Arbitraries.integers().between(0, 255),
                Arbitraries.integers())
                .as((caps, max, charset, mariaDb) -> new SslRequest(caps, max, charset,
                        (caps & CLIENT_MYSQL) != 0 ? 0 : mariaDb));
    }

    public static Arbitrary<HandshakeV10> greetings() {
        return greetingsGenerated().withoutEdgeCases();
    }

    private static Arbitrary<HandshakeV10> greetingsGenerated() {
        return capabilities().flatMap(caps -> {
            Arbitrary<byte[]> seed;
            if ((caps & CLIENT_SECURE_CONNECTION) == 0) {
                seed = Arbitraries.bytes().array(byte[].class).ofSize(8);
            } else if ((caps & CLIENT_PLUGIN_AUTH) == 0) {
                seed = Arbitraries.bytes().array(byte[].class).ofSize(20);
            } else {
                seed = Arbitraries.bytes().array(byte[].class).ofMinSize(8).ofMaxSize(254);
            }
            Arbitrary<String> plugin = (caps & CLIENT_PLUGIN_AUTH) != 0
                    ? Arbitraries.oneOf(Arbitraries.of("mysql_native_password", "caching_sha2_password"), text(30))
                    : Arbitraries.just("");
            Arbitrary<Integer> mariaDb = (caps & CLIENT_MYSQL) != 0 ? Arbitraries.just(0) : Arbitraries.integers();
            return Combinators.combine(text(40), Arbitraries.longs().between(0, 0xFFFF_FFFFL), seed,
                    Arbitraries.integers().between(0, 255), Arbitraries.integers().between(0, 0xFFFF), mariaDb, plugin)
                    .as((version, id, s, charset, status, m, p) -> new HandshakeV10(version, id, s, caps, charset,
                            status, m, p));
        });
    }

    // ---- raw layouts: every field arbitrary, lengths that may disagree with what follows ------

    /** A length the packet announces: usually the true one, sometimes off by a little, sometimes anything. */
    private static Arbitrary<Long> declaredLength(int actual) {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, Arbitraries.just((long) actual)),
                net.jqwik.api.Tuple.of(2, Arbitraries.longs().between(Math.max(0, actual - 2), actual + 2)),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(250L, 251L, 0xFFFFL, 0xFFFFFFL, 0x7FFF_FFFFL, -1L)));
    }

    /** {@code string<lenenc>} whose length prefix may lie. */
    private static Arbitrary<byte[]> lenEncField(Arbitrary<byte[]> content) {
        return content.flatMap(bytes -> declaredLength(bytes.length).map(length -> Fuzzing.encode(buf -> {
            Buffers.writeLenEncInt(buf, length);
            buf.writeBytes(bytes);
        })));
    }

    /** A one-byte length and content, the length possibly wrong. */
    private static Arbitrary<byte[]> int1LengthField(Arbitrary<byte[]> content) {
        return content.flatMap(bytes -> Arbitraries.oneOf(Arbitraries.just(bytes.length & 0xFF),
                Arbitraries.integers().between(0, 255)).map(length -> Fuzzing.encode(buf -> {
                    buf.writeByte(length);
                    buf.writeBytes(bytes);
                })));
    }

    /** NUL-terminated content, the terminator sometimes missing. */
    private static Arbitrary<byte[]> nulField(Arbitrary<byte[]> content) {
        return Combinators.combine(content, Arbitraries.integers().between(0, 9)).as((bytes, r) -> Fuzzing.encode(buf -> {
            buf.writeBytes(bytes);
            if (r > 0) {
                buf.writeByte(0);
            }
        }));
    }

    private static Arbitrary<byte[]> concat(List<Arbitrary<byte[]>> parts) {
        return Combinators.combine(parts).as(list -> Fuzzing.encode(buf -> list.forEach(buf::writeBytes)));
    }

    private static Arbitrary<byte[]> fixed(int length) {
        return Arbitraries.bytes().array(byte[].class).ofSize(length);
    }

    private static Arbitrary<byte[]> int4(Arbitrary<Integer> value) {
        return value.map(v -> Fuzzing.encode(buf -> buf.writeIntLE(v)));
    }

    /** HandshakeV10 laid out field by field, each field arbitrary: capabilities, lengths and seed parts disagree. */
    public static Arbitrary<byte[]> rawGreetings() {
        return rawGreetingsGenerated().withoutEdgeCases();
    }

    private static Arbitrary<byte[]> rawGreetingsGenerated() {
        Arbitrary<byte[]> head = Combinators.combine(Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(9, Arbitraries.just(10)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 255))), bytesWithoutNul(30))
                .as((protocol, version) -> Fuzzing.encode(buf -> {
                    buf.writeByte(protocol);
                    buf.writeBytes(version);
                    buf.writeByte(0);
                }));
        Arbitrary<byte[]> middle = Combinators.combine(fixed(4 + 8 + 1), capabilities(), fixed(3),
                Arbitraries.oneOf(Arbitraries.integers().between(0, 255), Arbitraries.of(0, 8, 9, 20, 21, 22, 255)),
                fixed(6 + 4)).as((idSeedFiller, caps, charsetStatus, dataLength, reserved) -> Fuzzing.encode(buf -> {
                    buf.writeBytes(idSeedFiller);
                    buf.writeShortLE(caps);
                    buf.writeBytes(charsetStatus);
                    buf.writeShortLE(caps >>> 16);
                    buf.writeByte(dataLength);
                    buf.writeBytes(reserved);
                }));
        return concat(List.of(head, middle, bytes(40), nulField(text(30).map(s -> s.getBytes(java.nio.charset.StandardCharsets.UTF_8)))));
    }

    /** HandshakeResponse41 laid out field by field under arbitrary capabilities, lengths possibly lying. */
    public static Arbitrary<byte[]> rawHandshakeResponses() {
        return rawHandshakeResponsesGenerated().withoutEdgeCases();
    }

    private static Arbitrary<byte[]> rawHandshakeResponsesGenerated() {
        Arbitrary<byte[]> fixedPart = Combinators.combine(capabilities(), fixed(4 + 1 + 19 + 4))
                .as((caps, rest) -> Fuzzing.encode(buf -> {
                    buf.writeIntLE(caps);
                    buf.writeBytes(rest);
                }));
        Arbitrary<byte[]> auth = Arbitraries.oneOf(lenEncField(bytes(40)), int1LengthField(bytes(40)), nulField(bytes(20)));
        Arbitrary<byte[]> attributes = lenEncField(Arbitraries.oneOf(lenEncField(bytes(10)), lenEncField(bytes(10))
                .list().ofMaxSize(6).map(list -> Fuzzing.encode(buf -> list.forEach(buf::writeBytes)))));
        return concat(List.of(fixedPart, nulField(bytesWithoutNul(20)), auth, nulField(bytesWithoutNul(20)),
                nulField(bytesWithoutNul(25)), attributes, bytes(2)));
    }

    /** COM_CHANGE_USER laid out field by field, the auth length possibly lying. */
    public static Arbitrary<byte[]> rawChangeUsers() {
        return rawChangeUsersGenerated().withoutEdgeCases();
    }

    private static Arbitrary<byte[]> rawChangeUsersGenerated() {
        return concat(List.of(Arbitraries.just(new byte[] {0x11}), nulField(bytesWithoutNul(20)),
                Arbitraries.oneOf(int1LengthField(bytes(40)), nulField(bytes(20))), nulField(bytesWithoutNul(20)),
                bytes(2), nulField(bytesWithoutNul(25)), lenEncField(bytes(30))));
    }

    /** ColumnDefinition41 laid out field by field: six names, an extended-metadata block and the fixed fields. */
    public static Arbitrary<byte[]> rawColumnDefinitions() {
        return rawColumnDefinitionsGenerated().withoutEdgeCases();
    }

    private static Arbitrary<byte[]> rawColumnDefinitionsGenerated() {
        Arbitrary<byte[]> name = lenEncField(bytes(12));
        Arbitrary<byte[]> extended = lenEncField(concat(List.of(bytes(1), lenEncField(bytes(8)))));
        Arbitrary<byte[]> fixedLength = Arbitraries.oneOf(Arbitraries.just(new byte[] {0x0C}),
                Arbitraries.integers().between(0, 255).map(b -> new byte[] {(byte) (int) b}));
        return concat(List.of(name, name, name, name, name, name,
                Arbitraries.oneOf(extended, Arbitraries.just(new byte[0])), fixedLength, bytes(14)));
    }

    /** An OK packet laid out field by field, the info and session state lengths possibly lying. */
    public static Arbitrary<byte[]> rawOkPackets() {
        return rawOkPacketsGenerated().withoutEdgeCases();
    }

    private static Arbitrary<byte[]> rawOkPacketsGenerated() {
        Arbitrary<byte[]> state = lenEncField(concat(List.of(bytes(1), lenEncField(concat(List.of(
                lenEncField(bytes(10)), lenEncField(bytes(10))))))).list().ofMaxSize(3)
                .map(list -> Fuzzing.encode(buf -> list.forEach(buf::writeBytes))));
        return concat(List.of(Arbitraries.of(new byte[] {0x00}, new byte[] {(byte) 0xFE}),
                lenEncField(Arbitraries.just(new byte[0])).map(b -> b.length == 1 ? b : new byte[] {b[0]}),
                Arbitraries.just(new byte[] {0}), Arbitraries.integers().between(0, 0xFFFF)
                        .map(s -> Fuzzing.encode(buf -> buf.writeShortLE(s | ServerStatus.SERVER_SESSION_STATE_CHANGED))),
                bytes(2), lenEncField(bytes(20)), state));
    }

    public static Arbitrary<SessionStateChange> sessionStateChanges() {
        return sessionStateChangesGenerated().withoutEdgeCases();
    }

    private static Arbitrary<SessionStateChange> sessionStateChangesGenerated() {
        return Arbitraries.oneOf(
                Combinators.combine(text(16), text(30)).as(SessionStateChange.SystemVariable::new),
                text(20).map(SessionStateChange.Schema::new),
                Arbitraries.just(new SessionStateChange.StateChange("1")),
                Combinators.combine(Arbitraries.integers().between(0, 255), text(60)).as(SessionStateChange.Gtids::new),
                text(40).map(SessionStateChange.TransactionCharacteristics::new),
                Arbitraries.of("T_______", "________", "T___W___").map(SessionStateChange.TransactionState::new));
    }

    /** An OK packet and capabilities under which it encodes and decodes back to itself. */
    public record OkCase(OkPacket ok, int capabilities) {
        public byte[] encoded() {
            return Fuzzing.encode(buf -> ok.encode(buf, capabilities));
        }
    }

    public static Arbitrary<OkCase> okPackets() {
        return okPacketsGenerated().withoutEdgeCases();
    }

    private static Arbitrary<OkCase> okPacketsGenerated() {
        return capabilities().flatMap(caps -> {
            boolean protocol41 = (caps & CLIENT_PROTOCOL_41) != 0;
            boolean status = protocol41 || (caps & CLIENT_TRANSACTIONS) != 0;
            boolean track = (caps & CLIENT_SESSION_TRACK) != 0;
            Arbitrary<Integer> statusFlags = status ? Arbitraries.integers().between(0, 0xFFFF) : Arbitraries.just(0);
            Arbitrary<Integer> warnings = protocol41 ? Arbitraries.integers().between(0, 0xFFFF) : Arbitraries.just(0);
            // Session state travels only where the status flags that announce it are on the wire.
            Arbitrary<List<SessionStateChange>> changes = track && status
                    ? sessionStateChanges().list().ofMaxSize(4) : Arbitraries.just(List.of());
            return Combinators.combine(Arbitraries.of(false, true), unsignedLongs(), unsignedLongs(), statusFlags,
                    warnings, text(40), changes)
                    .as((eof, affected, insertId, s, w, info, c) -> {
                        int flags = c.isEmpty() ? s : s | ServerStatus.SERVER_SESSION_STATE_CHANGED;
                        List<SessionStateChange> kept = ServerStatus.has(flags, ServerStatus.SERVER_SESSION_STATE_CHANGED)
                                ? c : List.of();
                        return new OkCase(new OkPacket(eof, affected, insertId, flags, w, info, kept), caps);
                    });
        });
    }

    public static Arbitrary<ErrPacket> errPackets() {
        return errPacketsGenerated().withoutEdgeCases();
    }

    private static Arbitrary<ErrPacket> errPacketsGenerated() {
        Arbitrary<String> sqlState = Arbitraries.strings().withCharRange('0', 'Z').ofLength(5);
        return Combinators.combine(Arbitraries.integers().between(0, 0xFFFE), sqlState, text(80)).as(ErrPacket::new);
    }

    public static Arbitrary<EofPacket> eofPackets() {
        return eofPacketsGenerated().withoutEdgeCases();
    }

    private static Arbitrary<EofPacket> eofPacketsGenerated() {
        return Combinators.combine(Arbitraries.integers().between(0, 0xFFFF), Arbitraries.integers().between(0, 0xFFFF))
                .as(EofPacket::new);
    }

    public static Arbitrary<ColumnDefinition> columns() {
        return columnsGenerated().withoutEdgeCases();
    }

    private static Arbitrary<ColumnDefinition> columnsGenerated() {
        Arbitrary<String> name = text(20);
        Arbitrary<String[]> names = Combinators.combine(name, name, name, name, name, name)
                .as((a, b, c, d, e, f) -> new String[] {a, b, c, d, e, f});
        Arbitrary<long[]> numbers = Combinators.combine(Arbitraries.integers().between(0, 0xFFFF),
                Arbitraries.longs().between(0, 0xFFFF_FFFFL), Arbitraries.integers().between(0, 255),
                Arbitraries.integers().between(0, 0xFFFF), Arbitraries.integers().between(0, 255))
                .as((cs, len, type, flags, dec) -> new long[] {cs, len, type, flags, dec});
        return Combinators.combine(names, numbers, Arbitraries.of("", "uuid", "inet6", "point"), Arbitraries.of("", "json"))
                .as((n, x, typeName, format) -> new ColumnDefinition(n[0], n[1], n[2], n[3], n[4], n[5], (int) x[0], x[1],
                        (int) x[2], (int) x[3], (int) x[4], typeName, format));
    }

    public static Arbitrary<ChangeUser> changeUsers() {
        return changeUsersGenerated().withoutEdgeCases();
    }

    private static Arbitrary<ChangeUser> changeUsersGenerated() {
        return Combinators.combine(text(32), bytes(255), text(20), Arbitraries.integers().between(0, 255), text(30))
                .as(ChangeUser::new);
    }

    public static Arbitrary<StmtPrepareOk> prepareOks() {
        return prepareOksGenerated().withoutEdgeCases();
    }

    private static Arbitrary<StmtPrepareOk> prepareOksGenerated() {
        return Combinators.combine(Arbitraries.longs().between(0, 0xFFFF_FFFFL), Arbitraries.integers().between(0, 0xFFFF),
                Arbitraries.integers().between(0, 0xFFFF), Arbitraries.integers().between(0, 0xFFFF))
                .as(StmtPrepareOk::new);
    }

    public static Arbitrary<AuthSwitchRequest> authSwitches() {
        return authSwitchesGenerated().withoutEdgeCases();
    }

    private static Arbitrary<AuthSwitchRequest> authSwitchesGenerated() {
        return Combinators.combine(Arbitraries.oneOf(Arbitraries.of("mysql_native_password", "caching_sha2_password"),
                text(30)), bytes(40)).as(AuthSwitchRequest::new);
    }

    public static Arbitrary<AuthMoreData> authMoreData() {
        return authMoreDataGenerated().withoutEdgeCases();
    }

    private static Arbitrary<AuthMoreData> authMoreDataGenerated() {
        return bytes(600).map(AuthMoreData::new);
    }
}
