package io.gantry.gtid;

import java.util.Objects;

/**
 * One transaction's global identifier, in one of the two {@linkplain Flavour flavours}. {@code toString()} prints the
 * server's own text form, which {@link #parse(String, Flavour)} reads back.
 */
public sealed interface Gtid permits MySqlGtid, MariaDbGtid {

    /** The flavour this identifier belongs to. */
    Flavour flavour();

    /**
     * Parses one GTID: {@code uuid:number} or {@code uuid:tag:number} for MySQL, {@code domain-server-sequence} for
     * MariaDB.
     *
     * @throws IllegalArgumentException if the text is not one GTID of that flavour; the message quotes the text and
     *                                  the part that is wrong
     */
    static Gtid parse(String text, Flavour flavour) {
        Objects.requireNonNull(flavour, "flavour");
        return switch (flavour) {
            case MYSQL -> MySqlGtid.parse(text);
            case MARIADB -> MariaDbGtid.parse(text);
        };
    }
}
