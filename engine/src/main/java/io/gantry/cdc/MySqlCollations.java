package io.gantry.cdc;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The Java charset of a MariaDB or MySQL collation id, as found in a {@code TABLE_MAP}'s column charsets.
 *
 * <p>Ids checked against {@code information_schema.COLLATION_CHARACTER_SET_APPLICABILITY} of MariaDB 11.4
 * (including its {@code _nopad_} collations at 1024 and above and the UCA 14.0 blocks at 2048 and above) and
 * MySQL 8's utf8mb4 block 255..323. latin1 decodes as windows-1252, as MySQL's latin1 really is and as
 * connector-j reads it. An id not listed decodes as UTF-8.
 */
final class MySqlCollations {

    /** The {@code binary} pseudo charset: BINARY, VARBINARY and BLOB columns. */
    static final int BINARY = 63;

    private static final Map<Integer, Charset> CHARSETS = new HashMap<>();

    static {
        ids("UTF-8", 45, 46, 608, 609, 610, 1069, 1070);                      // utf8mb4
        range("UTF-8", 224, 247);
        range("UTF-8", 255, 323);
        range("UTF-8", 1248, 1279);
        range("UTF-8", 2304, 2559);
        ids("UTF-8", 33, 76, 83, 223, 576, 577, 578, 1057, 1107);              // utf8mb3
        range("UTF-8", 192, 215);
        range("UTF-8", 1216, 1247);
        range("UTF-8", 2048, 2303);
        ids("windows-1252", 5, 8, 15, 31, 47, 48, 49, 94, 1032, 1071);          // latin1
        ids("US-ASCII", 11, 65, 1035, 1089);                                    // ascii
        ids("UTF-16BE", 35, 90, 159, 640, 641, 642, 1059, 1114);                // ucs2
        range("UTF-16BE", 128, 151);
        range("UTF-16BE", 1152, 1183);
        range("UTF-16BE", 2560, 2815);
        ids("UTF-16BE", 54, 55, 672, 673, 674, 1078, 1079);                     // utf16
        range("UTF-16BE", 101, 124);
        range("UTF-16BE", 1125, 1151);
        range("UTF-16BE", 2816, 3071);
        ids("UTF-16LE", 56, 62, 1080, 1086);                                    // utf16le
        ids("UTF-32BE", 60, 61, 736, 737, 738, 1084, 1085);                     // utf32
        range("UTF-32BE", 160, 183);
        range("UTF-32BE", 1184, 1215);
        range("UTF-32BE", 3072, 3327);
        ids("windows-1250", 26, 34, 44, 66, 99, 1050, 1090);                    // cp1250
        ids("windows-1251", 14, 23, 50, 51, 52, 1074, 1075);                    // cp1251
        ids("windows-1256", 57, 67, 1081, 1091);                                // cp1256
        ids("windows-1257", 29, 58, 59, 1082, 1083);                            // cp1257
        ids("ISO-8859-2", 2, 9, 21, 27, 77, 1033, 1101);                        // latin2
        ids("ISO-8859-9", 30, 78, 1054, 1102);                                  // latin5
        ids("ISO-8859-13", 20, 41, 42, 79, 1065, 1103);                         // latin7
        ids("ISO-8859-7", 25, 70, 1049, 1094);                                  // greek
        ids("ISO-8859-8", 16, 71, 1040, 1095);                                  // hebrew
        ids("KOI8-R", 7, 74, 1031, 1098);                                       // koi8r
        ids("KOI8-U", 22, 75, 1046, 1099);                                      // koi8u
        ids("IBM850", 4, 80, 1028, 1104);                                       // cp850
        ids("IBM852", 40, 81, 1064, 1105);                                      // cp852
        ids("IBM866", 36, 68, 1060, 1092);                                      // cp866
        ids("Shift_JIS", 13, 88, 1037, 1112);                                   // sjis
        ids("windows-31j", 95, 96, 1119, 1120);                                 // cp932
        ids("EUC-JP", 12, 91, 1036, 1115);                                      // ujis
        ids("x-eucJP-Open", 97, 98, 1121, 1122);                                // eucjpms
        ids("EUC-KR", 19, 85, 1043, 1109);                                      // euckr
        ids("GB2312", 24, 86, 1048, 1110);                                      // gb2312
        ids("GBK", 28, 87, 1052, 1111);                                         // gbk
        ids("GB18030", 248, 249, 250);                                          // gb18030 (MySQL)
        ids("Big5", 1, 84, 1025, 1108);                                         // big5
        ids("TIS-620", 18, 89, 1042, 1113);                                     // tis620
    }

    private MySqlCollations() {
    }

    /** Whether the collation is {@code binary}: the column holds bytes, not text. */
    static boolean isBinary(int collationId) {
        return collationId == BINARY;
    }

    /** The charset to decode a column of this collation with; UTF-8 for ids not known here. */
    static Charset charset(int collationId) {
        return CHARSETS.getOrDefault(collationId, StandardCharsets.UTF_8);
    }

    private static void ids(String charset, int... ids) {
        if (!Charset.isSupported(charset)) {
            return;
        }
        Charset resolved = Charset.forName(charset);
        for (int id : ids) {
            CHARSETS.put(id, resolved);
        }
    }

    private static void range(String charset, int first, int last) {
        if (!Charset.isSupported(charset)) {
            return;
        }
        Charset resolved = Charset.forName(charset);
        for (int id = first; id <= last; id++) {
            CHARSETS.put(id, resolved);
        }
    }
}
