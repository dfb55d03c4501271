package io.gantry.proxy.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.wire.Buffers;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.CommandType;
import io.gantry.wire.OkPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.gantry.wire.ServerStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The rewriters of result rows, over the packets a server sends (text protocol, CLIENT_DEPRECATE_EOF): which rows
 * change, and that every other byte stays as the server sent it.
 */
class ResultRowRewritersTest {

    private static final int CAPABILITIES = CapabilityFlags.CLIENT_PROTOCOL_41 | CapabilityFlags.CLIENT_DEPRECATE_EOF;

    @Test
    void processListRowsOfGantrySessionsShowTheirIds() {
        List<List<String>> rows = run(new ProcesslistIds(() -> Map.of(285L, 80L), ByteBufAllocator.DEFAULT),
                List.of("Id", "User", "Info"),
                List.of(List.of("285", "app", "SHOW PROCESSLIST"), List.of("7", "system user", "")));
        assertThat(rows).containsExactly(List.of("80", "app", "SHOW PROCESSLIST"), List.of("7", "system user", ""));
    }

    @Test
    void theIdColumnIsFoundWhereverItIs() {
        List<List<String>> rows = run(new ProcesslistIds(() -> Map.of(285L, 80L), ByteBufAllocator.DEFAULT),
                List.of("USER", "ID"), List.of(List.of("app", "285")));
        assertThat(rows).containsExactly(List.of("app", "80"));
    }

    @Test
    void aResultWithoutAnIdColumnPassesUnchanged() {
        List<List<String>> rows = run(new ProcesslistIds(() -> Map.of(285L, 80L), ByteBufAllocator.DEFAULT),
                List.of("processlist", "n"), List.of(List.of("285", "285")));
        assertThat(rows).containsExactly(List.of("285", "285"));
    }

    @Test
    void plaintextClientsReadEmptySslStatusWhateverTheServerSays() {
        List<List<String>> rows = run(SslStatusRows.of(null, true, ByteBufAllocator.DEFAULT),
                List.of("Variable_name", "Value"), List.of(List.of("Ssl_accepts", "7"),
                        List.of("Ssl_cipher", "TLS_AES_256_GCM_SHA384"), List.of("Ssl_version", "TLSv1.3"),
                        List.of("Ssl_server_not_after", "Dec  2 15:26:51 2036 GMT")));
        assertThat(rows).containsExactly(List.of("Ssl_accepts", "7"), List.of("Ssl_cipher", ""),
                List.of("Ssl_version", ""), List.of("Ssl_server_not_after", ""));
    }

    @Test
    void onMySqlTheCertificateDatesAreTheServersForEveryConnection() {
        List<List<String>> rows = run(SslStatusRows.of(null, false, ByteBufAllocator.DEFAULT),
                List.of("VARIABLE_NAME", "VARIABLE_VALUE"), List.of(List.of("SSL_CIPHER", "x"),
                        List.of("Ssl_server_not_after", "Dec  2 15:26:51 2036 GMT")));
        assertThat(rows).containsExactly(List.of("SSL_CIPHER", ""),
                List.of("Ssl_server_not_after", "Dec  2 15:26:51 2036 GMT"));
    }

    @Test
    void theMoreResultsFlagIsSetInPlaceInAnOkThatEndsAResult() {
        ByteBuf ok = Unpooled.buffer();
        OkPacket.of(3, 300, ServerStatus.SERVER_STATUS_AUTOCOMMIT, 1).encode(ok, CAPABILITIES);
        ServerStatus.markMoreResults(ok);
        OkPacket decoded = OkPacket.decode(ok.duplicate(), CAPABILITIES);
        assertThat(decoded.statusFlags()).isEqualTo(ServerStatus.SERVER_STATUS_AUTOCOMMIT
                | ServerStatus.SERVER_MORE_RESULTS_EXISTS);
        assertThat(decoded.affectedRows()).isEqualTo(3);
        assertThat(decoded.lastInsertId()).isEqualTo(300);
    }

    /** Feeds a result set through {@code rewriter} as the forwarder would, and reads the rows it lets out. */
    private static List<List<String>> run(ResponseForwarder.ResponseRewriter rewriter, List<String> columns,
                                          List<List<String>> rows) {
        ResponseFraming framing = ResponseFraming.forCommand(CommandType.COM_QUERY, CAPABILITIES);
        List<ByteBuf> packets = new ArrayList<>();
        ByteBuf count = Unpooled.buffer();
        Buffers.writeLenEncInt(count, columns.size());
        packets.add(count);
        for (String column : columns) {
            ByteBuf definition = Unpooled.buffer();
            ColumnDefinition.text("information_schema", "PROCESSLIST", column).encode(definition);
            packets.add(definition);
        }
        for (List<String> row : rows) {
            ByteBuf payload = Unpooled.buffer();
            row.forEach(value -> Buffers.writeLenEncString(payload, value));
            packets.add(payload);
        }
        ByteBuf end = Unpooled.buffer();
        OkPacket.of(0, 0, ServerStatus.SERVER_STATUS_AUTOCOMMIT, 0).encode(end, CAPABILITIES);
        end.setByte(0, OkPacket.EOF_HEADER);
        packets.add(end);
        List<List<String>> out = new ArrayList<>();
        int sequence = 1;
        for (ByteBuf payload : packets) {
            framing.accept(payload.duplicate());
            Packet rewritten = rewriter.rewrite(new Packet(sequence++, payload), framing);
            if (framing.lastPacketKind() == ResponseFraming.PacketKind.ROW) {
                ByteBuf row = rewritten.payload().duplicate();
                List<String> values = new ArrayList<>();
                while (row.isReadable()) {
                    values.add(Buffers.readLenEncString(row, "value"));
                }
                out.add(values);
            }
        }
        assertThat(framing.isComplete()).isTrue();
        return out;
    }
}
