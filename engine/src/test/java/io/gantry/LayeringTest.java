package io.gantry;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.gantry.admin.AdminResult;
import io.gantry.admin.AdminSql;
import io.gantry.admin.HostBlocks;
import io.gantry.admin.PoolFigures;
import org.junit.jupiter.api.Test;

/** The package dependencies of docs/ARCHITECTURE.md, held by a test so they stay true. */
class LayeringTest {

    private static final JavaClasses ENGINE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.gantry");

    @Test
    void wireDependsOnNothingElseInTheEngine() {
        noClasses().that().resideInAPackage("io.gantry.wire..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gantry.topology..", "io.gantry.route..",
                        "io.gantry.proxy..", "io.gantry.cdc..", "io.gantry.cache..", "io.gantry.authority..",
                        "io.gantry.admin..")
                .check(ENGINE);
    }

    @Test
    void gtidAlgebraIsPureValues() {
        noClasses().that().resideInAPackage("io.gantry.gtid..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gantry.wire..", "io.gantry.topology..",
                        "io.gantry.route..", "io.gantry.proxy..", "io.gantry.authority..", "io.gantry.admin..",
                        "io.netty..", "java.sql..")
                .check(ENGINE);
    }

    @Test
    void topologyKnowsNothingOfRoutingOrSessions() {
        noClasses().that().resideInAPackage("io.gantry.topology..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gantry.route..", "io.gantry.proxy..",
                        "io.gantry.admin..")
                .check(ENGINE);
    }

    @Test
    void routingIsPureLogic() {
        noClasses().that().resideInAPackage("io.gantry.route..")
                .should().dependOnClassesThat().resideInAnyPackage("io.netty..", "java.sql..", "io.gantry.wire..",
                        "io.gantry.proxy..", "io.gantry.topology..", "io.gantry.admin..")
                .check(ENGINE);
    }

    @Test
    void changeStreamStaysOffTheDataPath() {
        // The stream reads servers and writes the sink and the Authority; it never touches sessions or routing.
        noClasses().that().resideInAPackage("io.gantry.cdc..")
                .should().dependOnClassesThat().resideInAnyPackage("io.netty..", "io.gantry.wire..",
                        "io.gantry.proxy..", "io.gantry.route..", "io.gantry.admin..")
                .check(ENGINE);
        // The caches are one of the stream's listeners (CacheInvalidation); the proxy reaches them, not the stream.
        noClasses().that().resideOutsideOfPackages("io.gantry.cdc..", "io.gantry.admin..", "io.gantry.metrics..",
                        "io.gantry.cache..", "io.gantry")
                .should().dependOnClassesThat().resideInAPackage("io.gantry.cdc..")
                .check(ENGINE);
    }

    @Test
    void theClusterSharesConfigurationAndKnowsNoSessionNorStream() {
        // A member reads and writes the cluster's tables on the primary and applies versions to the local copy it is
        // given (LocalConfiguration, implemented by admin); the change stream pokes it through a listener Gantry adds.
        noClasses().that().resideInAPackage("io.gantry.cluster..")
                .should().dependOnClassesThat().resideInAnyPackage("io.netty..", "io.gantry.wire..",
                        "io.gantry.proxy..", "io.gantry.route..", "io.gantry.cdc..", "io.gantry.cache..",
                        "io.gantry.admin..")
                .check(ENGINE);
        noClasses().that().resideOutsideOfPackages("io.gantry.cluster..", "io.gantry.admin..", "io.gantry.metrics..",
                        "io.gantry")
                .should().dependOnClassesThat().resideInAPackage("io.gantry.cluster..")
                .check(ENGINE);
    }

    @Test
    void metricsReadTheEngineAndNothingReadsThem() {
        // The data path counts through ProxyMetrics (proxy); only Gantry itself starts the Micrometer registry.
        noClasses().that().resideOutsideOfPackages("io.gantry.metrics..", "io.gantry")
                .should().dependOnClassesThat().resideInAPackage("io.gantry.metrics..")
                .check(ENGINE);
        noClasses().that().resideOutsideOfPackages("io.gantry.metrics..")
                .should().dependOnClassesThat().resideInAPackage("io.micrometer..")
                .check(ENGINE);
    }

