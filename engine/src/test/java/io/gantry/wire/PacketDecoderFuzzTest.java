package io.gantry.wire;

import static io.gantry.wire.Fuzzing.decodeClearly;
import static io.gantry.wire.Fuzzing.validMutatedOrArbitrary;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Every packet decoder, fed valid encodings, mutated encodings (bytes flipped, set to protocol markers, inserted,
 * deleted, duplicated, cut off, huge length prefixes spliced in) and arbitrary bytes: each decodes or throws
 * {@link MalformedPacketException} naming the field, finishes, and allocates no more than a small multiple of the
 * input (never what a length field announces). Valid encodings also round-trip.
 */
class PacketDecoderFuzzTest {

    /** Decoders copy bytes into strings and arrays; a few times the input is fair, a length field's worth is not. */
    private static final long PER_BYTE = 16;
    private static final int ARBITRARY = 300;

    // ---- connection phase --------------------------------------------------------------------

    @Provide
    Arbitrary<byte[]> clientHandshakes() {
        return validMutatedOrArbitrary(net.jqwik.api.Arbitraries.oneOf(
                WireArbitraries.handshakeResponses().map(r -> Fuzzing.encode(r::encode)),
                WireArbitraries.rawHandshakeResponses(),
                WireArbitraries.sslRequests().map(r -> Fuzzing.encode(r::encode))), ARBITRARY);
    }

    @Property
    void clientHandshakeDecodesOrFailsClearly(@ForAll("clientHandshakes") byte[] input) {
        decodeClearly("ClientHandshake", input, ClientHandshake::decode, PER_BYTE);
        decodeClearly("HandshakeResponse41", input, HandshakeResponse41::decode, PER_BYTE);
        decodeClearly("SSLRequest", input, SslRequest::decode, PER_BYTE);
    }

    @Property
    void handshakeResponseRoundTrips(@ForAll("handshakeResponses") HandshakeResponse41 response) {
        byte[] encoded = Fuzzing.encode(response::encode);
        assertThat(decodeClearly("HandshakeResponse41", encoded, ClientHandshake::decode, PER_BYTE).value())
                .isEqualTo(response);
    }

    @Provide
    Arbitrary<HandshakeResponse41> handshakeResponses() {
        return WireArbitraries.handshakeResponses();
    }

    @Provide
    Arbitrary<byte[]> greetings() {
        return validMutatedOrArbitrary(net.jqwik.api.Arbitraries.oneOf(
                WireArbitraries.greetings().map(g -> Fuzzing.encode(g::encode)), WireArbitraries.rawGreetings()), ARBITRARY);
    }

    @Property
    void greetingDecodesOrFailsClearly(@ForAll("greetings") byte[] input) {
        decodeClearly("HandshakeV10", input, HandshakeV10::decode, PER_BYTE);
    }

    @Property
    void greetingRoundTrips(@ForAll("validGreetings") HandshakeV10 greeting) {
        byte[] encoded = Fuzzing.encode(greeting::encode);
        assertThat(decodeClearly("HandshakeV10", encoded, HandshakeV10::decode, PER_BYTE).value()).isEqualTo(greeting);
    }

    @Provide
    Arbitrary<HandshakeV10> validGreetings() {
        return WireArbitraries.greetings();
    }

    @Provide
    Arbitrary<byte[]> authExchangePackets() {
        return validMutatedOrArbitrary(net.jqwik.api.Arbitraries.oneOf(
                WireArbitraries.okPackets().map(WireArbitraries.OkCase::encoded),
                WireArbitraries.errPackets().map(e -> Fuzzing.encode(e::encode)),
                WireArbitraries.authSwitches().map(a -> Fuzzing.encode(a::encode)),
                WireArbitraries.authMoreData().map(a -> Fuzzing.encode(a::encode))), ARBITRARY);
    }

    @Property
    void authExchangePacketsDecodeOrFailClearly(@ForAll("authExchangePackets") byte[] input,
            @ForAll("capabilityWords") int capabilities) {
        decodeClearly("AuthExchangePacket", input, buf -> AuthExchangePacket.decode(buf, capabilities), PER_BYTE);
        decodeClearly("AuthSwitchRequest", input, AuthSwitchRequest::decode, PER_BYTE);
        decodeClearly("AuthMoreData", input, AuthMoreData::decode, PER_BYTE);
    }

    @Property
    void authPacketsRoundTrip(@ForAll("switches") AuthSwitchRequest request, @ForAll("moreData") AuthMoreData more) {
        assertThat(decodeClearly("AuthSwitchRequest", Fuzzing.encode(request::encode), AuthSwitchRequest::decode,
                PER_BYTE).value()).isEqualTo(request);
        assertThat(decodeClearly("AuthMoreData", Fuzzing.encode(more::encode), AuthMoreData::decode, PER_BYTE).value())
                .isEqualTo(more);
    }

