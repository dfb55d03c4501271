package io.gantry.cdc;

import io.gantry.gtid.GtidSet;
import io.gantry.topology.KnownAccounts;
import java.util.function.Supplier;

/**
 * The known accounts' side of the change stream: a transaction that changes accounts or privileges
 * ({@link ChangeTransaction#changesAccounts()}, the flag the query caches' account checks follow too) makes logins
 * forget every known account; only then does the accounts' view of the stream's position advance, so a login that
 * finds the stream current finds the evictions made. Any state but streaming forgets them as well.
 */
public final class AccountEviction implements ChangeListener {

    private final KnownAccounts accounts;
    private final Supplier<String> position;

    /** @param position the stream's applied position as text ({@link CdcStream#positionText()}) */
    public AccountEviction(KnownAccounts accounts, Supplier<String> position) {
        this.accounts = accounts;
        this.position = position;
    }

    @Override
    public void onTransaction(AppliedTransaction transaction) {
        if (transaction.transaction().changesAccounts()) {
            accounts.forgetAll("an account or privilege change came through the change stream (GTID "
                    + transaction.gtid() + ")");
        }
        accounts.streamApplied(transaction.position());
    }

    @Override
    public void onStateChange(StateChange change) {
        if (change.state() != CdcStream.State.STREAMING) {
            accounts.streamStopped("is " + change.state().displayName());
            return;
        }
        String text = position.get();
        accounts.streamStarted(text.isBlank() ? null : GtidSet.parseAnyFlavour(text));
    }
}
