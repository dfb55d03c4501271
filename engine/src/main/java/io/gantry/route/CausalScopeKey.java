package io.gantry.route;

/**
 * The key of one session's causal scope ({@link CausalScopes#ofAccount}, {@link CausalScopes#ofToken}), made again only
 * when the scope or its name changed: every read of a scoped session asks for it, several times. Confined to the
 * session's event loop.
 */
public final class CausalScopeKey {

    private ReadYourWritesScope scope;
    private String name;
    private String key;

    /**
     * The key for {@code scope}, or null when the session has only its own writes ({@code session}, or {@code token}
     * before a token is set).
     *
     * @param user  the session's account, for {@code account}
     * @param token its {@code gantry_causal_token}, for {@code token}; null when none is set
     */
    public String of(ReadYourWritesScope scope, String user, String token) {
        if (scope == ReadYourWritesScope.SESSION) {
            return null;
        }
        String wanted = scope == ReadYourWritesScope.ACCOUNT ? user : token;
        if (wanted == null) {
            return null;
        }
        if (scope != this.scope || !wanted.equals(name)) {
            this.scope = scope;
            this.name = wanted;
            this.key = scope == ReadYourWritesScope.ACCOUNT ? CausalScopes.ofAccount(wanted)
                    : CausalScopes.ofToken(wanted);
        }
        return key;
    }
}
