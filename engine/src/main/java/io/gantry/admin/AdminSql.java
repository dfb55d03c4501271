package io.gantry.admin;

import io.gantry.route.QueryText;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Gantry's own SQL (admin statements and the {@code gantry.*} tables) as the proxy port asks it: the proxy hands it
 * every COM_QUERY text before routing. It answers "not mine" quickly, allocating nothing for ordinary statements,
 * and does its real work off the event loop.
 */
public interface AdminSql {

    /**
     * @param text the statement, read under the session's mode ({@code NO_BACKSLASH_ESCAPES}, {@code ANSI_QUOTES}),
     *             which decides where the text's strings end
     * @param user the session's account (only accounts in {@code --admin-users} may run admin statements)
     * @return empty when the text is an ordinary statement for the servers; otherwise the result, completed on
     *         another thread
     */
    Optional<CompletionStage<AdminResult>> handle(QueryText text, String user);

    /** Handles nothing: every statement goes to the servers. */
    AdminSql NONE = (text, user) -> Optional.empty();
}
