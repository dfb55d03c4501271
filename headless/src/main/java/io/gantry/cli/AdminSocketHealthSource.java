package io.gantry.cli;

import io.gantry.admin.client.AdminClient;
import io.gantry.admin.protocol.HealthPoint;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A running Gantry's health history read through its admin socket, a {@code health} page at a time, as the
 * console's export reads it: while Gantry runs, its Authority is open in its own process and no other may open it.
 */
final class AdminSocketHealthSource {

    /** The largest page the socket gives. */
    static final int PAGE = 10_000;
    /** An admin read runs up to 30 s in the engine. */
    private static final Duration PAGE_TIMEOUT = Duration.ofSeconds(40);

    private final AdminClient client;

    AdminSocketHealthSource(AdminClient client) {
        this.client = client;
    }

    /**
     * Every sample in [from, to) of {@code server} (or all), oldest first.
     *
     * @throws IOException when the engine refuses a page or the connection ends, naming which
     */
    void forEach(Instant from, Instant to, Optional<String> server, Consumer<HealthPoint> sink) throws IOException {
        Instant page = from;
        while (true) {
            Instant pageFrom = page;
            Reply reply = client.call(id -> new Request.Health(id, pageFrom, to, server.orElse(null), PAGE),
                    PAGE_TIMEOUT);
            if (reply instanceof Reply.Error refused) {
                throw new IOException("the engine refused to read the health history: " + refused.error() + ": "
                        + refused.message());
            }
            if (!(reply instanceof Reply.Health health)) {
                throw new IOException("the engine answered a health request with "
                        + reply.getClass().getSimpleName());
            }
            health.samples().forEach(sink);
            if (health.next() == null) {
                return;
            }
            page = health.next();
        }
    }
}
