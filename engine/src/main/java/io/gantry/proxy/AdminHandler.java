package io.gantry.proxy;

import io.gantry.route.SqlMode;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Answers Gantry's own SQL (admin statements and the {@code gantry.*} tables) on the proxy port. The proxy asks it
 * about every COM_QUERY text before routing; it must answer "not mine" quickly and do its real work off the event
 * loop. Implemented outside the proxy (the admin package), so the proxy does not depend on it.
 */
public interface AdminHandler {

    /**
     * @param sql  the statement text
     * @param user the session's account (only accounts in {@code --admin-users} may run admin statements)
     * @param mode the session's mode ({@code NO_BACKSLASH_ESCAPES}, {@code ANSI_QUOTES}), which decides where the
     *             text's strings end
     * @return empty when the text is an ordinary statement for the servers; otherwise the reply, completed on
     *         another thread
     */
    Optional<CompletionStage<AdminReply>> handle(String sql, String user, SqlMode mode);

    /** Handles nothing: every statement goes to the servers. */
    AdminHandler NONE = (sql, user, mode) -> Optional.empty();
}
