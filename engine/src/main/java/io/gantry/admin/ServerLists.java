package io.gantry.admin;

import io.gantry.authority.Authority;
import io.gantry.authority.Purpose;
import io.gantry.authority.StoredServer;
import io.gantry.cdc.CdcStream;
import io.gantry.cluster.ClusterException;
import io.gantry.cluster.SharedConfiguration;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

/**
 * This instance's server lists, the proxy's and the change stream's, as they are changed: in the Authority (with the
 * timeline's event) and live (the upstreams, the change stream). In a cluster they are part of the local copy of
 * the shared configuration ({@link LocalCopy}), which a new version is {@linkplain #apply applied} to. Changes are
 * serialised on this object.
 *
 * <p>Passwords are never stored nor shared: each account's password is the one this instance was given (its
 * {@code --upstream-db-url}, or an {@code ALTER GANTRY CHANGE} that named it), and a list that names an account this
 * instance has no password for is refused here.
 */
final class ServerLists {

    private final Upstreams upstreams;
    private final Authority authority;
    private final Optional<CdcStream> cdc;
    private volatile List<UpstreamUrl> cdcList;
    private final Map<String, String> passwords = new ConcurrentHashMap<>();
    /** Streams besides the instance's own that read the CDC list (a cluster's feed). */
    private final List<BiConsumer<List<UpstreamUrl>, String>> otherStreams = new CopyOnWriteArrayList<>();

    ServerLists(Upstreams upstreams, Authority authority, List<UpstreamUrl> cdcList, Optional<CdcStream> cdc) {
        this.upstreams = upstreams;
        this.authority = authority;
        this.cdc = cdc;
        this.cdcList = List.copyOf(cdcList);
        learnPasswords(cdcList);
        learnPasswords(upstreams.servers().stream().map(UpstreamServer::url).toList());
    }

    /** Remembers the password of each account of {@code urls}, for lists that name them later. */
    void learnPasswords(List<UpstreamUrl> urls) {
        for (UpstreamUrl url : urls) {
            if (url.password() != null) {
                passwords.putIfAbsent(url.user(), url.password());
            }
        }
    }

    /** {@code stream} hears of every change of the CDC list, with who made it, after the instance's own stream. */
    void alsoTell(BiConsumer<List<UpstreamUrl>, String> stream) {
        otherStreams.add(stream);
    }

    private void tellStreams(List<UpstreamUrl> servers, String by) {
        cdc.ifPresent(stream -> stream.changeServers(servers, by));
        otherStreams.forEach(stream -> stream.accept(servers, by));
    }

    List<UpstreamUrl> cdcList() {
        return cdcList;
    }

    boolean onCdcList(String hostPort) {
        return cdcList.stream().anyMatch(u -> u.address().equalsIgnoreCase(hostPort.strip()));
    }

    /**
     * Sets the weight on every list that has the server.
     *
     * @param why what the event adds to the change itself, null for nothing
     * @return false when every list has that weight already: nothing changed
     */
    synchronized boolean setWeight(String hostPort, int weight, String why) {
        if (!authority.setWeight(hostPort, weight, why)) {
            return false;
        }
        if (upstreams.find(hostPort).isPresent()) {
            upstreams.setWeight(hostPort, weight);
        }
        if (onCdcList(hostPort)) {
            cdcList = cdcList.stream().map(u -> u.address().equalsIgnoreCase(hostPort.strip())
                    ? u.withWeight(weight) : u).toList();
            tellStreams(cdcList, why == null ? "ALTER GANTRY SET WEIGHT" : why);
        }
        return true;
    }

    /** Replaces a list; {@code reason} goes to the timeline. */
    synchronized void replace(Purpose purpose, List<UpstreamUrl> urls, String reason) {
        learnPasswords(urls);
        authority.replaceServerList(purpose, stored(urls), reason);
        if (purpose == Purpose.PROXY) {
            upstreams.replace(urls, reason);
        } else {
            cdcList = List.copyOf(urls);
            tellStreams(cdcList, reason);
        }
    }

    /** The lists as the shared configuration holds them (no caches: {@link LocalCopy} adds them). */
    SharedConfiguration current() {
        List<SharedConfiguration.Server> proxy = new ArrayList<>();
        for (UpstreamServer server : upstreams.servers()) {
            UpstreamUrl url = server.url();
            proxy.add(new SharedConfiguration.Server(url.host(), url.port(), url.database(), url.user(),
                    server.weight(), url.tls().query()));
        }
        return new SharedConfiguration(proxy, shared(cdcList));
    }

    /**
     * Goes to {@code next}: weights alone change weight by weight (an event for each server), a list whose servers
     * changed is replaced; nothing happens when it is what this instance has.
     */
    synchronized void apply(SharedConfiguration next, String reason) {
        SharedConfiguration now = current();
        if (now.equals(next)) {
            return;
        }
        boolean proxySame = now.sameServers(Purpose.PROXY, next);
        boolean cdcSame = now.sameServers(Purpose.CDC, next);
        Map<String, Integer> weights = weightsIfOnePerServer(next);
        if (proxySame && cdcSame && weights != null) {
            weights.forEach((address, weight) -> setWeight(address, weight, reason));
            return;
        }
        if (!now.proxy().equals(next.proxy())) {
            replace(Purpose.PROXY, urls(next.proxy()), reason);
        }
        if (!now.cdc().equals(next.cdc())) {
            replace(Purpose.CDC, urls(next.cdc()), reason);
        }
    }

    /** Each server's weight in {@code configuration}, or null when a server has two (one per list). */
    private static Map<String, Integer> weightsIfOnePerServer(SharedConfiguration configuration) {
        Map<String, Integer> weights = new HashMap<>();
        for (SharedConfiguration.Server server : concat(configuration.proxy(), configuration.cdc())) {
            Integer before = weights.putIfAbsent(server.address().toLowerCase(java.util.Locale.ROOT),
                    server.weight());
            if (before != null && before != server.weight()) {
                return null;
            }
        }
        return weights;
    }

    private static List<SharedConfiguration.Server> concat(List<SharedConfiguration.Server> a,
                                                         List<SharedConfiguration.Server> b) {
        List<SharedConfiguration.Server> both = new ArrayList<>(a);
        both.addAll(b);
        return both;
    }

    private List<UpstreamUrl> urls(List<SharedConfiguration.Server> servers) {
        List<UpstreamUrl> urls = new ArrayList<>();
        for (SharedConfiguration.Server server : servers) {
            String password = passwords.get(server.user());
            if (password == null) {
                throw new ClusterException("the list names the account '" + server.user() + "' (for "
                        + server.address() + "), whose password this instance does not know: passwords are never "
                        + "shared through the cluster, give it in this instance's --upstream-db-url");
            }
            urls.add(new UpstreamUrl(server.host(), server.port(), server.database(), server.user(), password,
                    server.weight(), UpstreamUrl.parseTls(server.tls() == null ? "" : server.tls())));
        }
        return urls;
    }

    static List<SharedConfiguration.Server> shared(List<UpstreamUrl> urls) {
        return stored(urls).stream().map(SharedConfiguration.Server::of).toList();
    }

    static List<StoredServer> stored(List<UpstreamUrl> urls) {
        return urls.stream().map(u -> new StoredServer(u.host(), u.port(), u.database(), u.user(), u.weight(),
                Optional.of(u.tls().query()))).toList();
    }
}
