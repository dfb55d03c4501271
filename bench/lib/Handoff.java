import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The cost of handing one pooled server connection from one session to another, four ways, on one connection
 * straight to the server (no Gantry in between), as bench/handoff.sh drives it (issue 32, point 1):
 * <ol>
 *   <li>{@code reset}: COM_RESET_CONNECTION alone;</li>
 *   <li>{@code reset+replay}: COM_RESET_CONNECTION, then the replay of the session's settings (one {@code SET NAMES
 *       ..., sql_mode = ..., time_zone = ...}, what Gantry does today);</li>
 *   <li>{@code change_user}: COM_CHANGE_USER to the same account (mysql_native_password, the handshake's collation),
 *       which resets the session too;</li>
 *   <li>{@code change_user+replay}: COM_CHANGE_USER, then the same replay.</li>
 * </ol>
 * A hand-off is timed from the first byte written to the last OK read, as the client sees it. The ways alternate in
 * rounds of ROUND hand-offs (the order rotates every round), so noise on this shared machine hits all of them alike;
 * WARMUP hand-offs of each way first, not counted. The server's CPU per hand-off is read from /proc around each
 * round (SERVER_PID: the mariadbd process): the sum of its threads' run time in ns ({@code /proc/PID/task/TID/schedstat},
 * so everything the server did during the round, including its background threads) and its user and system ticks
 * ({@code /proc/PID/stat}, coarse: 10 ms ticks). The client's own CPU (this thread's) is reported too.
 *
 * <p>The client is raw protocol over a plain socket (no JDBC driver): exact control over what goes on the wire, one
 * packet per command. Connector/J would add its own statements around a reset (MySQL's {@code resetServerState()}
 * sends COM_RESET_CONNECTION or COM_CHANGE_USER depending on its settings and re-sends session variables after),
 * and MariaDB's has no change-user call. Capabilities as a modern client asks them, among them CLIENT_SESSION_TRACK
 * and CLIENT_DEPRECATE_EOF (Gantry's pooled connections carry the client's); no TLS; mysql_native_password only
 * (an auth switch request to it is followed, and counted).
 *
 * <p>Before timing, each way is checked to really reset: a user variable and time_zone set first must be gone after it
 * (and the replay's time_zone in place after the replay ways).
 *
 * <p>Prints key=value lines on stdout: server_version, then per way ({@code reset}, {@code reset_replay},
 * {@code change_user}, {@code change_user_replay}) {@code WAY.median_us}, {@code .p99_us}, {@code .mean_us},
 * {@code .per_s} (hand-offs a second while its rounds ran), {@code .server_cpu_us} (schedstat), {@code .server_user_us}
 * and {@code .server_sys_us} (stat ticks), {@code .client_cpu_us}, {@code .auth_switches}; and machine_idle_pct (the
 * whole machine's idle share while the rounds ran, from /proc/stat: this client and the server keep about one core
 * busy between them, so 50 % on two idle cores); progress on stderr.
 * Needs nothing on the class path:
 * java bench/lib/Handoff.java PORT USER PASSWORD DATABASE SERVER_PID [ITERATIONS [WARMUP [ROUND [REPLAY_SQL]]]]
 */
public final class Handoff {

    static final String DEFAULT_REPLAY = "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci, sql_mode = "
            + "'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,"
            + "NO_ENGINE_SUBSTITUTION', time_zone = '+00:00'";

    enum Way {
        RESET("reset", false, false),
        RESET_REPLAY("reset_replay", false, true),
        CHANGE_USER("change_user", true, false),
        CHANGE_USER_REPLAY("change_user_replay", true, true);

        final String key;
        final boolean changeUser;
        final boolean replay;

        Way(String key, boolean changeUser, boolean replay) {
            this.key = key;
            this.changeUser = changeUser;
            this.replay = replay;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: java Handoff.java PORT USER PASSWORD DATABASE SERVER_PID [ITERATIONS [WARMUP"
                    + " [ROUND [REPLAY_SQL]]]]");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        String user = args[1];
        String password = args[2];
        String database = args[3];
        long serverPid = Long.parseLong(args[4]);
        int iterations = args.length > 5 ? Integer.parseInt(args[5]) : 20_000;
        int warmup = args.length > 6 ? Integer.parseInt(args[6]) : 2_000;
        int round = args.length > 7 ? Integer.parseInt(args[7]) : 500;
        String replay = args.length > 8 ? args[8] : DEFAULT_REPLAY;
        int rounds = (iterations + round - 1) / round;
        iterations = rounds * round;

        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long ticksPerSecond = ticksPerSecond();
        try (Client client = Client.connect(port, user, password, database)) {
            System.out.println("server_version=" + client.serverVersion);
            System.out.println("connection_id=" + client.connectionId);
            System.out.println("replay=" + replay);
            for (Way way : Way.values()) {
                check(client, way, replay);
            }
            System.err.println("each way resets the session (checked); warm-up: " + warmup + " of each way");
            for (int i = 0; i < warmup; i++) {
                for (Way way : Way.values()) {
                    handoff(client, way, replay);
                }
            }
            for (Way way : Way.values()) {
                client.authSwitches.put(way, 0);
            }

            Map<Way, long[]> latencies = new HashMap<>();
            Map<Way, long[]> totals = new HashMap<>(); // wall ns, server schedstat ns, user ticks, sys ticks, client ns
            for (Way way : Way.values()) {
                latencies.put(way, new long[iterations]);
                totals.put(way, new long[5]);
            }
            int done = 0;
            Way[] ways = Way.values();
            long[] machineBefore = machine();
            for (int r = 0; r < rounds; r++) {
                for (int k = 0; k < ways.length; k++) {
                    Way way = ways[(r + k) % ways.length];
                    long[] lat = latencies.get(way);
                    Map<Long, Long> runBefore = schedstat(serverPid);
                    long[] ticksBefore = ticks(serverPid);
                    long clientBefore = threads.getCurrentThreadCpuTime();
                    long wallBefore = System.nanoTime();
                    for (int i = 0; i < round; i++) {
                        long start = System.nanoTime();
                        handoff(client, way, replay);
                        lat[done + i] = System.nanoTime() - start;
                    }
                    long wallAfter = System.nanoTime();
                    long clientAfter = threads.getCurrentThreadCpuTime();
                    long[] ticksAfter = ticks(serverPid);
                    Map<Long, Long> runAfter = schedstat(serverPid);
                    long[] total = totals.get(way);
                    total[0] += wallAfter - wallBefore;
                    total[1] += runDelta(runBefore, runAfter);
                    total[2] += ticksAfter[0] - ticksBefore[0];
                    total[3] += ticksAfter[1] - ticksBefore[1];
                    total[4] += clientAfter - clientBefore;
                }
                done += round;
                if ((r + 1) % Math.max(1, rounds / 5) == 0) {
                    System.err.printf("%d of %d hand-offs of each way%n", done, iterations);
                }
            }

            long[] machineAfter = machine();
            System.out.printf("machine_idle_pct=%.1f%n", 100.0 * (machineAfter[0] - machineBefore[0])
                    / Math.max(1, machineAfter[1] - machineBefore[1]));
            for (Way way : Way.values()) {
                long[] lat = latencies.get(way);
                Arrays.sort(lat);
                long[] total = totals.get(way);
                double n = lat.length;
                String k = way.key;
                System.out.printf("%s.median_us=%.1f%n", k, percentile(lat, 0.50) / 1e3);
                System.out.printf("%s.p99_us=%.1f%n", k, percentile(lat, 0.99) / 1e3);
                System.out.printf("%s.mean_us=%.1f%n", k, Arrays.stream(lat).average().orElse(0) / 1e3);
                System.out.printf("%s.per_s=%.0f%n", k, n / (total[0] / 1e9));
                System.out.printf("%s.server_cpu_us=%.1f%n", k, total[1] / 1e3 / n);
                System.out.printf("%s.server_user_us=%.1f%n", k, total[2] * 1e6 / ticksPerSecond / n);
                System.out.printf("%s.server_sys_us=%.1f%n", k, total[3] * 1e6 / ticksPerSecond / n);
                System.out.printf("%s.client_cpu_us=%.1f%n", k, total[4] / 1e3 / n);
                System.out.printf("%s.auth_switches=%d%n", k, client.authSwitches.get(way));
            }
            System.out.println("iterations=" + iterations);
            System.out.println("connection_id_after=" + client.queryValue("SELECT CONNECTION_ID()"));
        }
    }

    /** One hand-off: the reset (COM_RESET_CONNECTION or COM_CHANGE_USER), then the replay if the way has one. */
    static void handoff(Client client, Way way, String replay) throws IOException {
        if (way.changeUser) {
            client.changeUser(way);
        } else {
            client.resetConnection();
        }
        if (way.replay) {
            client.query(replay);
        }
    }

    /** The way really resets: a user variable and a time_zone set before it are gone, and the replay's are in. */
    static void check(Client client, Way way, String replay) throws IOException {
        client.query("SET @handoff_marker = 1, time_zone = '+05:00'");
        handoff(client, way, replay);
        String marker = client.queryValue("SELECT @handoff_marker IS NULL");
        String zone = client.queryValue("SELECT @@session.time_zone");
        String expected = way.replay ? "+00:00" : client.queryValue("SELECT @@global.time_zone");
        if (!"1".equals(marker) || !expected.equals(zone)) {
            throw new IllegalStateException(way.key + " did not reset the session: @handoff_marker IS NULL = "
                    + marker + ", time_zone = " + zone + " (expected " + expected + ")");
        }
    }

    // ------------------------------------------------------------------------------------------ /proc

    /** Run time in ns of each thread of the process, by thread id. */
    static Map<Long, Long> schedstat(long pid) throws IOException {
        Map<Long, Long> run = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String text = Files.readString(task.resolve("schedstat"));
                    run.put(Long.parseLong(task.getFileName().toString()),
                            Long.parseLong(text.substring(0, text.indexOf(' '))));
                } catch (IOException gone) {
                    // the thread ended between the listing and the read
                }
            }
        }
        return run;
    }

    /** The run time the process's threads added between two readings (a thread new in the second counts whole). */
    static long runDelta(Map<Long, Long> before, Map<Long, Long> after) {
        long sum = 0;
        for (Map.Entry<Long, Long> thread : after.entrySet()) {
            sum += thread.getValue() - before.getOrDefault(thread.getKey(), 0L);
        }
        return sum;
    }

    /** utime and stime of the process (all its threads, also ended ones), in clock ticks. */
    static long[] ticks(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return new long[] {Long.parseLong(fields[11]), Long.parseLong(fields[12])}; // fields 14 and 15 of stat
    }

    /** The machine's idle (idle + iowait) and total ticks over all cores, from /proc/stat. */
    static long[] machine() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/stat"))) {
            if (line.startsWith("cpu ")) {
                String[] f = line.trim().split("\\s+");
                long total = 0;
                for (int i = 1; i <= 8 && i < f.length; i++) {
                    total += Long.parseLong(f[i]);
                }
                return new long[] {Long.parseLong(f[4]) + Long.parseLong(f[5]), total};
            }
        }
        return new long[] {0, 0};
    }

    static long ticksPerSecond() {
        try {
            Process getconf = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
            String out = new String(getconf.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            return getconf.waitFor() == 0 ? Long.parseLong(out) : 100;
        } catch (IOException | InterruptedException | NumberFormatException e) {
            return 100;
        }
    }

    static long percentile(long[] sorted, double p) {
        return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) (sorted.length * p))];
    }

    // ------------------------------------------------------------------------------------------ protocol

    /** A minimal MySQL/MariaDB protocol client: login, COM_QUERY, COM_RESET_CONNECTION, COM_CHANGE_USER. */
    static final class Client implements AutoCloseable {
        static final int CLIENT_MYSQL = 1;               // CLIENT_LONG_PASSWORD; MariaDB: not a MariaDB-only client
        static final int CLIENT_LONG_FLAG = 4;
        static final int CLIENT_CONNECT_WITH_DB = 8;
        static final int CLIENT_PROTOCOL_41 = 0x200;
        static final int CLIENT_TRANSACTIONS = 0x2000;
        static final int CLIENT_SECURE_CONNECTION = 0x8000;
        static final int CLIENT_MULTI_RESULTS = 0x20000;
        static final int CLIENT_PS_MULTI_RESULTS = 0x40000;
        static final int CLIENT_PLUGIN_AUTH = 0x80000;
        static final int CLIENT_PLUGIN_AUTH_LENENC = 0x200000;
        static final int CLIENT_SESSION_TRACK = 0x800000;
        static final int CLIENT_DEPRECATE_EOF = 0x1000000;
        static final int WANTED = CLIENT_MYSQL | CLIENT_LONG_FLAG | CLIENT_CONNECT_WITH_DB | CLIENT_PROTOCOL_41
                | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION | CLIENT_MULTI_RESULTS | CLIENT_PS_MULTI_RESULTS
                | CLIENT_PLUGIN_AUTH | CLIENT_PLUGIN_AUTH_LENENC | CLIENT_SESSION_TRACK | CLIENT_DEPRECATE_EOF;
        static final int COLLATION = 45; // utf8mb4_general_ci, the sandbox servers' default
        static final String NATIVE = "mysql_native_password";

        final Socket socket;
        final InputStream in;
        final OutputStream out;
        final String user;
        final byte[] password;
        final String database;
        final Map<Way, Integer> authSwitches = new HashMap<>();
        String serverVersion;
        long connectionId;
        int capabilities;
        byte[] scramble;
        int sequence;
        byte[] header = new byte[4];

        private Client(Socket socket, String user, String password, String database) throws IOException {
            this.socket = socket;
            this.in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
            this.out = socket.getOutputStream();
            this.user = user;
            this.password = password.getBytes(StandardCharsets.UTF_8);
            this.database = database;
        }

        static Client connect(int port, String user, String password, String database) throws IOException {
            Socket socket = new Socket();
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            socket.setSoTimeout(30_000);
            Client client = new Client(socket, user, password, database);
            client.login();
            return client;
        }

        private void login() throws IOException {
            sequence = 0;
            Reader handshake = new Reader(readPacket());
            int protocol = handshake.u1();
            if (protocol == 0xFF) {
                throw new IOException("the server refused the connection: " + error(handshake.payload));
            }
            serverVersion = handshake.nulString();
            if (serverVersion.startsWith("5.5.5-")) {
                serverVersion = serverVersion.substring(6); // MariaDB before 11.0 prefixes this for old clients
            }
            connectionId = handshake.u4();
            byte[] first = handshake.bytes(8);
            handshake.skip(1);
            int serverCaps = handshake.u2();
            handshake.skip(1 + 2); // collation, status
            serverCaps |= handshake.u2() << 16;
            int authLength = handshake.u1();
            handshake.skip(10);
            byte[] second = handshake.bytes(Math.max(13, authLength - 8) - 1);
            handshake.skip(1);
            String plugin = (serverCaps & CLIENT_PLUGIN_AUTH) != 0 ? handshake.nulString() : NATIVE;
            scramble = concat(first, second);
            if ((serverCaps & CLIENT_PROTOCOL_41) == 0 || (serverCaps & CLIENT_PLUGIN_AUTH) == 0) {
                throw new IOException("the server lacks CLIENT_PROTOCOL_41 or CLIENT_PLUGIN_AUTH");
            }
            capabilities = WANTED & serverCaps;

            Writer response = new Writer();
            response.u4(capabilities).u4(1 << 24).u1(COLLATION).zeros(23).nulString(user);
            byte[] auth = NATIVE.equals(plugin) ? nativePassword(scramble) : new byte[0];
            response.u1(auth.length).bytes(auth); // 20 bytes: the same as a length-encoded length or a 1-byte one
            response.nulString(database).nulString(NATIVE);
            writePacket(response.toArray());
            finishAuth(null);
        }

        /** After a login or change-user packet: follows an auth switch to mysql_native_password, then wants OK. */
        private void finishAuth(Way way) throws IOException {
            while (true) {
                byte[] reply = readPacket();
                int first = reply[0] & 0xFF;
                if (first == 0x00) {
                    return;
                }
                if (first == 0xFF) {
                    throw new IOException("authentication failed: " + error(reply));
                }
                if (first == 0xFE) {
                    Reader request = new Reader(reply);
                    request.skip(1);
                    String plugin = request.nulString();
                    if (!NATIVE.equals(plugin)) {
                        throw new IOException("the server asks for " + plugin + "; only " + NATIVE + " is done here");
                    }
                    scramble = Arrays.copyOf(request.rest(), 20);
                    if (way != null) {
                        authSwitches.merge(way, 1, Integer::sum);
                    }
                    writePacket(nativePassword(scramble));
                    continue;
                }
                throw new IOException("unexpected packet during authentication, header 0x" + Integer.toHexString(first));
            }
        }

        byte[] nativePassword(byte[] seed) {
            if (password.length == 0) {
                return new byte[0];
            }
            try {
                MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
                byte[] stage1 = sha1.digest(password);
                byte[] stage2 = sha1.digest(stage1);
                sha1.update(seed, 0, 20);
                sha1.update(stage2);
                byte[] token = sha1.digest();
                for (int i = 0; i < token.length; i++) {
                    token[i] ^= stage1[i];
                }
                return token;
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }

        void resetConnection() throws IOException {
            sequence = 0;
            writePacket(new byte[] {0x1F});
            expectOk("COM_RESET_CONNECTION");
        }

        /** COM_CHANGE_USER to the same account, answered with the last scramble the server sent. */
        void changeUser(Way way) throws IOException {
            sequence = 0;
            byte[] auth = nativePassword(scramble);
            Writer change = new Writer();
            change.u1(0x11).nulString(user).u1(auth.length).bytes(auth).nulString(database)
                    .u2(COLLATION).nulString(NATIVE);
            writePacket(change.toArray());
            finishAuth(way);
        }

        void query(String sql) throws IOException {
            sendQuery(sql);
            expectOk(sql);
        }

        /** COM_QUERY with {@code sql}, a new command (sequence 0). */
        private void sendQuery(String sql) throws IOException {
            sequence = 0;
            byte[] text = sql.getBytes(StandardCharsets.UTF_8);
            byte[] payload = new byte[text.length + 1];
            payload[0] = 0x03;
            System.arraycopy(text, 0, payload, 1, text.length);
            writePacket(payload);
        }

        /** A query answering one row of one column: its value as text (null for SQL NULL). */
        String queryValue(String sql) throws IOException {
            sendQuery(sql);
            byte[] first = readPacket();
            if ((first[0] & 0xFF) == 0xFF) {
                throw new IOException(sql + ": " + error(first));
            }
            long columns = new Reader(first).lenenc();
            for (long i = 0; i < columns; i++) {
                readPacket();
            }
            if ((capabilities & CLIENT_DEPRECATE_EOF) == 0) {
                readPacket();
            }
            String value = null;
            boolean seen = false;
            while (true) {
                byte[] row = readPacket();
                int head = row[0] & 0xFF;
                if (head == 0xFE && row.length < 0xFFFFFF) {
                    break;
                }
                if (head == 0xFF) {
                    throw new IOException(sql + ": " + error(row));
                }
                if (!seen) {
                    seen = true;
                    value = head == 0xFB ? null : new Reader(row).lenencString();
                }
            }
            return value;
        }

        private void expectOk(String what) throws IOException {
            byte[] reply = readPacket();
            if ((reply[0] & 0xFF) != 0x00) {
                throw new IOException(what + ": " + ((reply[0] & 0xFF) == 0xFF ? error(reply)
                        : "expected OK, header 0x" + Integer.toHexString(reply[0] & 0xFF)));
            }
        }

        static String error(byte[] err) {
            Reader reader = new Reader(err);
            reader.skip(1);
            int code = reader.u2();
            String rest = new String(reader.rest(), StandardCharsets.UTF_8);
            return "error " + code + " " + (rest.startsWith("#") ? rest.substring(6) : rest);
        }

        byte[] readPacket() throws IOException {
            readFully(header, 4);
            int length = (header[0] & 0xFF) | (header[1] & 0xFF) << 8 | (header[2] & 0xFF) << 16;
            sequence = (header[3] & 0xFF) + 1;
            byte[] payload = new byte[length];
            readFully(payload, length);
            if (length == 0xFFFFFF) {
                throw new IOException("packets of 16 MiB and more are not needed here");
            }
            return payload;
        }

        private void readFully(byte[] into, int length) throws IOException {
            int at = 0;
            while (at < length) {
                int n = in.read(into, at, length - at);
                if (n < 0) {
                    throw new EOFException("the server closed the connection");
                }
                at += n;
            }
        }

        void writePacket(byte[] payload) throws IOException {
            byte[] packet = new byte[payload.length + 4];
            packet[0] = (byte) payload.length;
            packet[1] = (byte) (payload.length >>> 8);
            packet[2] = (byte) (payload.length >>> 16);
            packet[3] = (byte) sequence++;
            System.arraycopy(payload, 0, packet, 4, payload.length);
            out.write(packet);
            out.flush();
        }

        @Override
        public void close() throws IOException {
            try {
                sequence = 0;
                writePacket(new byte[] {0x01}); // COM_QUIT
            } catch (IOException ignored) {
                // closing anyway
            }
            socket.close();
        }
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }

    static final class Reader {
        final byte[] payload;
        int at;

        Reader(byte[] payload) {
            this.payload = payload;
        }

        int u1() {
            return payload[at++] & 0xFF;
        }

        int u2() {
            return u1() | u1() << 8;
        }

        long u4() {
            return (u2() | (long) u2() << 16) & 0xFFFFFFFFL;
        }

        void skip(int n) {
            at += n;
        }

        byte[] bytes(int n) {
            byte[] out = Arrays.copyOfRange(payload, at, at + n);
            at += n;
            return out;
        }

        byte[] rest() {
            return bytes(payload.length - at);
        }

        String nulString() {
            int end = at;
            while (end < payload.length && payload[end] != 0) {
                end++;
            }
            String text = new String(payload, at, end - at, StandardCharsets.UTF_8);
            at = Math.min(payload.length, end + 1);
            return text;
        }

        long lenenc() {
            int first = u1();
            return switch (first) {
                case 0xFC -> u2();
                case 0xFD -> u2() | (long) u1() << 16;
                case 0xFE -> u4() | u4() << 32;
                default -> first;
            };
        }

        String lenencString() {
            int length = (int) lenenc();
            return new String(bytes(length), StandardCharsets.UTF_8);
        }
    }

    static final class Writer {
        final List<byte[]> parts = new ArrayList<>();
        int size;

        Writer bytes(byte[] b) {
            parts.add(b);
            size += b.length;
            return this;
        }

        Writer u1(int v) {
            return bytes(new byte[] {(byte) v});
        }

        Writer u2(int v) {
            return bytes(new byte[] {(byte) v, (byte) (v >>> 8)});
        }

        Writer u4(int v) {
            return bytes(new byte[] {(byte) v, (byte) (v >>> 8), (byte) (v >>> 16), (byte) (v >>> 24)});
        }

        Writer zeros(int n) {
            return bytes(new byte[n]);
        }

        Writer nulString(String s) {
            bytes(s.getBytes(StandardCharsets.UTF_8));
            return u1(0);
        }

        byte[] toArray() {
            byte[] out = new byte[size];
            int at = 0;
            for (byte[] part : parts) {
                System.arraycopy(part, 0, out, at, part.length);
                at += part.length;
            }
            return out;
        }
    }
}
