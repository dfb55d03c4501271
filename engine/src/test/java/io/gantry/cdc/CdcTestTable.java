package io.gantry.cdc;

import java.util.List;

/**
 * The change stream's test table: one column of every type MariaDB and MySQL have (8.0 lacks none used here), and
 * rows with their extremes, empty and NULL values. Each statement has one {@code %s} for the table's name.
 */
public final class CdcTestTable {

    /** The column definitions, for {@code CREATE TABLE name (...)}. */
    public static final String COLUMNS = """
            id INT PRIMARY KEY,
            ti TINYINT, tiu TINYINT UNSIGNED, ti1 TINYINT(1),
            si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
            i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
            y YEAR,
            dec1 DECIMAL(10,4), dec2 DECIMAL(65,30), decu DECIMAL(5,0) UNSIGNED,
            f FLOAT, d DOUBLE,
            b1 BIT(1), b10 BIT(10), b64 BIT(64),
            c CHAR(10), vc VARCHAR(100), vl1 VARCHAR(20) CHARACTER SET latin1,
            vu3 VARCHAR(20) CHARACTER SET utf8mb3, ca CHAR(5) CHARACTER SET ascii,
            tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT,
            j JSON,
            e ENUM('small','medium','large'), s SET('read','write','admin'),
            el ENUM('ä','ö') CHARACTER SET utf8mb4,
            bn BINARY(4), vb VARBINARY(16), tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
            da DATE,
            dtm DATETIME, dtm3 DATETIME(3), dtm6 DATETIME(6),
            ts TIMESTAMP NULL, ts3 TIMESTAMP(3) NULL, ts6 TIMESTAMP(6) NULL,
            tm TIME, tm2 TIME(2), tm4 TIME(4), tm6 TIME(6),
            pt POINT""";

    /** Rows 1 to 4: each type's extremes, empty values, every column NULL, old dates and odd values. */
    public static final List<String> INSERTS = List.of(
            // Extremes, multi-byte text, fractional seconds.
            """
            INSERT INTO %s VALUES (1,
              -128, 255, 1, -32768, 65535, -8388608, 16777215,
              -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
              0,
              -123456.7891, '12345678901234567890123456789012345.123456789012345678901234567890', 99999,
              3.1415927, 0.1e0 + 0.2e0,
              b'1', b'1000000001', ~0,
              'héllo', 'Привет 👋 — ok', 'café €', 'naïve', 'abc',
              'tiny', 'text ü', 'medium', REPEAT('x', 70000),
              '{"a": [1, 2, {"b": null}], "c": "ü"}',
              'large', 'read,admin', 'ö',
              'ab', UNHEX('00FF10'), UNHEX('00'), UNHEX('DEADBEEF00'), '', REPEAT(UNHEX('FF'), 1000),
              '2024-01-31',
              '2024-01-31 13:45:00', '2024-01-31 13:45:00.12', '9999-12-31 23:59:59.999999',
              '2024-01-31 18:45:00', '2024-01-31 18:45:00.12', '2038-01-19 08:14:07.999999',
              '-838:59:59', '-00:00:00.01', '-12:34:56.7891', '838:59:59.999999',
              POINT(1, 2))""",
            // The other ends, zero dates, empty values.
            """
            INSERT INTO %s VALUES (2,
              127, 0, -128, 32767, 0, 8388607, 0,
              2147483647, 0, 9223372036854775807, 9223372036854775808,
              2155,
              0, -0.000000000000000000000000000001, 0,
              -0e0, -1.2345678901234567e300,
              b'0', b'0', 0,
              '', '', '', '', '',
              '', '', '', '',
              '[]',
              'small', '', 'ä',
              '', '', '', '', '', '',
              '0000-00-00',
              '0000-00-00 00:00:00', '2024-01-00 10:00:00', '0000-01-01 00:00:00.000001',
              '0000-00-00 00:00:00', '0000-00-00 00:00:00', '1970-01-01 05:00:01',
              '00:00:00', '-01:00:00.5', '100:00:00', '-00:00:01.000001',
              POINT(0, 0))""",
            // Everything NULL.
            "INSERT INTO %s (id) VALUES (3)",
            // Dates in year 0 and before the Gregorian cutover, float rounding, an invalid ENUM value (index 0).
            """
            INSERT INTO %s (id, y, f, d, e, da, dtm, dtm3, dtm6, ts, tm)
              VALUES (4, 1901, 16777216, 9007199254740993, 'bogus', '0001-01-01', '1582-10-04 12:00:00',
                      '1000-01-01 00:00:00.5', '0000-02-28 23:59:59.999999', '2024-07-01 00:00:00', '00:00:00')""");

    private CdcTestTable() {
    }
}
