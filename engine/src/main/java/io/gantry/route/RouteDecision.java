package io.gantry.route;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

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

    /**
     * Decisions without a cause or pin, by server, then by target and reason: the decision of nearly every statement
     * is one of these, and a record can serve every session that makes it. Keyed by the servers ever routed to, so
     * it holds a few entries per server the lists have named.
     */
    private static final ConcurrentHashMap<ServerId, RouteDecision[]> PLAIN = new ConcurrentHashMap<>();
    private static final RouteReason[] REASONS = RouteReason.values();
    private static final int TARGETS = RouteTarget.values().length;

    /**
     * The decision with these parts: a shared one when it has no cause and no pin, else a new one. Routing makes one
     * per statement, so the usual one costs no allocation.
     */
    public static RouteDecision of(RouteTarget target, ServerId server, RouteReason reason,
                                   Optional<StatementFlag> cause, Optional<StatementFlag> pinsSession) {
        if (cause.isPresent() || pinsSession.isPresent()) {
            return new RouteDecision(target, server, reason, cause, pinsSession);
        }
        RouteDecision[] byTargetAndReason = PLAIN.get(server);
        if (byTargetAndReason == null) {
            byTargetAndReason = PLAIN.computeIfAbsent(server, id -> new RouteDecision[TARGETS * REASONS.length]);
        }
        int slot = target.ordinal() * REASONS.length + reason.ordinal();
        RouteDecision decision = byTargetAndReason[slot];
        if (decision == null) {
            // Racing sessions may each make one: equal records, so whichever stays is as good.
            decision = new RouteDecision(target, server, reason, cause, pinsSession);
            byTargetAndReason[slot] = decision;
        }
        return decision;
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

    /**
     * Where and why in an operator's words, for {@code EXPLAIN GANTRY ROUTE}: "the replica db2:3306: read on a
     * replica picked by weight", "the primary db1:3306: not a read, as it creates or drops a temporary table, ...; it
     * pins the session to the primary from now on". {@link #describe()} is the compact form of the logs.
     */
    public String inWords() {
        StringBuilder words = new StringBuilder(96)
                .append(target == RouteTarget.PRIMARY ? "the primary " : "the replica ").append(server).append(": ")
                .append(reason.description());
        cause.ifPresent(flag -> words.append(reason == RouteReason.SESSION_PINNED ? " that " : ", as it ")
                .append(flag.description()));
        pinsSession.ifPresent(flag -> {
            words.append("; it pins the session to the primary from now on");
            if (!cause.equals(pinsSession)) {
                words.append(", as it ").append(flag.description());
            }
        });
        return words.toString();
    }

    @Override
    public String toString() {
        return describe();
    }
}
