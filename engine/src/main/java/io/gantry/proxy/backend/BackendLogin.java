package io.gantry.proxy.backend;

/**
 * What a backend connection logs in with: the account, the client's initial database and collation, and the
 * capabilities negotiated with the client (so the backend frames its responses exactly as the client expects and
 * they can be forwarded byte for byte).
 *
 * @param user          the client's own account
 * @param secret        what answers the servers' scrambles for it (kept only in the session's memory)
 * @param database      initial database, or "" for none
 * @param collationId   the client's collation id from its handshake
 * @param capabilities  the capabilities negotiated with the client
 * @param mariaDbCapabilities the MariaDB extended capabilities negotiated with the client (0 for none)
 */
public record BackendLogin(String user, BackendSecret secret, String database, int collationId, int capabilities,
                    int mariaDbCapabilities) {

    @Override
    public String toString() {
        return "BackendLogin[user=" + user + ", database=" + database + "]";
    }
}
