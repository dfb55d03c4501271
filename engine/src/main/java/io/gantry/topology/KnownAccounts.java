package io.gantry.topology;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;
import io.gantry.topology.AccountLookup.AccountEntry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The entries of accounts a server described at a login, kept so that the next login of the account is checked
 * without asking a server. The server stays the only list of accounts: an entry is used only while the change
 * stream vouches that nothing has changed it, and the stream forgets every entry when an account or privilege
 * statement, or a write to a grant table, passes ({@code io.gantry.cdc.AccountEviction}).
 *
 * <p><b>When entries are used.</b> Only while the stream is {@linkplain #streamCurrent current}: it streams, and
 * its applied position (updated after the evictions of each transaction) contains the primary's executed GTID set
 * of the newest position sample, taken at most {@code window} ago. Every account change the primary had committed
 * when that sample was taken has then been seen; one committed after it may not have been: a login can be checked
 * against entries up to {@code window} older than its own moment (docs/clients-and-protocol.md says why that is
 * safe). Otherwise {@link #current} says nothing and the login asks a server, as without this class.
 *
 * <p><b>Why all entries go at once.</b> The statements name accounts in many forms ({@code CURRENT_USER}, roles
 * granted to many accounts, {@code RENAME USER}, host patterns), and a grant table's rows come undecoded; forgetting
 * every entry costs one look-up per account at its next login, and account changes are rare.
 *
 * <p>Entries also expire {@link #MAX_AGE} after they were read: what the binlog never carries (a change made with
 * {@code sql_log_bin=0}, {@code SET GLOBAL default_password_lifetime}) is picked up within that time. Safe from
 * any thread.
 */
public final class KnownAccounts {

    private static final Logger LOG = LoggerFactory.getLogger(KnownAccounts.class);

    /** How long an entry is kept after a server described it, however quiet the change stream. */
    public static final Duration MAX_AGE = Duration.ofSeconds(60);
    /** Accounts kept at most; the least used go first. */
    static final long MAX_ACCOUNTS = 10_000;

    private final Upstreams upstreams;
    private final Duration window;
    private final Clock clock;
    private final Cache<String, List<AccountEntry>> entries;
    /** Counts forgettings: a look-up that a forgetting overtook must not store what it read before it. */
    private final AtomicLong generation = new AtomicLong();
    private volatile boolean streaming;
    /** The stream's applied position after the evictions of its last transaction; null before the first. */
    private volatile GtidSet applied;

    /**
     * @param window how old the newest primary position sample may be for entries to be used: the longest time an
     *               account change can go unseen by a login
     */
    public KnownAccounts(Upstreams upstreams, Duration window, Clock clock) {
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("the account window must be positive, not " + window);
        }
        this.upstreams = upstreams;
        this.window = window;
        this.clock = clock;
        this.entries = Caffeine.newBuilder().maximumSize(MAX_ACCOUNTS).expireAfterWrite(MAX_AGE).build();
    }

    /** The account's entries, when they are kept and the change stream vouches for them now; else empty. */
    public Optional<List<AccountEntry>> current(String user) {
        List<AccountEntry> known = entries.getIfPresent(user);
        if (known == null || !streaming) {
            return Optional.empty();
        }
        SampledPosition primary = upstreams.primary().map(UpstreamServer::position).orElse(null);
        return streamCurrent(applied, primary, clock.instant(), window) ? Optional.of(known) : Optional.empty();
    }

    /** Where a look-up starts: pass it to {@link #remember} with what it read. */
    public long generation() {
        return generation.get();
    }

    /**
     * Keeps what a server said of an account, unless the stream forgot entries since {@code generationAtLookup}
     * (the answer may predate that change). An account without entries is not kept: it cannot log in.
     */
    public void remember(String user, List<AccountEntry> described, long generationAtLookup) {
        if (described.isEmpty() || generation.get() != generationAtLookup) {
            return;
        }
        entries.put(user, List.copyOf(described));
        if (generation.get() != generationAtLookup) {
            entries.invalidate(user); // a forgetting came between the check and the put
        }
    }

    /** Forgets every account: one of them changed, or the stream can no longer say which. */
    public void forgetAll(String why) {
        generation.incrementAndGet();
        long had = entries.estimatedSize();
        entries.invalidateAll();
        LOG.debug("accounts: forgot {} known accounts: {}", had, why);
    }

    /** The stream streams from {@code resumedFrom} (null when it starts from the beginning of the binlog). */
    public void streamStarted(GtidSet resumedFrom) {
        applied = resumedFrom;
        streaming = true;
    }

    /**
     * The stream stopped, retries, moves or snapshots: it may have skipped changes (a snapshot does), so nothing
     * kept so far is trusted again.
     */
    public void streamStopped(String why) {
        streaming = false;
        forgetAll("the change stream " + why);
    }

    /** The stream applied a transaction and made its evictions: its position now includes it. */
    public void streamApplied(GtidSet position) {
        applied = position;
    }

    /** Accounts kept now (an estimate). */
    public long size() {
        return entries.estimatedSize();
    }

    /**
     * Whether a stream at {@code applied} has seen every change the primary had committed no longer than
     * {@code window} before {@code now}: it contains the primary's executed set of a sample taken since.
     */
    static boolean streamCurrent(GtidSet applied, SampledPosition primary, Instant now, Duration window) {
        if (primary == null || primary.sampledAt().isBefore(now.minus(window))) {
            return false;
        }
        GtidSet executed = primary.executed();
        // A primary that has committed nothing yet (a new server; the demo's) has no change to have missed; a stream
        // that starts from the beginning of its binlog has then applied nothing, and knows no position (null).
        return executed.isEmpty()
                || applied != null && applied.flavour() == executed.flavour() && applied.contains(executed);
    }
}