    @Test
    void authorityDependsOnNothingOfOurs() {
        noClasses().that().resideInAPackage("io.gantry.authority..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gantry.wire..", "io.gantry.gtid..",
                        "io.gantry.topology..", "io.gantry.route..", "io.gantry.proxy..", "io.gantry.cdc..",
                        "io.gantry.cache..", "io.gantry.admin..", "io.netty..")
                .check(ENGINE);
    }

    @Test
    void theEventBusCarriesTheAuthoritysValuesAndKnowsNoPublisher() {
        noClasses().that().resideInAPackage("io.gantry.events..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gantry.wire..", "io.gantry.topology..",
                        "io.gantry.route..", "io.gantry.proxy..", "io.gantry.cdc..", "io.gantry.cache..",
                        "io.gantry.admin..", "io.netty..", "java.sql..")
                .check(ENGINE);
        noClasses().that().resideInAPackage("io.gantry.events..")
                .should().dependOnClassesThat().belongToAnyOf(io.gantry.authority.Authority.class)
                .check(ENGINE);
    }

    @Test
    void localSocketFilesDependOnNothingOfOurs() {
        noClasses().that().resideInAPackage("io.gantry.localsocket..")
                .should().dependOnClassesThat(resideInAPackage("io.gantry..")
                        .and(not(resideInAPackage("io.gantry.localsocket.."))))
                .check(ENGINE);
    }

    @Test
    void theHandOverKnowsOnlySocketFilesAndTheAdoptedListener() {
        // What is lent (the Authority, the change stream, the admin socket) stays behind the Lender, which the
        // composition root implements.
        noClasses().that().resideInAPackage("io.gantry.handover..")
                .should().dependOnClassesThat(resideInAPackage("io.gantry..")
                        .and(not(resideInAnyPackage("io.gantry.handover..", "io.gantry.localsocket..",
                                "io.gantry.proxy.transport.."))))
                .check(ENGINE);
    }

    @Test
    void theProxyReadsOnlyTheAdminSeamAndNothingElseReadsAdmin() {
        noClasses().that().resideOutsideOfPackages("io.gantry.admin..", "io.gantry.proxy..", "io.gantry")
                .should().dependOnClassesThat().resideInAPackage("io.gantry.admin..")
                .check(ENGINE);
        // The proxy port asks AdminSql and writes an AdminResult, its login gate is the admin's HostBlocks and
        // its backend pools report through PoolFigures; the statements and operations stay behind them.
        noClasses().that().resideInAPackage("io.gantry.proxy..")
                .should().dependOnClassesThat(resideInAPackage("io.gantry.admin..")
                        .and(not(belongToAnyOf(AdminSql.class, AdminResult.class, HostBlocks.class,
                                HostBlocks.BlockedHost.class, PoolFigures.class, PoolFigures.Pool.class))))
                .check(ENGINE);
        // The admin API carries no wire types: the proxy turns results into packets.
        noClasses().that().resideInAPackage("io.gantry.admin..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gantry.proxy..", "io.gantry.wire..")
                .check(ENGINE);
    }

    @Test
    void theStatementDigestsArePureBookkeeping() {
        // Counting a statement is a map and a histogram: no I/O, nothing of the sessions, read by the admin SQL and
        // the caches' SHOW PROXIED QUERIES.
        noClasses().that().resideInAPackage("io.gantry.digest..")
                .should().dependOnClassesThat().resideInAnyPackage("io.netty..", "java.sql..", "io.gantry.wire..",
                        "io.gantry.topology..", "io.gantry.proxy..", "io.gantry.cache..", "io.gantry.cdc..",
                        "io.gantry.authority..", "io.gantry.admin..")
                .check(ENGINE);
    }

