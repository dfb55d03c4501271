package io.gantry.proxy.state;

import java.util.ArrayList;
import java.util.List;

/**
 * What Gantry keeps of a session's open transaction on the primary so that it can run it again on a new primary
 * ({@code --transaction-replay}): each statement as it was sent, and a checksum of the answer the client received
 * for it. Kept from the statement that opened the transaction (a {@code BEGIN}, or the first statement with
 * autocommit off) until an answer says no transaction is open; past {@code --transaction-replay-max-bytes} of
 * statements, or after a statement whose answer a replay cannot reproduce (a LOCAL INFILE upload, an answer cut
 * short), the transaction is no longer replayable until it ends. Bookkeeping only: the replay is the pipeline's.
 */
public final class TransactionLog {

    /** One statement of the transaction and the checksum of the answer the client received for it. */
    public record Entry(byte[] command, long answerChecksum) {
    }

    private final boolean enabled;
    private final long maxBytes;
    private final List<Entry> entries = new ArrayList<>();
    private long bytes;
    /** Why the open transaction cannot be replayed, or null while it can. */
    private String notReplayable;
    /** The statement on its way, kept until its answer is complete. */
    private byte[] sending;
    /** The server whose connection with the transaction was lost, while a replay is due; and why. */
    private String lostServer;
    private String lostWhy;
    /** Why the transaction is being replayed, while a replay runs; null otherwise. */
    private String replaying;

    /**
     * @param enabled  {@code --transaction-replay}
     * @param maxBytes {@code --transaction-replay-max-bytes}: the statements' bytes a transaction may keep
     */
    public TransactionLog(boolean enabled, long maxBytes) {
        this.enabled = enabled;
        this.maxBytes = maxBytes;
    }

    /** Whether transaction replay is on ({@code --transaction-replay}). */
    public boolean enabled() {
        return enabled;
    }

    /** Whether a statement sent now should be kept: replay is on and the open transaction is still replayable. */
    public boolean records() {
        return enabled && notReplayable == null;
    }

    /**
     * Keeps the statement about to be sent; it becomes an entry when its answer is complete. False when it passes
     * {@code --transaction-replay-max-bytes}: the transaction is then not replayable.
     */
    public boolean sending(byte[] command) {
        if (bytes + command.length > maxBytes) {
            notReplayable("its statements passed --transaction-replay-max-bytes (" + maxBytes + " bytes)");
            return false;
        }
        sending = command;
        return true;
    }

    /** Whether nothing of a transaction is kept: the next statement kept opens one, or the log is not used. */
    public boolean isEmpty() {
        return entries.isEmpty() && sending == null;
    }

    /**
     * The kept statement's answer is complete: kept with its checksum while a transaction may be open after it (an
     * error's answer carries no status: the transaction goes on, and a replay must meet the same error); once none
     * is, the log starts afresh for the next one.
     */
    public void answered(long answerChecksum, boolean transactionOpen) {
        if (!transactionOpen) {
            clear();
            return;
        }
        if (sending != null) {
            entries.add(new Entry(sending, answerChecksum));
            bytes += sending.length;
            sending = null;
        }
    }

    /** The open transaction cannot be replayed ({@code why}, in an operator's words) until it ends. */
    public void notReplayable(String why) {
        if (notReplayable == null) {
            notReplayable = why;
        }
        entries.clear();
        bytes = 0;
        sending = null;
    }

    /** The kept statement was not answered: it is not part of what a replay runs (the statement runs again itself). */
    public void unanswered() {
        sending = null;
    }

    /**
     * Whether nothing of a transaction is kept yet, while the next statement would be: the statement on its way is
     * the first of its transaction.
     */
    public boolean keptNothingBefore() {
        return enabled && notReplayable == null && entries.isEmpty();
    }

    /** Whether the open transaction can be replayed: replay is on, and its statements are kept from its start. */
    public boolean replayable() {
        return enabled && notReplayable == null && !entries.isEmpty();
    }

    /**
     * The transaction's connection to {@code server} ({@code host:port}) was lost ({@code why}): the transaction is
     * replayed on the primary before the session's next statement.
     */
    public void lost(String server, String why) {
        lostServer = server;
        lostWhy = why;
    }

    /** Whether a replay is due before the session's next statement. */
    public boolean replayDue() {
        return lostServer != null;
    }

    /** The server ({@code host:port}) whose connection with the transaction was lost, while a replay is due. */
    public String lostServer() {
        return lostServer;
    }

    /** Why it was lost, while a replay is due. */
    public String lostWhy() {
        return lostWhy;
    }

    /** The replay is under way: nothing is due any more. */
    public void replayStarted() {
        replaying = lostWhy;
        lostServer = null;
        lostWhy = null;
    }

    /** The replay succeeded: the transaction is the session's again, on its new connection. */
    public void replayEnded() {
        replaying = null;
    }

    /**
     * Why the transaction was being replayed when a statement came before the replay ended (it was cut short without
     * a word, as by a refusal of the session's settings on the new primary), or null when no replay runs.
     */
    public String replayCutShort() {
        return replaying;
    }

    /** The statements to replay, in order. */
    public List<Entry> entries() {
        return entries;
    }

    /** The transaction ended (committed, rolled back, or lost for good): the log starts afresh. */
    public void clear() {
        entries.clear();
        bytes = 0;
        sending = null;
        notReplayable = null;
        lostServer = null;
        lostWhy = null;
        replaying = null;
    }

    /** For {@code SHOW GANTRY SESSION}: what a replay of the open transaction would run, or why none can. */
    public String describe() {
        if (!enabled) {
            return "off (--transaction-replay off)";
        }
        if (notReplayable != null) {
            return "not replayable: " + notReplayable;
        }
        if (entries.isEmpty()) {
            return "nothing kept: no transaction open on the primary";
        }
        return entries.size() + (entries.size() == 1 ? " statement" : " statements") + " kept (" + bytes
                + " bytes), replayed on a new primary if this one is lost";
    }
}
