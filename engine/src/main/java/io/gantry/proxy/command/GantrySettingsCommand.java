package io.gantry.proxy.command;

import io.gantry.gtid.GtidSet;
import io.gantry.proxy.execution.SessionRouting;
import io.gantry.proxy.session.ClientWriter;
import io.gantry.proxy.session.LogText;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.route.QueryText;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.ReadYourWritesScope;
import io.gantry.route.ReplicaPreference;
import io.gantry.route.RoutingConfig;
import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.TextResultSet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The session's own read-guarantee settings ({@link GantrySessionSql}): set, read and listed here, never sent to a
 * server; and {@code EXPLAIN GANTRY ROUTE}, which shows where a statement would run and why. {@code DEFAULT} goes back to the flag's value; COM_RESET_CONNECTION and COM_CHANGE_USER bring every setting
 * back to the flags, as a server does with its session variables.
 */
final class GantrySettingsCommand {

    private final SessionContext session;
    private final SessionRouting routing;
    private final ClientWriter client;
    private final ByteBufAllocator alloc;
    /** A {@code gantry_causal_token} longer than this is refused: a token names a user or a request's chain. */
    private static final int MAX_TOKEN_LENGTH = 256;
    /** The position the session last said its reads come after ({@code gantry_read_after}), or null. */
    private String lastReadAfter;

    GantrySettingsCommand(SessionContext session, SessionRouting routing, ClientWriter client,
                          ByteBufAllocator alloc) {
        this.session = session;
        this.routing = routing;
        this.client = client;
        this.alloc = alloc;
    }

    /** The answer to a statement about the settings, or null when the statement is not one. */
    Reply run(QueryText text) {
        GantrySessionSql.Parsed parsed = GantrySessionSql.parse(text);
        if (parsed instanceof GantrySessionSql.NotOurs) {
            return null;
        }
        if (parsed instanceof GantrySessionSql.Refused refused) {
            return Reply.error(refused.error());
        }
        if (parsed instanceof GantrySessionSql.Set set) {
            return set(set);
        }
        if (parsed instanceof GantrySessionSql.ExplainRoute explain) {
            return rows(List.of("item", "detail"), routing.explain(explain.statement()));
        }
        if (parsed instanceof GantrySessionSql.Select select) {
            List<List<String>> row = new ArrayList<>();
            List<String> values = new ArrayList<>();
            for (GantrySessionSql.Setting setting : select.settings()) {
                values.add(value(setting));
            }
            row.add(values);
            return rows(select.labels(), row);
        }
        List<List<String>> rows = new ArrayList<>();
        for (GantrySessionSql.Setting setting : GantrySessionSql.Setting.values()) {
            rows.add(Arrays.asList(setting.sqlName(), value(setting)));
        }
        ReadGuarantees guarantees = session.settings().guarantees();
        rows.add(Arrays.asList("max_stale_read_bound_ms", Long.toString(guarantees.maxStaleReadBound().toMillis())));
        rows.add(Arrays.asList("follower_reads_avoid_waiting", guarantees.avoidWaiting() ? "ON" : "OFF"));
        rows.add(Arrays.asList("causal_wait_timeout_ms", Long.toString(guarantees.causalWaitTimeout().toMillis())));
        rows.add(Arrays.asList("replica_choice", routing.replicaChoice()));
        String scope = session.consistency().scope();
        GtidSet scopeFloor = session.consistency().scopeFloor();
        rows.add(Arrays.asList("causal_scope", scope == null ? "session (its own writes)" : scope
                + (scopeFloor == null ? ", nothing written" : ", written up to " + scopeFloor)));
        GtidSet floor = session.consistency().floor(guarantees.readYourWrites());
        rows.add(Arrays.asList("read_floor", floor == null ? "none" : floor.isEmpty() ? "(empty)" : floor.toString()));
        List<String> pending = session.consistency().pendingDescriptions();
        rows.add(Arrays.asList("pending", pending.isEmpty() ? "none" : String.join("; ", pending)));
        rows.add(Arrays.asList("connections", routing.describeConnections()));
        rows.add(Arrays.asList("transaction_replay", session.transactionLog().describe()));
        return rows(List.of("Variable_name", "Value"), rows);
    }

