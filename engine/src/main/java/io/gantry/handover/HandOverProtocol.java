package io.gantry.handover;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a Gantry taking over ({@code gantry run --take-over}) and the running one say on the hand-over socket, one
 * line of text each way, and the messages that carry a socket's descriptor ({@code SCM_RIGHTS}).
 *
 * <pre>
 * running Gantry                                   Gantry taking over
 *   gantry-hand-over 3 pid=.. gantry=.. listen=.. transport=.. busy=..  -&gt;
 *                                                  &lt;-  LISTENER
 *   (the listening socket's descriptor)            -&gt;   adopted, still not accepting
 *                                                  &lt;-  RELEASE
 *   change stream paused and saved, admin socket,
 *   metrics port and Authority let go;
 *   RELEASED ids-after=N                           -&gt;   starts on the data directory, accepts; its
 *                                                       sessions' ids are above N
 *                                                  &lt;-  LISTENING
 *   MOVING: stops accepting (the socket stays)     -&gt;   starts its change stream
 *                                                  &lt;-  SESSIONS max
 *   SESSIONS n, then n lines                       -&gt;   (or WAIT held=.. ended=.., or DONE ended=..)
 *     SESSION id {state as JSON}
 *                                                  &lt;-  DESCRIPTOR id, for each of the n
 *   (each client socket's descriptor, in order)    -&gt;   a session of each, not yet reading
 *                                                  &lt;-  ADOPTED id (or KEPT id reason), for each
 *   closes its copies; SESSIONS again ...               they start reading
 *                                                  &lt;-  DRAIN (--take-over-timeout passed)
 *   DRAINING held=.. ended=..: drains, exits       -&gt;
 * </pre>
 *
 * <p>The greeting's first two words are the same in every version: a Gantry that reads another version number stops
 * there, having asked nothing. Until {@code DONE} or {@code DRAINING} the running Gantry takes back what it let go
 * when the connection closes (and accepts again), so a Gantry taking over that fails or is killed leaves it serving
 * every session it still holds; a session it sent is its own again unless {@code ADOPTED} arrived first. Once the
 * new one listens ({@code MOVING}) it does so only if that process is gone: while it runs, it serves the port, so a
 * connection that broke on the running Gantry's side (a client that left as its socket was passed) ends as
 * {@code DRAIN} does. A session
 * moves only between two statements and outside a transaction; one that holds a server connection's state moves
 * once it let it go; a TLS session ends as a drain ends it ({@code ended}).
 */
public final class HandOverProtocol {

    /**
     * The version this Gantry speaks; the greeting's second word. 3: the Gantry taken over names the new one to a
     * service manager as its main process before it exits, which systemd's reload needs of both ends. 4: sessions
     * move in batches ({@code SESSIONS max}), not one per exchange.
     */
    public static final int VERSION = 4;
    /**
     * The oldest version a Gantry taking over still speaks to the running one, so that an upgrade from it is a
     * take-over too: with a Gantry of version 3, sessions move one per exchange ({@code SESSION}).
     */
    static final int OLDEST_VERSION_TAKEN_OVER = 3;
    /** The socket's name in the data directory, beside the admin socket. */
    public static final String SOCKET_FILE = "handover.sock";

    static final String GREETING = "gantry-hand-over";
    static final String LISTENER = "LISTENER";
    static final String RELEASE = "RELEASE";
    static final String LISTENING = "LISTENING";
    static final String RELEASED = "RELEASED";
    static final String MOVING = "MOVING";
    static final String SESSIONS = "SESSIONS";
    static final String SESSION = "SESSION";
    static final String WAIT = "WAIT";
    static final String DONE = "DONE";
    static final String DESCRIPTOR = "DESCRIPTOR";
    static final String ADOPTED = "ADOPTED";
    static final String KEPT = "KEPT";
    static final String DRAIN = "DRAIN";
    static final String DRAINING = "DRAINING";
    /** An answer to {@code RELEASE} the running Gantry cannot give: the rest of the line says why. */
    static final String REFUSED = "REFUSED";
    /**
     * The most sessions the Gantry taking over asks for at once: each exchange costs both processes a few trips to
     * their event loops, which under load wait behind the statements there, while the sessions of a batch are held
     * still (their clients' next statements wait in the socket) only for as long as the batch takes.
     */
    public static final int SESSIONS_PER_BATCH = 256;
    /** A greeting line, a request and a reason fit in this; a longer line is not a Gantry's. */
    static final int MAX_LINE_BYTES = 4096;
    /**
     * A session's state fits in this: its prepared statements' texts and its user variables (each at most 64 KiB)
     * are the large part.
     */
    static final int MAX_SESSION_LINE_BYTES = 64 * 1024 * 1024;

    private HandOverProtocol() {
    }

    /** Where the running Gantry of {@code dataDir} listens for a take-over. */
    public static Path socketIn(Path dataDir) {
        return dataDir.resolve(SOCKET_FILE);
    }

    /**
     * The running Gantry's first line.
     *
     * @param version   the hand-over version it speaks
     * @param pid       its process id
     * @param gantry    its version ({@code development build} outside a packaged jar)
     * @param listen    where its proxy listens, {@code host:port}
     * @param transport its {@code --socket-transport}; {@code nio} cannot pass its listening socket
     * @param busy      whether another Gantry is taking over from it now
     */
    public record Greeting(int version, long pid, String gantry, String listen, String transport, boolean busy) {

        /** This Gantry's greeting, of {@link #VERSION}. */
        static Greeting ofThisGantry(long pid, String gantry, String listen, String transport, boolean busy) {
            return new Greeting(VERSION, pid, gantry, listen, transport, busy);
        }

        String line() {
            // Values are single words: a version string with a space would split, so spaces become underscores.
            return GREETING + " " + version + " pid=" + pid + " gantry=" + gantry.replace(' ', '_') + " listen="
                    + listen + " transport=" + transport + " busy=" + busy;
        }

        /**
         * Reads a greeting of a version this Gantry takes over from: {@link #OLDEST_VERSION_TAKEN_OVER} to
         * {@link #VERSION}.
         *
         * @throws HandOverException naming what was read, when it is not a Gantry's greeting or is of another
         *                           version
         */
        static Greeting parse(String line) {
            String[] words = line.strip().split(" ");
            if (words.length < 2 || !words[0].equals(GREETING)) {
                throw new HandOverException("what answers on the hand-over socket is not a Gantry (it said '"
                        + abbreviate(line) + "')");
            }
            int version;
            try {
                version = Integer.parseInt(words[1]);
            } catch (NumberFormatException e) {
                throw new HandOverException("the running Gantry's greeting has no version number: '"
                        + abbreviate(line) + "'");
            }
            if (version < OLDEST_VERSION_TAKEN_OVER || version > VERSION) {
                throw new HandOverException("the running Gantry speaks hand-over version " + version + " and this "
                        + "one speaks version " + VERSION + " (taking over from version " + OLDEST_VERSION_TAKEN_OVER
                        + " on): nothing was taken over. Take over with a Gantry that speaks version " + version
                        + ", or stop the running one (SIGTERM drains it) and start this one without --take-over");
            }
            Map<String, String> fields = new LinkedHashMap<>();
            for (int i = 2; i < words.length; i++) {
                int equals = words[i].indexOf('=');
                if (equals > 0) {
                    fields.put(words[i].substring(0, equals), words[i].substring(equals + 1));
                }
            }
            try {
                return new Greeting(version, Long.parseLong(fields.get("pid")), fields.get("gantry").replace('_', ' '),
                        fields.get("listen"), fields.get("transport"), Boolean.parseBoolean(fields.get("busy")));
            } catch (RuntimeException e) {
                throw new HandOverException("the running Gantry's greeting lacks a field of version " + version
                        + ": '" + abbreviate(line) + "'");
            }
        }
    }

    static String abbreviate(String text) {
        return text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }
}
