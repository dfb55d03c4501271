package io.gantry.proxy.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.wire.BinaryRows;
import io.gantry.wire.Buffers;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.ColumnDefinition.FieldType;
import io.gantry.wire.CommandType;
import io.gantry.wire.OkPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.gantry.wire.ServerStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The rewriters of result rows, over the packets a server sends (CLIENT_DEPRECATE_EOF), text rows after COM_QUERY and
 * binary rows after COM_STMT_EXECUTE and COM_STMT_FETCH: which rows change, and that every other byte stays as the
 * server sent it.
 */
class ResultRowRewritersTest {

    private static final int CAPABILITIES = CapabilityFlags.CLIENT_PROTOCOL_41 | CapabilityFlags.CLIENT_DEPRECATE_EOF;

    @Test
    void processListRowsOfGantrySessionsShowTheirIds() {
        List<List<String>> rows = run(new ProcesslistIds(() -> Map.of(285L, 80L), 0, ByteBufAllocator.DEFAULT),
                List.of("Id", "User", "Info"),
                List.of(List.of("285", "app", "SHOW PROCESSLIST"), List.of("7", "system user", "")));
        assertThat(rows).containsExactly(List.of("80", "app", "SHOW PROCESSLIST"), List.of("7", "system user", ""));
    }

    @Test
    void theIdColumnIsFoundWhereverItIs() {
        List<List<String>> rows = run(new ProcesslistIds(() -> Map.of(285L, 80L), 0, ByteBufAllocator.DEFAULT),
                List.of("USER", "ID"), List.of(List.of("app", "285")));
        assertThat(rows).containsExactly(List.of("app", "80"));
    }

    @Test
    void aResultWithoutAnIdColumnPassesUnchanged() {
        List<List<String>> rows = run(new ProcesslistIds(() -> Map.of(285L, 80L), 0, ByteBufAllocator.DEFAULT),
                List.of("processlist", "n"), List.of(List.of("285", "285")));
        assertThat(rows).containsExactly(List.of("285", "285"));
    }

    @Test
    void plaintextClientsReadEmptySslStatusWhateverTheServerSays() {
        List<List<String>> rows = run(SslStatusRows.of(null, true, 0, ByteBufAllocator.DEFAULT),
                List.of("Variable_name", "Value"), List.of(List.of("Ssl_accepts", "7"),
                        List.of("Ssl_cipher", "TLS_AES_256_GCM_SHA384"), List.of("Ssl_version", "TLSv1.3"),
                        List.of("Ssl_server_not_after", "Dec  2 15:26:51 2036 GMT")));
        assertThat(rows).containsExactly(List.of("Ssl_accepts", "7"), List.of("Ssl_cipher", ""),
                List.of("Ssl_version", ""), List.of("Ssl_server_not_after", ""));
    }

    @Test
    void onMySqlTheCertificateDatesAreTheServersForEveryConnection() {
        List<List<String>> rows = run(SslStatusRows.of(null, false, 0, ByteBufAllocator.DEFAULT),
                List.of("VARIABLE_NAME", "VARIABLE_VALUE"), List.of(List.of("SSL_CIPHER", "x"),
                        List.of("Ssl_server_not_after", "Dec  2 15:26:51 2036 GMT")));
        assertThat(rows).containsExactly(List.of("SSL_CIPHER", ""),
                List.of("Ssl_server_not_after", "Dec  2 15:26:51 2036 GMT"));
    }

    @Test
    void preparedSslStatusRowsOfAPlaintextClientAreEmptyToo() {
        List<ColumnDefinition> columns = List.of(text("Variable_name"), text("Value"));
        List<ByteBuf> rows = execute(SslStatusRows.of(null, true, 0, ByteBufAllocator.DEFAULT), columns,
                BinaryRows.encode(columns, "Ssl_accepts", "7"),
                BinaryRows.encode(columns, "Ssl_cipher", "TLS_AES_128_GCM_SHA256"),
                BinaryRows.encode(columns, "Ssl_version", null));
        assertThat(rows).extracting(row -> BinaryRows.decode(columns, row)).containsExactly(
                List.of("Ssl_accepts", "7"), List.of("Ssl_cipher", ""), List.of("Ssl_version", ""));
    }