    private Reply set(GantrySessionSql.Set set) {
        GtidSet readAfter = null;
        RoutingConfig routing = session.settings().routing();
        ReadGuarantees guarantees = session.settings().guarantees();
        RoutingConfig defaultRouting = session.settings().flagsRouting();
        ReadGuarantees defaults = session.settings().flagsGuarantees();
        for (int i = 0; i < set.settings().size(); i++) {
            GantrySessionSql.Setting setting = set.settings().get(i);
            String value = set.values().get(i);
            switch (setting) {
                case READ_FROM_FOLLOWERS -> {
                    Boolean on = value == null ? Boolean.valueOf(defaultRouting.readFromFollowers()) : bool(value);
                    if (on == null) {
                        return Reply.error(wrongValue(setting, value));
                    }
                    routing = routing.withReadFromFollowers(on);
                }
                case READ_YOUR_WRITES -> {
                    Boolean on = value == null ? Boolean.valueOf(defaults.readYourWrites()) : bool(value);
                    if (on == null) {
                        return Reply.error(wrongValue(setting, value));
                    }
                    guarantees = guarantees.withReadYourWrites(on);
                }
                case READ_YOUR_WRITES_SCOPE -> {
                    ReadYourWritesScope scope = value == null ? defaults.scope() : ReadYourWritesScope.named(value);
                    if (scope == null) {
                        return Reply.error(wrongValue(setting, value));
                    }
                    guarantees = guarantees.withScope(scope);
                }
                case CAUSAL_TOKEN -> {
                    if (value != null && (value.isBlank() || value.length() > MAX_TOKEN_LENGTH)) {
                        return Reply.error(wrongValue(setting, LogText.abbreviate(value)));
                    }
                    guarantees = guarantees.withCausalToken(value);
                }
                case FOLLOWER_READ_STALENESS_MS -> {
                    Duration staleness;
                    if (value == null) {
                        staleness = defaults.followerReadStaleness();
                    } else {
                        try {
                            staleness = Duration.ofMillis(Long.parseLong(value));
                        } catch (NumberFormatException e) {
                            return Reply.error(wrongValue(setting, value));
                        }
                        String problem = ReadGuarantees.stalenessProblem(staleness, guarantees.sampleInterval());
                        if (problem != null || staleness.isZero()) {
                            return Reply.error(ErrPacket.of(1231, "42000", "Variable '" + setting.sqlName()
                                    + "' can't be set to the value of '" + value + "': " + (problem != null ? problem
                                    : "the minimum is " + guarantees.minimumStaleness().toMillis()
                                    + " ms; SET it to DEFAULT to go back to no staleness bound")));
                        }
                    }
                    guarantees = guarantees.withFollowerReadStaleness(staleness);
                }
                case FOLLOWER_READS_PREFER -> {
                    Boolean closest = value == null ? Boolean.valueOf(defaultRouting.replicaPreference().closest())
                            : ReplicaPreference.prefersClosest(value);
                    if (closest == null) {
                        return Reply.error(wrongValue(setting, value));
                    }
                    routing = routing.withReplicaPreference(routing.replicaPreference().withClosest(closest));
                }
                case LAST_WRITE_POSITION -> {
                    return Reply.error(ErrPacket.of(1238, "HY000", "Variable 'gantry_last_write_position' is a read "
                            + "only variable: it says what this session's writes produced; to read after another "
                            + "session's writes, SET gantry_read_after = '<its position>'"));
                }
                case READ_AFTER -> {
                    if (value != null && !value.isBlank()) {
                        try {
                            readAfter = GtidSet.parseAnyFlavour(value.strip());
                        } catch (IllegalArgumentException e) {
                            return Reply.error(ErrPacket.of(1231, "42000", "Variable 'gantry_read_after' can't be set "
                                    + "to the value of '" + LogText.abbreviate(value) + "': " + e.getMessage()
                                    + " (a position as @@gantry_last_write_position gives it)"));
                        }
                    }
                }
            }
        }
        session.settings().use(routing, guarantees);
        if (readAfter != null) {
            // The session's reads are not older than it from now on, whichever server serves them.
            session.consistency().readAt(readAfter);
            lastReadAfter = readAfter.toString();
        }
        return Reply.OK;
    }

    private String value(GantrySessionSql.Setting setting) {
        return switch (setting) {
            case READ_FROM_FOLLOWERS -> onOff(session.settings().routing().readFromFollowers());
            case READ_YOUR_WRITES -> onOff(session.settings().guarantees().readYourWrites());
            case READ_YOUR_WRITES_SCOPE -> session.settings().guarantees().scope().sqlName();
            case CAUSAL_TOKEN -> session.settings().guarantees().causalToken();
            case FOLLOWER_READ_STALENESS_MS -> session.settings().guarantees().followerReadStaleness().isZero() ? null
                    : Long.toString(session.settings().guarantees().followerReadStaleness().toMillis());
            case FOLLOWER_READS_PREFER -> session.settings().routing().replicaPreference().sqlName();
            case LAST_WRITE_POSITION -> {
                GtidSet written = session.consistency().writePosition();
                yield written == null ? "" : written.toString();
            }
            case READ_AFTER -> lastReadAfter;
        };
    }

    private Reply rows(List<String> columnNames, List<List<String>> rows) {
        List<ColumnDefinition> columns = columnNames.stream()
                .map(name -> ColumnDefinition.text("", "", name)).toList();
        int sequence = 1;
        for (ByteBuf payload : TextResultSet.encode(columns, rows, session.client().capabilities(),
                session.client().mariaDbCapabilities(), session.localStatus(), alloc)) {
            client.write(new Packet(sequence++ & 0xFF, payload));
        }
        client.flush();
        return Reply.DONE;
    }

    private static ErrPacket wrongValue(GantrySessionSql.Setting setting, String value) {
        return ErrPacket.of(1231, "42000", "Variable '" + setting.sqlName() + "' can't be set to the value of '"
                + value + "'" + switch (setting) {
                    case FOLLOWER_READ_STALENESS_MS -> " (a number of milliseconds, or DEFAULT)";
                    case FOLLOWER_READS_PREFER -> " (closest, weight or DEFAULT)";
                    case READ_YOUR_WRITES_SCOPE -> " (session, account, token or DEFAULT)";
                    case CAUSAL_TOKEN -> " (a token of 1 to " + MAX_TOKEN_LENGTH + " characters, or DEFAULT for none)";
                    default -> " (ON or OFF)";
                });
    }

    private static Boolean bool(String value) {
        return switch (value.toUpperCase(Locale.ROOT)) {
            case "ON", "1", "TRUE" -> Boolean.TRUE;
            case "OFF", "0", "FALSE" -> Boolean.FALSE;
            default -> null;
        };
    }

    private static String onOff(boolean on) {
        return on ? "ON" : "OFF";
    }
}
