package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.shyiko.mysql.binlog.event.deserialization.json.JsonBinary;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Expected texts are MySQL 8.0.15's own (SELECT of a JSON value); RowValuesConsistencyIT compares with the server. */
class MySqlJsonTextTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "1.5|1.5", "0.1|0.1", "1e300|1e300", "3.14159265358979|3.14159265358979", "1e-7|0.0000001",
            "1e15|1e15", "1e14|100000000000000", "1e-15|0.000000000000001", "1e-16|1e-16", "4.9e-324|5e-324",
            "1.7976931348623157e308|1.7976931348623157e308", "0.30000000000000004|0.30000000000000004",
            "123456789012345678901234567890|1.2345678901234568e29", "2|2", "123456|123456", "0.000001|0.000001",
            "1e21|1e21", "-1.5|-1.5", "-0.0|-0", "0|0", "1.5e-5|0.000015", "0.00012345678901234567|0.00012345678901234567"})
    void doublesAsMySqlsGcvtWritesThem(double value, String text) {
        assertThat(MySqlJsonText.gcvt(value)).isEqualTo(text);
    }

    @Test
    void integralDoublesGetAPointZeroInJson() throws Exception {
        assertThat(MySqlJsonText.of(doubleDocument(2.0))).isEqualTo("2.0");
        assertThat(MySqlJsonText.of(doubleDocument(-0.0))).isEqualTo("-0.0");
        assertThat(MySqlJsonText.of(doubleDocument(1e15))).isEqualTo("1e15");
    }

    @Test
    void negativeTimesKeepTheirValueAndSign() throws Exception {
        assertThat(MySqlJsonText.of(timeDocument(true, 12, 34, 56, 700_000))).isEqualTo("\"-12:34:56.700000\"");
        assertThat(MySqlJsonText.of(timeDocument(true, 0, 0, 1, 0))).isEqualTo("\"-00:00:01.000000\"");
        assertThat(MySqlJsonText.of(timeDocument(false, 838, 59, 59, 0))).isEqualTo("\"838:59:59.000000\"");
        // What the library makes of the first one (nonsense, or its own assertion failing when assertions are on),
        // and why Gantry reads TIME itself.
        String library;
        try {
            library = JsonBinary.parseAsString(timeDocument(true, 12, 34, 56, 700_000));
        } catch (AssertionError e) {
            library = e.toString();
        }
        assertThat(library).isNotEqualTo("\"-12:34:56.700000\"");
    }

    @Test
    void emptyAndTextValues() throws Exception {
        assertThat(MySqlJsonText.of(new byte[0])).isEqualTo("null");
        assertThat(MySqlJsonText.of("[1,2]".getBytes(java.nio.charset.StandardCharsets.UTF_8))).isEqualTo("[1,2]");
    }

    /** A binary JSON document holding one double (type 0x0b, 8 bytes little-endian). */
    private static byte[] doubleDocument(double value) {
        return ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN).put((byte) 0x0b).putDouble(value).array();
    }

    /** A binary JSON document holding one TIME: opaque (0x0f), MYSQL_TYPE_TIME (11), length 8, the packed value. */
    private static byte[] timeDocument(boolean negative, long hour, long minute, long second, long micros) {
        long packed = (((hour << 12) | (minute << 6) | second) << 24) + micros;
        return ByteBuffer.allocate(11).order(ByteOrder.LITTLE_ENDIAN).put((byte) 0x0f).put((byte) 11).put((byte) 8)
                .putLong(negative ? -packed : packed).array();
    }
}
