package io.gantry.wire;

/**
 * A packet payload that does not follow the protocol. The message always starts with the name of
 * the field that could not be read, followed by what was found.
 */
public final class MalformedPacketException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String field;

    /**
     * @param field   the protocol field, e.g. {@code "OK.affected_rows"}
     * @param problem what is wrong with it, including the value or size found
     */
    public MalformedPacketException(String field, String problem) {
        super(field + ": " + problem);
        this.field = field;
    }

    /** The protocol field that could not be read, e.g. {@code "HandshakeV10.server_version"}. */
    public String field() {
        return field;
    }
}
