package io.gantry.proxy.command;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.proxy.execution.SessionBackends;
import io.gantry.proxy.session.ClientWriter;
import io.gantry.proxy.session.LiveSession;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.proxy.session.SessionRegistry;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.ErrPacket;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * {@code KILL [QUERY|CONNECTION] n} with a Gantry session id: the KILL of each of that session's backend threads
 * runs on this session's own connection to the same server, so the server applies its own privilege rules (the
 * same account, or CONNECTION ADMIN / SUPER).
 */
public final class KillCommand {

    private final SessionContext session;
    private final SessionBackends backends;
    private final ClientWriter client;
    /** Where the session a KILL names is found. */
    private final SessionRegistry sessions;
    private final Upstreams upstreams;

    KillCommand(SessionContext session, SessionBackends backends, ClientWriter client, SessionRegistry sessions,
                Upstreams upstreams) {
        this.session = session;
        this.backends = backends;
        this.client = client;
        this.sessions = sessions;
        this.upstreams = upstreams;
    }

    Reply run(SessionIdentitySql.Kill kill) {
        return run(kill, error -> session.finish(error == null ? Reply.OK : Reply.error(error)));
    }

    /**
     * Carries out {@code kill}; {@code done} gets null once it is done, or the error of a server's refusal. A KILL of
     * the session itself closes it once it answered: the answer is written here, and {@code done} is not called.
     *
     * @return {@link Reply#LATER} when {@code done} will be called (or the session closed), else the answer known at
     *         once (an unknown session, one of another account), and {@code done} is not called
     */
    Reply run(SessionIdentitySql.Kill kill, Consumer<ErrPacket> done) {
        Optional<LiveSession> found = sessions.find(kill.sessionId());
        if (found.isEmpty()) {
            return Reply.error(SessionErrors.unknownThread(kill.sessionId()));
        }
        LiveSession target = found.get();
        if (target.context() == session && !kill.queryOnly()) {
            client.write(session.okPacket(1, 0, 0));
            client.flush();
            session.closeSession();
            return Reply.LATER;
        }
        List<Map.Entry<String, Long>> threads = target.backendThreads();
        if (threads.isEmpty() && !target.context().client().user().equals(session.client().user())) {
            return Reply.error(SessionErrors.notOwnerOfThread(kill.sessionId(), "HY000"));
        }
        session.markRunning();
        killNext(threads, 0, kill, target, done);
        return Reply.LATER;
    }

    private void killNext(List<Map.Entry<String, Long>> threads, int index, SessionIdentitySql.Kill kill,
                          LiveSession target, Consumer<ErrPacket> done) {
        if (index == threads.size()) {
            if (!kill.queryOnly()) {
                target.closeOnItsLoop();
            }
            done.accept(null);
            return;
        }
        Map.Entry<String, Long> thread = threads.get(index);
        Optional<UpstreamServer> server = upstreams.find(thread.getKey())
                .filter(UpstreamServer::isReachable);
        if (server.isEmpty()) {
            killNext(threads, index + 1, kill, target, done); // a server that is down runs nothing of the session
            return;
        }
        backends.obtain(server.get()).addListener(future -> {
            if (!future.isSuccess()) {
                killNext(threads, index + 1, kill, target, done);
                return;
            }
            InternalCommand.run((BackendConnection) future.getNow(),
                    session.queryPayload(kill.serverText(thread.getValue())), (first, error) -> {
                        if (error != null && error.errorCode() != SessionErrors.UNKNOWN_THREAD) {
                            // The server's own refusal, told about the Gantry session the client named.
                            done.accept(error.errorCode() == SessionErrors.NOT_OWNER_OF_THREAD
                                    ? SessionErrors.notOwnerOfThread(kill.sessionId(), error.sqlState())
                                    : error);
                        } else {
                            // Done, or that backend thread had ended already (the target session may be closing
                            // its other connections while this KILL runs): on to the next one.
                            killNext(threads, index + 1, kill, target, done);
                        }
                    }, failure -> session.backendFailed(server.get(), failure));
        });
    }
}
