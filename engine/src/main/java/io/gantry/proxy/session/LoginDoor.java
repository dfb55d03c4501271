package io.gantry.proxy.session;

import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.events.EngineEvent;
import io.gantry.events.EventPublisher;
import io.gantry.proxy.login.ClientAuthentication;
import io.gantry.proxy.login.GantryRsaKey;
import io.gantry.proxy.login.LoginGate;
import io.gantry.proxy.login.ServerGreetings;
import io.gantry.topology.AccountLookup;
import io.gantry.topology.KnownAccounts;
import io.gantry.topology.Upstreams;
import io.gantry.wire.GreetingTemplate;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a connection logging in needs, shared by every session of a proxy: the login gate (pending logins, blocked
 * hosts, delayed refusals), the TLS context, Gantry's RSA key, the accounts (known ones, kept fresh by the change
 * stream, else looked up on the servers), and the greeting mirrored from the primary.
 */
public final class LoginDoor implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger("io.gantry.proxy.ProxyServer");

    private final ProxyConfig config;
    private final Upstreams upstreams;
    private final LoginGate gate;
    private final ServerGreetings greetings;
    private final Optional<SslContext> sslContext;
    private final GantryRsaKey rsaKey = GantryRsaKey.generate();
    private final AccountLookup accounts;
    private final KnownAccounts knownAccounts;
    /** Logins let in on known entries, without asking a server. */
    private final LongAdder knownLogins = new LongAdder();
    /** Account look-ups are JDBC calls: a few threads of their own, never the event loops. */
    private final ExecutorService accountExecutor = Executors.newFixedThreadPool(2,
            new DefaultThreadFactory("gantry-accounts", true));
    private volatile EventPublisher events = EventPublisher.NONE;

    /**
     * @param serverVersion the version string shown to clients until the primary's greeting is known
     */
    public LoginDoor(ProxyConfig config, Upstreams upstreams, String serverVersion, Clock clock) {
        this.config = config;
        this.upstreams = upstreams;
        this.gate = new LoginGate(config.login(), clock);
        this.greetings = new ServerGreetings(serverVersion);
        this.sslContext = config.tls().map(LoginDoor::sslContext);
        // Bounded as a health check: a frozen primary must not outlast the client's login deadline, and the
        // look-up moves on to a replica.
        this.accounts = new AccountLookup(upstreams, config.failover().healthCheckTimeout());
        // Two sampling intervals: a sample may come one round late before known entries stop being used.
        this.knownAccounts = new KnownAccounts(upstreams, config.readGuarantees().sampleInterval().multipliedBy(2),
                clock);
    }

    /** The accounts known from earlier logins, which the change stream keeps fresh once Gantry wires it in. */
    public KnownAccounts knownAccounts() {
        return knownAccounts;
    }

    /** Where a blocked host is told, for the timeline ({@link EventKind#HOST_BLOCKED}). */
    public void setEvents(EventPublisher events) {
        this.events = events;
    }

    public LoginGate gate() {
        return gate;
    }

    public Optional<SslContext> sslContext() {
        return sslContext;
    }

    public GantryRsaKey rsaKey() {
        return rsaKey;
    }

    /** Where every backend connection reports the greeting it got. */
    public ServerGreetings greetings() {
        return greetings;
    }

    /** The greeting for a new client connection: the current primary's, mirrored (see {@link ServerGreetings}). */
    public GreetingTemplate clientGreeting() {
        return greetings.templateForClient(upstreams.primary(), sslContext.isPresent(), config.defaultAuthPlugin());
    }

    /**
     * The login decided on the account's known entries, when the change stream vouches for them and they let it in;
     * empty when the servers' entries must decide ({@link #lookupAccount}): a refusal is never made on known entries,
     * which may be older than the server's. Never blocks.
     */
    public Optional<ClientAuthentication.Step> acceptKnown(String user, ClientAuthentication authentication) {
        Optional<ClientAuthentication.Step> accepted = knownAccounts.current(user).flatMap(authentication::acceptKnown);
        if (accepted.isPresent()) {
            knownLogins.increment();
        }
        return accepted;
    }

    /**
     * The account's entries on the primary (on an up replica when the primary cannot answer), looked up off the
     * event loop and kept as known. Fails with {@link AccountLookup.ServersUnreachableException} when no server can
     * be asked.
     */
    public CompletableFuture<List<AccountLookup.AccountEntry>> lookupAccount(String user) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                long generation = knownAccounts.generation();
                List<AccountLookup.AccountEntry> entries = accounts.entries(user);
                knownAccounts.remember(user, entries, generation);
                return entries;
            } catch (AccountLookup.ServersUnreachableException e) {
                throw new CompletionException(e);
            }
        }, accountExecutor);
    }

    /** Account look-ups a server answered, and logins let in on known entries: for {@code SHOW GANTRY STATUS}. */
    public Map<String, String> accountStatus() {
        Map<String, String> rows = new LinkedHashMap<>();
        rows.put("Account_lookups", Long.toString(accounts.lookups()));
        rows.put("Account_cache_hits", Long.toString(knownLogins.sum()));
        rows.put("Accounts_known", Long.toString(knownAccounts.size()));
        return rows;
    }

    /** A host was blocked after failed handshakes: a log line and an event on the timeline. */
    public void hostBlocked(LoginGate.Refusal.Blocked blocked) {
        String reason = blocked.failures() + " malformed or unfinished handshakes in a row; new connections from it "
                + "are refused for " + config.login().blockFor().toSeconds() + " s "
                + "(--max-handshake-errors-until-block, --auth-block-secs; FLUSH GANTRY HOST lifts it)";
        LOG.warn("proxy: blocked host {}: {}", blocked.host(), reason);
        events.publish(new EngineEvent.Timeline(new Event(0, blocked.until().minus(config.login().blockFor()),
                blocked.host(), EventKind.HOST_BLOCKED, reason)));
    }

    private static SslContext sslContext(ProxyConfig.TlsFiles files) {
        try {
            return SslContextBuilder.forServer(files.certificate().toFile(), files.key().toFile()).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot use --tls-cert " + files.certificate() + " with --tls-key "
                    + files.key() + " (a PEM certificate and a PKCS#8 PEM key are needed): " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        accountExecutor.shutdownNow();
        try {
            accountExecutor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        accounts.close();
    }
}