    @Test
    void preparedProcessListRowsOfGantrySessionsShowTheirIds() {
        List<ColumnDefinition> columns = List.of(
                ColumnDefinition.numeric("", "", "Id", FieldType.LONGLONG),
                text("User"),
                ColumnDefinition.numeric("", "", "Time", FieldType.LONG),
                text("Info"),
                ColumnDefinition.numeric("", "", "Progress", FieldType.DOUBLE));
        List<ByteBuf> rows = execute(new ProcesslistIds(() -> Map.of(285L, 80L), 0, ByteBufAllocator.DEFAULT),
                columns, BinaryRows.encode(columns, 285L, "app", 3, null, 0.0),
                BinaryRows.encode(columns, 7L, "system user", 40, "SHOW PROCESSLIST", 0.5));
        assertThat(rows).extracting(row -> BinaryRows.decode(columns, row)).containsExactly(
                Arrays.asList(80L, "app", 3L, null, 0.0), Arrays.asList(7L, "system user", 40L, "SHOW PROCESSLIST",
                        0.5));
    }

    @Test
    void aBinaryRowOfAnotherShapePassesUnchanged() {
        List<ColumnDefinition> columns = List.of(text("Variable_name"), text("Value"));
        ByteBuf cut = BinaryRows.encode(columns, "Ssl_cipher", "TLS_AES_128_GCM_SHA256");
        cut.writerIndex(4); // the name itself cut short
        ByteBuf textRow = Unpooled.buffer();
        Buffers.writeLenEncString(textRow, "Ssl_cipher");
        Buffers.writeLenEncString(textRow, "TLS_AES_128_GCM_SHA256");
        byte[] cutBytes = ByteBufUtil.getBytes(cut);
        byte[] textBytes = ByteBufUtil.getBytes(textRow);
        List<ByteBuf> rows = execute(SslStatusRows.of(null, true, 0, ByteBufAllocator.DEFAULT), columns, cut,
                textRow);
        assertThat(rows).containsExactly(cut, textRow);
        assertThat(ByteBufUtil.getBytes(rows.get(0))).isEqualTo(cutBytes);
        assertThat(ByteBufUtil.getBytes(rows.get(1))).isEqualTo(textBytes);

        List<ColumnDefinition> numbers = List.of(text("Variable_name"),
                ColumnDefinition.numeric("", "", "Value", FieldType.DOUBLE));
        ByteBuf counter = BinaryRows.encode(numbers, "Ssl_verify_mode", 5.0);
        assertThat(execute(SslStatusRows.of(null, true, 0, ByteBufAllocator.DEFAULT), numbers, counter))
                .as("a value column of a type not read as text: not the status rows").containsExactly(counter);
    }