    @Provide
    Arbitrary<AuthSwitchRequest> switches() {
        return WireArbitraries.authSwitches();
    }

    @Provide
    Arbitrary<AuthMoreData> moreData() {
        return WireArbitraries.authMoreData();
    }

    @Provide
    Arbitrary<Integer> capabilityWords() {
        return WireArbitraries.capabilities();
    }

    // ---- command phase: OK, ERR, EOF, column definitions, prepare, change user ----------------

    @Provide
    Arbitrary<byte[]> okPackets() {
        return validMutatedOrArbitrary(net.jqwik.api.Arbitraries.oneOf(
                WireArbitraries.okPackets().map(WireArbitraries.OkCase::encoded), WireArbitraries.rawOkPackets()), ARBITRARY);
    }

    @Property
    void okPacketDecodesOrFailsClearly(@ForAll("okPackets") byte[] input, @ForAll("capabilityWords") int capabilities) {
        decodeClearly("OK", input, buf -> OkPacket.decode(buf, capabilities), PER_BYTE);
        decodeClearly("OK under CLIENT_SESSION_TRACK", input,
                buf -> OkPacket.decode(buf, capabilities | CapabilityFlags.CLIENT_SESSION_TRACK), PER_BYTE);
    }

    @Property
    void okPacketRoundTrips(@ForAll("validOks") WireArbitraries.OkCase ok) {
        assertThat(decodeClearly("OK", ok.encoded(), buf -> OkPacket.decode(buf, ok.capabilities()), PER_BYTE).value())
                .isEqualTo(ok.ok());
    }

    @Provide
    Arbitrary<WireArbitraries.OkCase> validOks() {
        return WireArbitraries.okPackets();
    }

    @Provide
    Arbitrary<byte[]> sessionStateBlocks() {
        return validMutatedOrArbitrary(WireArbitraries.sessionStateChanges().list().ofMaxSize(5)
                .map(changes -> Fuzzing.encode(buf -> SessionStateChange.encodeAll(changes, buf))), ARBITRARY);
    }

    @Property
    void sessionStateInformationDecodesOrFailsClearly(@ForAll("sessionStateBlocks") byte[] input) {
        decodeClearly("OK.session_state_info", input, SessionStateChange::decodeAll, PER_BYTE);
    }

    @Provide
    Arbitrary<byte[]> errAndEofPackets() {
        return validMutatedOrArbitrary(net.jqwik.api.Arbitraries.oneOf(
                WireArbitraries.errPackets().map(e -> Fuzzing.encode(e::encode)),
                WireArbitraries.eofPackets().map(e -> Fuzzing.encode(e::encode))), ARBITRARY);
    }

    @Property
    void errAndEofPacketsDecodeOrFailClearly(@ForAll("errAndEofPackets") byte[] input,
            @ForAll("capabilityWords") int capabilities) {
        decodeClearly("ERR", input, ErrPacket::decode, PER_BYTE);
        decodeClearly("EOF", input, buf -> EofPacket.decode(buf, capabilities), PER_BYTE);
    }

    @Property
    void errAndEofPacketsRoundTrip(@ForAll("errs") ErrPacket err, @ForAll("eofs") EofPacket eof) {
        assertThat(decodeClearly("ERR", Fuzzing.encode(err::encode), ErrPacket::decode, PER_BYTE).value()).isEqualTo(err);
        assertThat(decodeClearly("EOF", Fuzzing.encode(eof::encode), EofPacket::decode, PER_BYTE).value()).isEqualTo(eof);
    }

    @Provide
    Arbitrary<ErrPacket> errs() {
        return WireArbitraries.errPackets();
    }

    @Provide
    Arbitrary<EofPacket> eofs() {
        return WireArbitraries.eofPackets();
    }

    @Provide
    Arbitrary<byte[]> columnDefinitions() {
        return validMutatedOrArbitrary(net.jqwik.api.Arbitraries.oneOf(
                WireArbitraries.columns().map(c -> Fuzzing.encode(c::encode)),
                WireArbitraries.rawColumnDefinitions(),
                WireArbitraries.columns().map(c -> Fuzzing.encode(buf -> c.encode(buf,
                        CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA)))), ARBITRARY);
    }

    @Property
    void columnDefinitionDecodesOrFailsClearly(@ForAll("columnDefinitions") byte[] input) {
        decodeClearly("ColumnDefinition41", input, ColumnDefinition::decode, PER_BYTE);
        decodeClearly("ColumnDefinition41 with extended metadata", input,
                buf -> ColumnDefinition.decode(buf, CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA), PER_BYTE);
        decodeClearly("ColumnDefinition41.insertEmptyExtendedMetadata", input, buf -> {
            ByteBuf out = ColumnDefinition.insertEmptyExtendedMetadata(buf, ByteBufAllocator.DEFAULT);
            int length = out.readableBytes();
            out.release();
            assertThat(length).isEqualTo(input.length + 1);
            return length;
        }, PER_BYTE);
    }

