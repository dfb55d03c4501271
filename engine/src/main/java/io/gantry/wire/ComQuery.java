package io.gantry.wire;

import java.nio.charset.StandardCharsets;

/**
 * A COM_QUERY payload for SQL text Gantry holds. SQL text in Gantry holds one character per byte (ISO-8859-1, as
 * COM_QUERY texts are decoded and read-back values are), so it goes back to the server byte for byte, whatever the
 * connection's character set.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query.html">COM_QUERY</a>
 */
public final class ComQuery {

    private ComQuery() {
    }

    /** The payload: the command byte, then the text's bytes. */
    public static byte[] payload(String sql) {
        byte[] command = new byte[sql.length() + 1];
        command[0] = (byte) CommandType.COM_QUERY.code();
        System.arraycopy(sql.getBytes(StandardCharsets.ISO_8859_1), 0, command, 1, sql.length());
        return command;
    }
}
