package io.gantry.cli;

import io.gantry.authority.HealthSample;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A running Gantry's health history read through its proxy port, with the admin SQL an admin account may run
 * ({@code SELECT ... FROM gantry.health_history}), a page at a time in (at, server) order.
 */
final class ProxyPortHealthSource {

    private static final int PAGE = 50_000;
    /** How admin SQL writes timestamps: UTC. */
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSS");

    private final String host;
    private final int port;
    private final String user;
    private final String password;

    private ProxyPortHealthSource(String host, int port, String user, String password) {
        this.host = host;
        this.port = port;
        this.user = user;
        this.password = password;
    }

    /**
     * {@code mysql://USER[:PASSWORD]@HOST:PORT}; without a password in it, {@code passwordFromEnvironment} is used.
     *
     * @throws IllegalArgumentException naming what is wrong, the password masked
     */
    static ProxyPortHealthSource parse(String url, String passwordFromEnvironment) {
        String masked = url.replaceAll("(//[^:/@]*):[^@]*@", "$1:***@");
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("--from: '" + masked + "' is not a URL (mysql://ADMIN@HOST:PORT)");
        }
        if (!"mysql".equals(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 1
                || uri.getRawUserInfo() == null || !(uri.getPath() == null || uri.getPath().isEmpty()
                || uri.getPath().equals("/"))) {
            throw new IllegalArgumentException("--from: '" + masked + "' must be mysql://ADMIN[:PASSWORD]@HOST:PORT "
                    + "(Gantry's proxy port and an account in its --admin-users)");
        }
        String userInfo = uri.getRawUserInfo();
        int colon = userInfo.indexOf(':');
        String user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
        String password = colon < 0 ? passwordFromEnvironment : decode(userInfo.substring(colon + 1));
        return new ProxyPortHealthSource(uri.getHost(), uri.getPort(), user, password == null ? "" : password);
    }

    private static String decode(String part) {
        return URLDecoder.decode(part, StandardCharsets.UTF_8);
    }

    /** Every sample in [from, to) of {@code server} (or all), oldest first. */
    void forEach(Instant from, Instant to, Optional<String> server, Consumer<HealthSample> sink) throws SQLException {
        String url = "jdbc:mysql://" + host + ":" + port + "/?sslMode=PREFERRED&connectTimeout=10000";
        try (Connection connection = DriverManager.getConnection(url, user, password);
             Statement statement = connection.createStatement()) {
            String after = null;
            while (true) {
                String sql = page(from, to, server, after);
                int rows = 0;
                String last = null;
                try (ResultSet result = statement.executeQuery(sql)) {
                    while (result.next()) {
                        rows++;
                        String at = result.getString(1);
                        String name = result.getString(2);
                        sink.accept(new HealthSample(LocalDateTime.parse(at, TIME).toInstant(ZoneOffset.UTC), name,
                                result.getString(3), result.getString(4), number(result.getString(5)),
                                result.getString(6) == null ? null : Long.parseLong(result.getString(6)),
                                number(result.getString(7))));
                        last = "(at > " + timestamp(at) + " OR (at = " + timestamp(at) + " AND server > "
                                + literal(name) + "))";
                    }
                }
                if (rows < PAGE) {
                    return;
                }
                after = last;
            }
        }
    }

    private static String page(Instant from, Instant to, Optional<String> server, String after) {
        StringBuilder where = new StringBuilder(" WHERE 1 = 1");
        if (from != null) {
            where.append(" AND at >= ").append(timestamp(TIME.format(from.atOffset(ZoneOffset.UTC))));
        }
        if (to != null) {
            where.append(" AND at < ").append(timestamp(TIME.format(to.atOffset(ZoneOffset.UTC))));
        }
        server.ifPresent(name -> where.append(" AND server = ").append(literal(name)));
        if (after != null) {
            where.append(" AND ").append(after);
        }
        return "SELECT at, server, health, role, rtt_ms, lag_ms, connect_ms FROM gantry.health_history" + where
                + " ORDER BY at, server LIMIT " + PAGE;
    }

    private static String timestamp(String utc) {
        return "TIMESTAMP WITH TIME ZONE '" + utc + "+00:00'";
    }

    private static String literal(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    private static Double number(String text) {
        return text == null ? null : Double.valueOf(text);
    }
}
