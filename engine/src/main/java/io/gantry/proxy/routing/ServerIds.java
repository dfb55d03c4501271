package io.gantry.proxy.routing;

import io.gantry.gtid.SampledPosition;
import io.gantry.route.ServerId;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import java.util.List;

/**
 * The routing id of each server in the current upstream list. Routing runs per statement, so ids are made once per
 * list rather than per statement; when the list changes the table is rebuilt from the new list, so a server that
 * left it (and its URL, password included) is not kept alive here.
 */
public final class ServerIds {

    /** The list the ids were made for, and the id of each of its servers at the same index. */
    private record Table(List<UpstreamServer> servers, ServerId[] ids) {
    }

    private final Upstreams upstreams;
    private volatile Table table = new Table(List.of(), new ServerId[0]);

    public ServerIds(Upstreams upstreams) {
        this.upstreams = upstreams;
    }

    /** The id of {@code server}; a server no longer in the list (a session's old connection) gets a fresh one. */
    public ServerId of(UpstreamServer server) {
        return of(current(), server);
    }

    /** The server of the current list that {@code id} names, or null when none does. */
    public UpstreamServer find(ServerId id) {
        Table known = current();
        for (int i = 0; i < known.ids().length; i++) {
            if (known.ids()[i].equals(id)) {
                return known.servers().get(i);
            }
        }
        return null;
    }

    /** The last sampled position of the server {@code id} names, or null when none is known or it left the list. */
    public SampledPosition positionOf(ServerId id) {
        UpstreamServer server = find(id);
        return server == null ? null : server.position();
    }

    /** The server of the current list that {@code id} names. */
    public UpstreamServer server(ServerId id) {
        UpstreamServer server = find(id);
        if (server == null) {
            throw new IllegalStateException("routing chose " + id + ", which is not in the upstream list");
        }
        return server;
    }

    private Table current() {
        Table known = table;
        List<UpstreamServer> servers = upstreams.servers();
        if (known.servers() == servers) {
            return known;
        }
        ServerId[] ids = new ServerId[servers.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = of(known, servers.get(i));
        }
        Table rebuilt = new Table(servers, ids);
        table = rebuilt;
        return rebuilt;
    }

    /** The id {@code server} had in {@code table}, kept across list changes; a new one for a new server. */
    private static ServerId of(Table table, UpstreamServer server) {
        for (int i = 0; i < table.ids().length; i++) {
            if (table.servers().get(i) == server) {
                return table.ids()[i];
            }
        }
        return new ServerId(server.address());
    }
}
