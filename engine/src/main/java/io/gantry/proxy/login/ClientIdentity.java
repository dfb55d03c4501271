package io.gantry.proxy.login;

import io.gantry.proxy.backend.BackendLogin;
import io.gantry.proxy.backend.BackendPool;
import io.gantry.proxy.backend.BackendSecret;
import java.nio.charset.StandardCharsets;

/**
 * Who a session's client is and what its login negotiated: its account, the database it asked for, its collation,
 * the capabilities both sides have, whether the connection is encrypted, and the secret its backend logins use. The
 * login writes it; everything else only reads it. Read and written on the session's event loop.
 */
public final class ClientIdentity {

    /** The collation a client gets when its handshake names none. */
    public static final int UTF8MB4_GENERAL_CI = 45;

    private int capabilities;
    /** MariaDB extended capabilities negotiated with the client (0 for MySQL clients and primaries). */
    private int mariaDbCapabilities;
    private int collationId = UTF8MB4_GENERAL_CI;
    private String user = "";
    private String initialDatabase = "";
    private boolean tlsActive;
    /** The scramble of the greeting (20 printable bytes), which COM_CHANGE_USER answers too; empty before it. */
    private byte[] scramble = new byte[0];
    /** Whether the greeting was a MariaDB server's (its authentication plugins), not MySQL's. */
    private boolean greetedAsMariaDb;
    /** The client's secret for backend logins; only here, cleared when the session ends or changes user. */
    private BackendSecret secret;
    /** What tells the secret apart in a pool key, made once per secret. */
    private BackendPool.SecretDigest secretDigest;

    public int capabilities() {
        return capabilities;
    }

    public int mariaDbCapabilities() {
        return mariaDbCapabilities;
    }

    public int collationId() {
        return collationId;
    }

    public String user() {
        return user;
    }

    /** The database the client asked for at login or at its last change of user (empty for none). */
    public String initialDatabase() {
        return initialDatabase;
    }

    public boolean tlsActive() {
        return tlsActive;
    }

    /** The greeting went out with {@code seed} as its scramble, as a MariaDB server's greeting or not. */
    public void greeted(byte[] seed, boolean mariaDb) {
        this.scramble = seed.clone();
        this.greetedAsMariaDb = mariaDb;
    }

    public byte[] scramble() {
        return scramble.clone();
    }

    public boolean greetedAsMariaDb() {
        return greetedAsMariaDb;
    }

    /** The client's SSLRequest was accepted: the rest of the connection is encrypted. */
    public void tlsStarted() {
        tlsActive = true;
    }

    /**
     * What the client's handshake response negotiated: the capabilities both sides have, its collation (0 for the
     * default), its account and the database it asked for (empty for none).
     */
    public void handshakeReceived(int capabilities, int mariaDbCapabilities, int collationId, String user,
                                  String database) {
        this.capabilities = capabilities;
        this.mariaDbCapabilities = mariaDbCapabilities;
        this.collationId = collationId == 0 ? UTF8MB4_GENERAL_CI : collationId;
        this.user = user;
        this.initialDatabase = database;
    }

    /** COM_CHANGE_USER: the client goes on as {@code user} in {@code database}; a collation of 0 keeps the current. */
    public void changedUser(String user, String database, int collationId) {
        clearSecret();
        this.user = user;
        this.initialDatabase = database;
        if (collationId != 0) {
            this.collationId = collationId;
        }
    }

    public void keepSecret(BackendSecret newSecret) {
        clearSecret();
        this.secret = newSecret;
        this.secretDigest = BackendPool.SecretDigest.of(newSecret);
    }

    public void clearSecret() {
        if (secret != null) {
            secret.clear();
            secret = null;
        }
        secretDigest = null;
    }

    /** Who the client is and what it negotiated, by value, for a take-over (never of a TLS session). */
    public record Kept(int capabilities, int mariaDbCapabilities, int collationId, String user, String initialDatabase,
                       BackendSecret.Kept secret, String scramble, boolean greetedAsMariaDb) {
    }

    public Kept kept() {
        return new Kept(capabilities, mariaDbCapabilities, collationId, user, initialDatabase,
                secret == null ? null : secret.kept(), new String(scramble, StandardCharsets.ISO_8859_1),
                greetedAsMariaDb);
    }

    /** Takes on what another process's session had ({@link #kept}): its account, negotiation and secret. */
    public void restore(Kept kept) {
        handshakeReceived(kept.capabilities(), kept.mariaDbCapabilities(), kept.collationId(), kept.user(),
                kept.initialDatabase());
        if (kept.secret() != null) {
            keepSecret(BackendSecret.of(kept.secret()));
        }
        // The client answers a COM_CHANGE_USER with the scramble the first Gantry greeted it with.
        greeted(kept.scramble().getBytes(StandardCharsets.ISO_8859_1), kept.greetedAsMariaDb());
    }

    /** Which pooled connections to {@code server} may serve this client: those of its own login. */
    public BackendPool.Key poolKey(String server) {
        return BackendPool.Key.of(server, backendLogin(),
                secretDigest == null ? BackendPool.SecretDigest.of(null) : secretDigest);
    }

    /** What a new backend connection logs in with: the client's account, database, collation and capabilities. */
    public BackendLogin backendLogin() {
        return new BackendLogin(user, secret, initialDatabase, collationId, capabilities, mariaDbCapabilities);
    }
}
