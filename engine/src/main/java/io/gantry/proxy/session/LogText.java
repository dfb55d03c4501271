package io.gantry.proxy.session;

/** Text for log lines and error messages about what a peer sent: safe to print, short enough to read. */
public final class LogText {

    private LogText() {
    }

    /** A peer-chosen name as it may appear in a log line: control characters escaped, so no line can be forged. */
    public static String printable(String text) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c == 0x7F) {
                if (out == null) {
                    out = new StringBuilder(text.length() + 8).append(text, 0, i);
                }
                out.append(String.format("\\x%02x", (int) c));
            } else if (out != null) {
                out.append(c);
            }
        }
        return out == null ? text : out.toString();
    }

    public static String abbreviate(String sql) {
        String oneLine = sql.replaceAll("\\s+", " ").trim();
        return oneLine.length() <= 120 ? oneLine : oneLine.substring(0, 117) + "...";
    }
}
