package io.gantry.route;

import java.util.Objects;
import java.util.Optional;

/**
 * Where one statement goes, and why.
 *
 * @param target the role of the chosen server
 * @param server the chosen server
 * @param reason the rule that decided
 * @param cause the statement flag behind the reason ({@code NOT_A_READ(LOCKING_READ)},
 *        {@code SESSION_PINNED(TEMPORARY_TABLE)}, {@code PRIMARY_ONLY_READ(USES_USER_VARIABLES)}, ...), if any
 * @param pinsSession present when running this statement pins the session to the primary from now on
 *        (see {@link SessionRouteState#afterRouting(RouteDecision)}); the value is the flag that does it
 */
public record RouteDecision(
        RouteTarget target,
        ServerId server,
        RouteReason reason,
        Optional<StatementFlag> cause,
        Optional<StatementFlag> pinsSession) {

    /** Rejects nulls. */
    public RouteDecision {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(cause, "cause");
        Objects.requireNonNull(pinsSession, "pinsSession");
    }

    /** Whether the statement goes to the primary. */
    public boolean toPrimary() {
        return target == RouteTarget.PRIMARY;
    }

    /** For logs, for example {@code PRIMARY db1:3306 NOT_A_READ(TEMPORARY_TABLE), pins session: TEMPORARY_TABLE}. */
    public String describe() {
        StringBuilder text = new StringBuilder(64).append(target).append(' ').append(server).append(' ').append(reason);
        cause.ifPresent(c -> text.append('(').append(c).append(')'));
        pinsSession.ifPresent(p -> text.append(", pins session: ").append(p));
        return text.toString();
    }

    @Override
    public String toString() {
        return describe();
    }
}