    @Test
    void cachesStayBelowTheProxyAndTheAdminSql() {
        noClasses().that().resideInAPackage("io.gantry.cache..")
                .should().dependOnClassesThat().resideInAnyPackage("io.netty..", "io.gantry.wire..",
                        "io.gantry.proxy..", "io.gantry.admin..")
                .check(ENGINE);
    }

    @Test
    void backendConnectionsKnowNoSession() {
        // A backend connection logs in, runs commands and hands responses to a listener: it knows no client
        // session, no routing and no cache, so the pools of connection multiplexing can own connections freely.
        noClasses().that().resideInAPackage("io.gantry.proxy.backend..")
                .should().dependOnClassesThat(resideInAPackage("io.gantry.proxy..")
                        .and(not(resideInAnyPackage("io.gantry.proxy.backend..", "io.gantry.proxy.transport.."))))
                .check(ENGINE);
        noClasses().that().resideInAPackage("io.gantry.proxy.backend..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gantry.route..", "io.gantry.cache..",
                        "io.gantry.admin..", "io.gantry.authority..")
                .check(ENGINE);
    }

    @Test
    void theProxysRoomsNeverReachBackIntoTheListener() {
        // The sub-packages are the parts sessions are made of; the listener and its shared services
        // (io.gantry.proxy itself) put them together, never the other way round.
        noClasses().that().resideInAnyPackage("io.gantry.proxy.*..")
                .should().dependOnClassesThat().resideInAPackage("io.gantry.proxy")
                .check(ENGINE);
        // Prepared statements, session state and routing glue are values and bookkeeping: no connection, no I/O.
        noClasses().that().resideInAnyPackage("io.gantry.proxy.prepared..", "io.gantry.proxy.state..",
                        "io.gantry.proxy.routing..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gantry.proxy.backend..",
                        "io.gantry.proxy.transport..", "io.netty.channel..")
                .check(ENGINE);
        // Login is an exchange of packets and a gate: it touches no channel (frontend.ClientLogin writes what it
        // returns).
        noClasses().that().resideInAPackage("io.gantry.proxy.login..")
                .should().dependOnClassesThat().resideInAnyPackage("io.netty.channel..")
                .check(ENGINE);
    }

    @Test
    void theSessionsRoomsStackOneWay() {
        // From the top: the client channel and its login (frontend), one handler per command family (command), the
        // one way every statement goes to a server, whatever command carried it (pipeline), each statement counted
        // under its shape (digest), the query caches' glue (caching), where a statement runs and how its answer comes
        // back (execution), the session and what it is given (session). Each may use the ones below it, never one
        // above.
        String[] stack = {"frontend", "command", "pipeline", "digest", "caching", "execution", "session"};
        for (int below = 1; below < stack.length; below++) {
            for (int above = 0; above < below; above++) {
                noClasses().that().resideInAPackage("io.gantry.proxy." + stack[below] + "..")
                        .should().dependOnClassesThat().resideInAPackage("io.gantry.proxy." + stack[above] + "..")
                        .check(ENGINE);
            }
        }
        // The rooms of values and connections are below all of them.
        noClasses().that().resideInAnyPackage("io.gantry.proxy.backend..", "io.gantry.proxy.transport..",
                        "io.gantry.proxy.prepared..", "io.gantry.proxy.state..", "io.gantry.proxy.routing..",
                        "io.gantry.proxy.login..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gantry.proxy.session..",
                        "io.gantry.proxy.execution..", "io.gantry.proxy.caching..", "io.gantry.proxy.digest..",
                        "io.gantry.proxy.pipeline..",
                        "io.gantry.proxy.command..", "io.gantry.proxy.frontend..")
                .check(ENGINE);
    }

    @Test
    void theSocketTransportIsTheBottomOfTheProxy() {
        noClasses().that().resideInAPackage("io.gantry.proxy.transport..")
                .should().dependOnClassesThat(resideInAPackage("io.gantry..")
                        .and(not(resideInAPackage("io.gantry.proxy.transport.."))))
                .check(ENGINE);
    }

    @Test
    void nothingUsesJavaFx() {
        noClasses().should().dependOnClassesThat().resideInAPackage("javafx..").check(ENGINE);
    }
}