    @Test
    void theRowsOfACursorAreCorrectedWhenTheyAreFetched() {
        List<ColumnDefinition> columns = List.of(text("VARIABLE_NAME"), text("VARIABLE_VALUE"));
        ResponseForwarder.ResponseRewriter rewriter = SslStatusRows.of(null, true, 0, ByteBufAllocator.DEFAULT);
        ResponseFraming execute = ResponseFraming.forCommand(CommandType.COM_STMT_EXECUTE, CAPABILITIES);
        List<ByteBuf> metadata = new ArrayList<>(header(columns));
        metadata.add(end(ServerStatus.SERVER_STATUS_AUTOCOMMIT | ServerStatus.SERVER_STATUS_CURSOR_EXISTS));
        assertThat(feed(rewriter, execute, metadata)).isEmpty();

        ResponseFraming fetch = ResponseFraming.forCommand(CommandType.COM_STMT_FETCH, CAPABILITIES);
        List<ByteBuf> rows = feed(rewriter, fetch, List.of(BinaryRows.encode(columns, "SSL_CIPHER", "x"),
                end(ServerStatus.SERVER_STATUS_AUTOCOMMIT | ServerStatus.SERVER_STATUS_LAST_ROW_SENT)));
        assertThat(rows).extracting(row -> BinaryRows.decode(columns, row))
                .containsExactly(List.of("SSL_CIPHER", ""));
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

    /** Feeds a text result set through {@code rewriter} as the forwarder would, and reads the rows it lets out. */
    private static List<List<String>> run(ResponseForwarder.ResponseRewriter rewriter, List<String> columns,
                                          List<List<String>> rows) {
        List<ColumnDefinition> definitions = columns.stream().map(ResultRowRewritersTest::text).toList();
        List<ByteBuf> packets = new ArrayList<>(header(definitions));
        for (List<String> row : rows) {
            ByteBuf payload = Unpooled.buffer();
            row.forEach(value -> Buffers.writeLenEncString(payload, value));
            packets.add(payload);
        }
        packets.add(end(ServerStatus.SERVER_STATUS_AUTOCOMMIT));
        List<List<String>> out = new ArrayList<>();
        for (ByteBuf payload : feed(rewriter, ResponseFraming.forCommand(CommandType.COM_QUERY, CAPABILITIES),
                packets)) {
            ByteBuf row = payload.duplicate();
            List<String> values = new ArrayList<>();
            while (row.isReadable()) {
                values.add(Buffers.readLenEncString(row, "value"));
            }
            out.add(values);
        }
        return out;
    }

    /** Feeds the answer to a COM_STMT_EXECUTE with these binary rows through {@code rewriter}: the rows let out. */
    private static List<ByteBuf> execute(ResponseForwarder.ResponseRewriter rewriter, List<ColumnDefinition> columns,
                                         ByteBuf... rows) {
        List<ByteBuf> packets = new ArrayList<>(header(columns));
        packets.addAll(List.of(rows));
        packets.add(end(ServerStatus.SERVER_STATUS_AUTOCOMMIT));
        return feed(rewriter, ResponseFraming.forCommand(CommandType.COM_STMT_EXECUTE, CAPABILITIES), packets);
    }

    /** The column count and definitions of a result set. */
    private static List<ByteBuf> header(List<ColumnDefinition> columns) {
        List<ByteBuf> packets = new ArrayList<>();
        ByteBuf count = Unpooled.buffer();
        Buffers.writeLenEncInt(count, columns.size());
        packets.add(count);
        for (ColumnDefinition column : columns) {
            ByteBuf definition = Unpooled.buffer();
            column.encode(definition);
            packets.add(definition);
        }
        return packets;
    }

    /** The OK with header 0xFE that ends rows under CLIENT_DEPRECATE_EOF. */
    private static ByteBuf end(int status) {
        ByteBuf end = Unpooled.buffer();
        OkPacket.of(0, 0, status, 0).encode(end, CAPABILITIES);
        end.setByte(0, OkPacket.EOF_HEADER);
        return end;
    }

    /** Each packet through the framing and the rewriter, as the forwarder does; the rows let out, in order. */
    private static List<ByteBuf> feed(ResponseForwarder.ResponseRewriter rewriter, ResponseFraming framing,
                                      List<ByteBuf> packets) {
        List<ByteBuf> rows = new ArrayList<>();
        int sequence = 1;
        for (ByteBuf payload : packets) {
            framing.accept(payload.duplicate());
            Packet rewritten = rewriter.rewrite(new Packet(sequence++, payload), framing);
            if (framing.lastPacketKind() == ResponseFraming.PacketKind.ROW) {
                rows.add(rewritten.payload());
            }
        }
        assertThat(framing.isComplete()).isTrue();
        return rows;
    }

    private static ColumnDefinition text(String name) {
        return ColumnDefinition.text("information_schema", "PROCESSLIST", name);
    }
}
