package io.gantry.proxy.command;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.proxy.execution.SessionBackends;
import io.gantry.proxy.session.LiveSession;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.topology.UpstreamServer;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code KILL [QUERY|CONNECTION] n} with a Gantry session id: the KILL of each of that session's backend threads
 * runs on this session's own connection to the same server, so the server applies its own privilege rules (the
 * same account, or CONNECTION ADMIN / SUPER).
 */
public final class KillCommand {

    private final SessionContext session;
    private final SessionBackends backends;

    KillCommand(SessionContext session, SessionBackends backends) {
        this.session = session;
        this.backends = backends;
    }

    Reply run(SessionIdentitySql.Kill kill) {
        Optional<LiveSession> found = session.services().sessions().find(kill.sessionId());
        if (found.isEmpty()) {
            return Reply.error(SessionErrors.unknownThread(kill.sessionId()));
        }
        LiveSession target = found.get();
        if (target.context() == session && !kill.queryOnly()) {
            session.writeOk(1);
            session.ctx().flush();
            session.closeSession();
            return Reply.LATER;
        }
        List<Map.Entry<String, Long>> threads = target.backendThreads();
        if (threads.isEmpty() && !target.context().client().user().equals(session.client().user())) {
            return Reply.error(SessionErrors.notOwnerOfThread(kill.sessionId(), "HY000"));
        }
        session.markRunning();
        killNext(threads, 0, kill, target);
        return Reply.LATER;
    }

    private void killNext(List<Map.Entry<String, Long>> threads, int index, SessionIdentitySql.Kill kill,
                          LiveSession target) {
        if (index == threads.size()) {
            if (!kill.queryOnly()) {
                target.closeOnItsLoop();
            }
            session.finish(Reply.OK);
            return;
        }
        Map.Entry<String, Long> thread = threads.get(index);
        Optional<UpstreamServer> server = session.services().upstreams().find(thread.getKey())
                .filter(UpstreamServer::isReachable);
        if (server.isEmpty()) {
            killNext(threads, index + 1, kill, target); // a server that is down runs nothing of the session
            return;
        }
        backends.obtain(server.get()).addListener(future -> {
            if (!future.isSuccess()) {
                killNext(threads, index + 1, kill, target);
                return;
            }
            InternalCommand.run((BackendConnection) future.getNow(),
                    session.queryPayload(kill.serverText(thread.getValue())), (first, error) -> {
                        if (error != null && error.errorCode() != SessionErrors.UNKNOWN_THREAD) {
                            // The server's own refusal, told about the Gantry session the client named.
                            session.finish(Reply.error(error.errorCode() == SessionErrors.NOT_OWNER_OF_THREAD
                                    ? SessionErrors.notOwnerOfThread(kill.sessionId(), error.sqlState())
                                    : error));
                        } else {
                            // Done, or that backend thread had ended already (the target session may be closing
                            // its other connections while this KILL runs): on to the next one.
                            killNext(threads, index + 1, kill, target);
                        }
                    }, failure -> session.backendFailed(server.get(), failure));
        });
    }
}
