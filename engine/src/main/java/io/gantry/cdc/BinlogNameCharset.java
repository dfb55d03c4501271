package io.gantry.cdc;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * The binlog client (mysql-binlog-connector-java) decodes the names in a binlog, those of databases, tables and
 * columns and the values of ENUM and SET columns, with the JVM's default charset ({@code new String(bytes)}). The
 * servers write them in UTF-8, so on Java 17 under a locale that is not UTF-8 (a container or a service with no
 * {@code LANG}: the default is then US-ASCII) every non-ASCII name would reach the change feed and the caches
 * garbled, without an error. The change stream therefore refuses to start unless the default charset is UTF-8;
 * Gantry's launchers ({@code ./gantry}, the package's {@code /usr/bin/gantry}) start Java with {@code
 * -Dfile.encoding=UTF-8}.
 */
public final class BinlogNameCharset {

    private BinlogNameCharset() {
    }

    /** @throws IllegalStateException naming the charset found and how to start Java instead, unless it is UTF-8 */
    public static void requireUtf8(Charset defaultCharset) {
        if (!defaultCharset.equals(StandardCharsets.UTF_8)) {
            throw new IllegalStateException("the change stream needs Java's default charset to be UTF-8, and it is "
                    + defaultCharset.name() + " (the locale has no UTF-8: LANG/LC_ALL): the binlog client decodes "
                    + "table, column and ENUM/SET names with it, and would garble every name that is not ASCII. "
                    + "Start Java with -Dfile.encoding=UTF-8 (the gantry launcher and the package do), set "
                    + "LANG=C.UTF-8, or run with --no-cdc");
        }
    }
}
