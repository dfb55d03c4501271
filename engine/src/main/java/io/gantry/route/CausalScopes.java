package io.gantry.route;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The causal scopes of this Gantry, by key ({@code account:NAME}, {@code token:VALUE}), at most {@code maxScopes}.
 * The least written are forgotten (how often and how lately, by Caffeine's policy), but not their writes: those join
 * one scope of the forgotten, whose floor every scoped read must also find, so a forgotten token costs a read some
 * waiting, never a stale answer. The forgotten floor only grows, as recent as the last write of a scope forgotten.
 */
public final class CausalScopes {

    /**
     * How many scopes one Gantry keeps: a scope is a few hundred bytes (its key, a GTID set of one position per
     * domain and server), so at most some tens of MiB.
     */
    public static final long MAX_SCOPES = 100_000;

    private final Cache<String, CausalScope> scopes;
    /** The cache's policy, kept: {@code policy()} makes a new view at each call, and every scoped read looks up. */
    private final Policy<String, CausalScope> policy;
    private final CausalScope forgotten = new CausalScope();
    private final AtomicLong forgottenCount = new AtomicLong();

    public CausalScopes(long maxScopes) {
        if (maxScopes < 1) {
            throw new IllegalArgumentException("a Gantry keeps at least one causal scope, not " + maxScopes);
        }
        // Eviction on the caller's thread: a scope is retired before the write that evicted it returns.
        this.scopes = Caffeine.newBuilder().maximumSize(maxScopes).executor(Runnable::run)
                .evictionListener((String key, CausalScope scope, RemovalCause cause) -> {
                    if (scope != null) {
                        scope.retireInto(forgotten);
                        forgottenCount.incrementAndGet();
                    }
                }).build();
        this.policy = scopes.policy();
    }

    /** The key of an account's scope. */
    public static String ofAccount(String user) {
        return "account:" + user;
    }

    /** The key of a token's scope. */
    public static String ofToken(String token) {
        return "token:" + token;
    }

    /** The scope a write goes to, made if it is new. */
    CausalScope forWrite(String key) {
        return scopes.get(key, ignored -> new CausalScope());
    }

    /**
     * The scope a read must honour, or null when nothing was written in it since it was last forgotten. Looked up
     * quietly, as every read of every scoped session does it: which scopes the cache keeps is decided by their
     * writes.
     */
    CausalScope forRead(String key) {
        return policy.getIfPresentQuietly(key);
    }

    /** The writes of every scope forgotten so far. */
    CausalScope forgotten() {
        return forgotten;
    }

    /** How many scopes were forgotten since the start, for {@code SHOW GANTRY STATUS}. */
    public long forgottenCount() {
        return forgottenCount.get();
    }

    /** How many scopes are known now (an estimate while eviction is under way). */
    public long size() {
        return scopes.estimatedSize();
    }
}
