package io.gantry.topology;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * One server of an upstream or CDC list: {@code mysql://user:password@host:port/database}, optionally followed by
 * TLS parameters ({@code ?ssl-mode=VERIFY_CA&ssl-ca=/etc/gantry/ca.pem&get-server-public-key=false}, the MySQL
 * client's option names, see {@link ServerTls}) and by {@code |weight}. The weight (1..100, default
 * {@value #DEFAULT_WEIGHT}) steers how many reads a replica gets and which CDC server is preferred. The password
 * never appears in {@link #toString()}.
 *
 * @param host     server host name or address
 * @param port     TCP port, default 3306
 * @param database the database Gantry and its clients use
 * @param user     Gantry's service account on this server
 * @param password the service account's password (may be empty)
 * @param weight   1..100
 * @param tls      how every connection to this server uses TLS
 */
public record UpstreamUrl(String host, int port, String database, String user, String password, int weight,
                          ServerTls tls) {

    /** The weight of an entry that does not give one. */
    public static final int DEFAULT_WEIGHT = 50;

    /** The query parameters a URL may carry. */
    static final List<String> PARAMETERS = List.of("ssl-mode", "ssl-ca", "get-server-public-key");

    public UpstreamUrl {
        if (weight < 1 || weight > 100) {
            throw new IllegalArgumentException("weight must be between 1 and 100, not " + weight);
        }
        java.util.Objects.requireNonNull(tls, "tls");
    }

    /** A server with the default TLS settings ({@link ServerTls#DEFAULT}). */
    public UpstreamUrl(String host, int port, String database, String user, String password, int weight) {
        this(host, port, database, user, password, weight, ServerTls.DEFAULT);
    }

    /** {@code host:port}, the name Gantry uses for a server everywhere (logs, admin SQL, events). */
    public String address() {
        return host + ":" + port;
    }

    /** The same server with another weight. */
    public UpstreamUrl withWeight(int newWeight) {
        return new UpstreamUrl(host, port, database, user, password, newWeight, tls);
    }

    /** The same server and account with another password (one given apart from the URL: a password file). */
    public UpstreamUrl withPassword(String newPassword) {
        return new UpstreamUrl(host, port, database, user, newPassword, weight, tls);
    }

    /** The same server with other TLS settings. */
    public UpstreamUrl withTls(ServerTls newTls) {
        return new UpstreamUrl(host, port, database, user, password, weight, newTls);
    }

    /**
     * Parses one entry.
     *
     * @throws IllegalArgumentException naming the entry (password masked) and what is wrong with it
     */
    public static UpstreamUrl parse(String entry) {
        String text = entry == null ? "" : entry.trim();
        String shown = mask(text);
        int bar = text.lastIndexOf('|');
        int weight = DEFAULT_WEIGHT;
        if (bar >= 0) {
            String weightText = text.substring(bar + 1).trim();
            try {
                weight = Integer.parseInt(weightText);
            } catch (NumberFormatException e) {
                throw invalid(shown, "the weight '" + weightText + "' is not a whole number from 1 to 100");
            }
            if (weight < 1 || weight > 100) {
                throw invalid(shown, "the weight " + weight + " is outside 1..100");
            }
            text = text.substring(0, bar).trim();
        }
        int schemeEnd = text.indexOf("://");
        if (schemeEnd < 0) {
            throw invalid(shown, "expected mysql://user:password@host:port/database");
        }
        String scheme = text.substring(0, schemeEnd);
        if (!scheme.equals("mysql") && !scheme.equals("mariadb")) {
            throw invalid(shown, "unknown scheme '" + scheme + "' (use mysql:// or mariadb://)");
        }
        String rest = text.substring(schemeEnd + 3);
        int at = rest.lastIndexOf('@');
        if (at < 0) {
            throw invalid(shown, "no user: expected user:password@ before the host");
        }
        String credentials = rest.substring(0, at);
        String location = rest.substring(at + 1);
        int colon = credentials.indexOf(':');
        String user = decode(colon < 0 ? credentials : credentials.substring(0, colon), "user", shown);
        String password = colon < 0 ? "" : decode(credentials.substring(colon + 1), "password", shown);
        if (user.isEmpty()) {
            throw invalid(shown, "the user is empty");
        }
        int slash = location.indexOf('/');
        if (slash < 0 || slash == location.length() - 1) {
            throw invalid(shown, "no database: expected host:port/database");
        }
        String path = location.substring(slash + 1);
        ServerTls tls = ServerTls.DEFAULT;
        int question = path.indexOf('?');
        if (question >= 0) {
            tls = parseParameters(path.substring(question + 1), shown);
            path = path.substring(0, question);
            if (path.isEmpty()) {
                throw invalid(shown, "no database: expected host:port/database");
            }
        }
        String database = decode(path, "database name", shown);
        if (database.contains("/") || database.contains("?")) {
            throw invalid(shown, "the database name '" + database + "' contains '/' or '?'");
        }
        String hostPort = location.substring(0, slash);
        String host;
        int port = 3306;
        if (hostPort.startsWith("[")) {
            int close = hostPort.indexOf(']');
            if (close < 0) {
                throw invalid(shown, "unclosed '[' in the IPv6 host");
            }
            host = hostPort.substring(1, close);
            String after = hostPort.substring(close + 1);
            if (after.startsWith(":")) {
                port = parsePort(after.substring(1), shown);
            } else if (!after.isEmpty()) {
                throw invalid(shown, "unexpected '" + after + "' after the host");
            }
        } else {
            int portColon = hostPort.lastIndexOf(':');
            host = portColon < 0 ? hostPort : hostPort.substring(0, portColon);
            if (portColon >= 0) {
                port = parsePort(hostPort.substring(portColon + 1), shown);
            }
        }
        if (host.isEmpty()) {
            throw invalid(shown, "the host is missing");
        }
        return new UpstreamUrl(host, port, database, user, password, weight, tls);
    }

    /**
     * The TLS settings of a URL's query text, as {@link ServerTls#query()} writes it ({@code ""} for the defaults).
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static ServerTls parseTls(String query) {
        return query.isEmpty() ? ServerTls.DEFAULT : parseParameters(query, "?" + query);
    }

    /** {@code ssl-mode=...&ssl-ca=...&get-server-public-key=...}; '_' may stand for '-' as in my.cnf. */
    private static ServerTls parseParameters(String query, String shown) {
        TlsMode mode = ServerTls.DEFAULT_MODE;
        Path ca = null;
        boolean getServerPublicKey = false;
        Set<String> given = new HashSet<>();
        for (String pair : query.split("&", -1)) {
            int equals = pair.indexOf('=');
            String name = decode(equals < 0 ? pair : pair.substring(0, equals), "query parameter", shown).trim().toLowerCase(Locale.ROOT)
                    .replace('_', '-');
            String value = equals < 0 ? "" : decode(pair.substring(equals + 1), "query parameter value", shown).trim();
            if (name.isEmpty()) {
                throw invalid(shown, "an empty query parameter (expected name=value joined by '&')");
            }
            if (!PARAMETERS.contains(name)) {
                throw invalid(shown, "unknown parameter '" + name + "' (known: " + String.join(", ", PARAMETERS)
                        + ")");
            }
            if (!given.add(name)) {
                throw invalid(shown, "the parameter '" + name + "' is given twice");
            }
            if (value.isEmpty()) {
                throw invalid(shown, "the parameter '" + name + "' has no value");
            }
            switch (name) {
                case "ssl-mode" -> {
                    try {
                        mode = TlsMode.parse(value);
                    } catch (IllegalArgumentException e) {
                        throw invalid(shown, e.getMessage());
                    }
                }
                case "ssl-ca" -> {
                    try {
                        ca = Path.of(value);
                    } catch (InvalidPathException e) {
                        throw invalid(shown, "ssl-ca '" + value + "' is not a file path: " + e.getMessage());
                    }
                }
                default -> getServerPublicKey = switch (value.toLowerCase(Locale.ROOT)) {
                    case "true", "on", "1" -> true;
                    case "false", "off", "0" -> false;
                    default -> throw invalid(shown, "get-server-public-key '" + value + "' is not true or false");
                };
            }
        }
        try {
            return new ServerTls(mode, ca, getServerPublicKey);
        } catch (IllegalArgumentException e) {
            throw invalid(shown, e.getMessage());
        }
    }

    /** Servers as the log and {@code SHOW GANTRY STATUS} list them: {@code host:port|weight}, comma-separated. */
    public static String addressesAndWeights(List<UpstreamUrl> urls) {
        return String.join(", ", urls.stream().map(u -> u.address() + "|" + u.weight()).toList());
    }

    /**
     * Parses a list given as comma-separated entries, repeated flags, or both.
     *
     * @throws IllegalArgumentException for the first bad entry, or when a server appears twice
     */
    public static List<UpstreamUrl> parseList(List<String> values) {
        List<UpstreamUrl> urls = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (String value : values) {
            for (String entry : value.split(",")) {
                if (entry.isBlank()) {
                    continue;
                }
                UpstreamUrl url = parse(entry);
                if (!seen.add(url.address())) {
                    throw invalid(mask(entry.trim()), "the server " + url.address() + " is listed twice");
                }
                urls.add(url);
            }
        }
        if (urls.isEmpty()) {
            throw new IllegalArgumentException("the server list is empty");
        }
        return List.copyOf(urls);
    }

    private static int parsePort(String text, String shown) {
        try {
            int port = Integer.parseInt(text);
            if (port < 1 || port > 65535) {
                throw invalid(shown, "the port " + port + " is outside 1..65535");
            }
            return port;
        } catch (NumberFormatException e) {
            throw invalid(shown, "the port '" + text + "' is not a number");
        }
    }

    private static String decode(String text, String part, String shown) {
        try {
            return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            // URLDecoder's own message names neither the entry nor the part
            throw invalid(shown, "bad percent-encoding in the " + part + " (" + e.getMessage() + ")");
        }
    }

    /**
     * The entry with its password replaced by {@code ***}, safe for logs and errors. Without a well-formed scheme
     * ({@code mysql:/app:pw@host/db}) everything from the first colon to the last {@code @} is masked: more than the
     * password, never less. Without an {@code @} the password cannot be told from what follows it, so everything
     * after the first colon after the scheme is masked.
     */
    static String mask(String entry) {
        int scheme = entry.indexOf("://");
        int at = entry.lastIndexOf('@');
        if (at < 0) {
            int colon = entry.indexOf(':', scheme < 0 ? 0 : scheme + 3);
            return colon < 0 ? entry : entry.substring(0, colon + 1) + "***";
        }
        int credentials = scheme >= 0 && scheme < at ? scheme + 3 : 0;
        int colon = entry.indexOf(':', credentials);
        if (colon < 0 || colon > at) {
            return entry;
        }
        return entry.substring(0, colon + 1) + "***" + entry.substring(at);
    }

    private static IllegalArgumentException invalid(String shownEntry, String problem) {
        return new IllegalArgumentException("bad server URL '" + shownEntry + "': " + problem);
    }

    @Override
    public String toString() {
        String query = tls.query();
        return "mysql://" + user + ":***@" + address() + "/" + database + (query.isEmpty() ? "" : "?" + query)
                + "|" + weight;
    }
}