    @Property
    void columnDefinitionRoundTrips(@ForAll("validColumns") ColumnDefinition column) {
        int extended = CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA;
        assertThat(decodeClearly("ColumnDefinition41", Fuzzing.encode(buf -> column.encode(buf, extended)),
                buf -> ColumnDefinition.decode(buf, extended), PER_BYTE).value()).isEqualTo(column);
    }

    @Provide
    Arbitrary<ColumnDefinition> validColumns() {
        return WireArbitraries.columns();
    }

    @Provide
    Arbitrary<byte[]> prepareOks() {
        return validMutatedOrArbitrary(WireArbitraries.prepareOks().map(p -> Fuzzing.encode(p::encode)), 40);
    }

    @Property
    void stmtPrepareOkDecodesOrFailsClearly(@ForAll("prepareOks") byte[] input) {
        decodeClearly("COM_STMT_PREPARE_OK", input, StmtPrepareOk::decode, PER_BYTE);
        decodeClearly("COM_STMT_PREPARE_OK rewrite", input, buf -> {
            StmtPrepareOk.rewriteStatementId(buf, 7);
            return null;
        }, PER_BYTE);
    }

    @Provide
    Arbitrary<byte[]> changeUsers() {
        return validMutatedOrArbitrary(net.jqwik.api.Arbitraries.oneOf(
                WireArbitraries.changeUsers().map(c -> Fuzzing.encode(c::encode)), WireArbitraries.rawChangeUsers()),
                ARBITRARY);
    }

    @Property
    void changeUserDecodesOrFailsClearly(@ForAll("changeUsers") byte[] input, @ForAll("capabilityWords") int capabilities) {
        decodeClearly("COM_CHANGE_USER", input, buf -> ChangeUser.decode(buf, capabilities), PER_BYTE);
    }

    @Property
    void changeUserRoundTrips(@ForAll("validChangeUsers") ChangeUser change) {
        int capabilities = CapabilityFlags.CLIENT_PROTOCOL_41 | CapabilityFlags.CLIENT_SECURE_CONNECTION
                | CapabilityFlags.CLIENT_PLUGIN_AUTH;
        ChangeUser decoded = decodeClearly("COM_CHANGE_USER", Fuzzing.encode(change::encode),
                buf -> ChangeUser.decode(buf, capabilities), PER_BYTE).value();
        assertThat(decoded.username()).isEqualTo(change.username());
        assertThat(decoded.authResponse()).isEqualTo(change.authResponse());
        assertThat(decoded.database()).isEqualTo(change.database());
        assertThat(decoded.characterSet()).isEqualTo(change.characterSet());
        assertThat(decoded.authPluginName()).isEqualTo(change.authPluginName());
    }

    @Provide
    Arbitrary<ChangeUser> validChangeUsers() {
        return WireArbitraries.changeUsers();
    }

    // ---- the primitives every decoder stands on ----------------------------------------------

    @Property
    void lengthEncodedValuesAreCheckedAgainstTheBytesLeft(@ForAll("lengthEncoded") byte[] input) {
        decodeClearly("string<lenenc>", input, buf -> Buffers.readLenEncBytes(buf, "field"), PER_BYTE);
        decodeClearly("string<NUL>", input, buf -> Buffers.readNulTerminatedBytes(buf, "field"), PER_BYTE);
        decodeClearly("int<lenenc> or NULL", input, buf -> Buffers.readNullableLenEncInt(buf, "field"), PER_BYTE);
        decodeClearly("command type", input, CommandType::of, PER_BYTE);
    }

    @Provide
    Arbitrary<byte[]> lengthEncoded() {
        return validMutatedOrArbitrary(WireArbitraries.bytes(300).map(b -> Fuzzing.encode(buf ->
                Buffers.writeLenEncBytes(buf, b))), 40);
    }

    /** The decoders never consume from or release the buffer they were handed beyond what they read. */
    @Property
    void decodingLeavesTheBufferReadable(@ForAll("okPackets") byte[] input) {
        ByteBuf buf = Unpooled.wrappedBuffer(input);
        try {
            OkPacket.decode(buf, CapabilityFlags.CLIENT_PROTOCOL_41);
        } catch (MalformedPacketException expected) {
            // judged elsewhere
        }
        assertThat(buf.refCnt()).isEqualTo(1);
        assertThat(buf.readerIndex()).isBetween(0, input.length);
        buf.release();
    }
}
