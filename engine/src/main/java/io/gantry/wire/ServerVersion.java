package io.gantry.wire;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A server's product and release, read from its version string as a greeting or {@code VERSION()} gives it
 * ({@code 5.5.5-10.11.18-MariaDB-0+deb12u1}, {@code 11.4.5-MariaDB-log}, {@code 8.0.15}). Statements whose form
 * changed between releases (a renamed variable, a renamed replication statement) ask it which form to send.
 *
 * @param mariaDb whether the server is MariaDB
 * @param release the release as {@code major * 1_000_000 + minor * 1_000 + patch}; {@link #UNKNOWN_RELEASE} when
 *                the string names none (a fork or a cloud build, and those are recent)
 */
public record ServerVersion(boolean mariaDb, long release) {

    /** The release of a version string that names none: newer than every release. */
    public static final long UNKNOWN_RELEASE = Long.MAX_VALUE;

    /** MariaDB sends {@code 5.5.5-} before its own version so that old MySQL clients accept it. */
    private static final String MARIADB_PREFIX = "5.5.5-";
    private static final Pattern RELEASE = Pattern.compile("^(\\d+)\\.(\\d+)\\.(\\d+)");

    /** Reads a version string. */
    public static ServerVersion parse(String version) {
        String text = version.strip();
        boolean mariaDb = text.contains("MariaDB");
        if (mariaDb && text.startsWith(MARIADB_PREFIX)) {
            text = text.substring(MARIADB_PREFIX.length());
        }
        Matcher matcher = RELEASE.matcher(text);
        if (!matcher.find()) {
            return new ServerVersion(mariaDb, UNKNOWN_RELEASE);
        }
        return new ServerVersion(mariaDb, release(Integer.parseInt(matcher.group(1)),
                Integer.parseInt(matcher.group(2)), Integer.parseInt(matcher.group(3))));
    }

    /** Whether this server's release is {@code major.minor.patch} or later. */
    public boolean atLeast(int major, int minor, int patch) {
        return release >= release(major, minor, patch);
    }

    private static long release(int major, int minor, int patch) {
        return major * 1_000_000L + minor * 1_000L + patch;
    }
}
