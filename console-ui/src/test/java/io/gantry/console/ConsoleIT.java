package io.gantry.console;

import io.gantry.Gantry;
import io.gantry.admin.client.AdminClient;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.admin.protocol.TimelineEvent;
import io.gantry.authority.Authority;
import io.gantry.authority.HealthSample;
import io.gantry.authority.Retention;
import io.gantry.cli.GantryCommand;
import io.gantry.console.export.ExportViewModel;
import io.gantry.console.queries.QueryRow;
import io.gantry.console.servers.ServerRow;
import io.gantry.console.status.ConnectionViewModel;
import io.gantry.console.weights.WeightItem;
import io.gantry.proxy.login.LoginLimits;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import javafx.scene.Node;
import javafx.scene.control.Slider;
import javafx.scene.control.TableCell;
import javafx.scene.control.TableView;
import javafx.scene.input.MouseButton;
import javafx.stage.Stage;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.testfx.api.FxRobot;
import org.testfx.api.FxToolkit;
import org.testfx.util.WaitForAsyncUtils;
import picocli.CommandLine;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console, headless (TestFX on Monocle), against a real engine on a real MariaDB topology: one topology, one
 * engine and one console window for the whole class, the tests in the order that breaks things last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleIT {

    private static final Duration HEALTH_INTERVAL = Duration.ofSeconds(1);

    private static Topology topology;
    private static Path dataDir;
    private static Gantry gantry;
    private static Console console;
    private static final FxRobot robot = new FxRobot();

    @BeforeAll
    static void start() throws Exception {
        topology = Sandboxes.startPrivate(TopologyKind.MARIADB, "console", 2);
        dataDir = Files.createTempDirectory("gantry-console-it");
        synthesiseAnHourOfHealth();
        gantry = startEngine();
        Stage stage = FxToolkit.registerPrimaryStage();
        console = FxToolkit.setupFixture(() -> Console.open(stage, gantry.adminSocket()));
    }

    @AfterAll
    static void stop() throws Exception {
        if (console != null) {
            FxToolkit.setupFixture(() -> {
                console.close();
                console.stage().close();
            });
        }
        if (gantry != null) {
            gantry.close();
        }
        if (topology != null) {
            topology.close();
        }
    }

    private static Gantry startEngine() throws InterruptedException {
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(1)).withConnectRetries(0);
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        return Gantry.start(new Gantry.Options(proxy, urls, List.of(), dataDir, HEALTH_INTERVAL, Retention.DEFAULT,
                Set.of(), Optional.empty()));
    }

    /** An hour of health rounds at 1 s for every server, the last hour before now, in the Authority. */
    private static void synthesiseAnHourOfHealth() {
        Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        try (Authority authority = Authority.open(dataDir)) {
            List<HealthSample> batch = new ArrayList<>();
            for (int second = 3600; second > 0; second--) {
                Instant at = now.minusSeconds(second);
                for (DatabaseServer server : topology.servers()) {
                    boolean primary = server.equals(topology.primary());
                    long lag = server.equals(topology.replicas().get(1)) ? 400 + (second % 60) * 20 : second % 7;
                    batch.add(new HealthSample(at, server.address(), "up", primary ? "primary" : "replica",
                            Math.round(30 + (second % 10) * 5) / 100.0, primary ? null : lag, 4.5));
                }
                if (batch.size() >= 3000) {
                    authority.recordHealth(batch);
                    batch.clear();
                }
            }
            authority.recordHealth(batch);
        }
    }

    private static <T> T fx(Callable<T> call) throws Exception {
        return WaitForAsyncUtils.asyncFx(call).get(10, TimeUnit.SECONDS);
    }

    private static Reply sql(String statement) throws Exception {
        try (AdminClient client = AdminClient.connect(gantry.adminSocket(), "ConsoleIT", Duration.ofSeconds(5),
                reply -> { })) {
            return client.call(id -> new Request.Sql(id, statement), Duration.ofSeconds(10));
        }
    }

    private static long weightInEngine(DatabaseServer server) throws Exception {
        Reply reply = sql("SELECT weight FROM gantry.upstream_servers WHERE port = " + server.port());
        return (Long) ((Reply.Rows) reply).rows().get(0).get(0);
    }

    /** The text the table draws in a column for a server now. */
    private static Optional<String> cell(String address, String column) throws Exception {
        return fx(() -> robot.lookup(".table-cell").queryAll().stream()
                .filter(node -> node instanceof TableCell<?, ?> cell && cell.getTableColumn() != null
                        && ("column-" + column).equals(cell.getTableColumn().getId())
                        && cell.getTableRow() != null && cell.getTableRow().getItem() instanceof ServerRow row
                        && row.address().equals(address))
                .map(node -> ((TableCell<?, ?>) node).getText()).findFirst());
    }

    private static Slider slider(String address) throws Exception {
        return fx(() -> (Slider) robot.lookup(node -> node instanceof Slider
                && ("weight-slider-" + address).equals(node.getId())).query());
    }

    private static void dragSlider(Slider slider, double by) throws Exception {
        Node thumb = fx(() -> slider.lookup(".thumb"));
        robot.drag(thumb, MouseButton.PRIMARY).moveBy(by / 2, 0).moveBy(by / 2, 0).release(MouseButton.PRIMARY);
        WaitForAsyncUtils.waitForFxEvents();
    }

    @Test
    @Order(1)
    void theTableShowsEveryServerAndTheTitleNamesTheEngine() throws Exception {
        Awaitility.await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            for (DatabaseServer server : topology.servers()) {
                assertThat(cell(server.address(), "health")).contains("up");
                assertThat(cell(server.address(), "role")).contains(server.equals(topology.primary())
                        ? "primary" : "replica");
            }
        });
        assertThat(fx(() -> console.models().servers().rows().size())).isEqualTo(3);
        assertThat(cell(topology.primary().address(), "weight")).contains("50");
        assertThat(cell(topology.primary().address(), "rtt")).hasValueSatisfying(rtt -> assertThat(rtt).endsWith(" ms"));
        assertThat(cell(topology.primary().address(), "connect"))
                .hasValueSatisfying(connect -> assertThat(connect).endsWith(" ms"));
        String title = fx(() -> console.stage().getTitle());
        assertThat(title).contains("Gantry").contains(gantry.address().getHostString() + ":"
                + gantry.address().getPort());
        assertThat(fx(() -> console.models().connection().stateProperty().get()))
                .isEqualTo(ConnectionViewModel.State.CONNECTED);
    }

    @Test
    @Order(2)
    void draggingASliderChangesTheWeightInTheEngine() throws Exception {
        DatabaseServer replica = topology.replicas().get(0);
        fx(() -> {
            console.view().showWeights();
            return null;
        });
        WaitForAsyncUtils.waitForFxEvents();
        Slider slider = slider(replica.address());
        dragSlider(slider, 90);
        WeightItem item = fx(() -> console.models().weights().item(replica.address()).orElseThrow());
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            long wanted = Math.round(fx(() -> slider.getValue()));
            assertThat(wanted).isGreaterThan(50);
            assertThat(weightInEngine(replica)).isEqualTo(wanted);
            assertThat(fx(() -> item.engineWeightProperty().get())).isEqualTo((int) wanted);
            assertThat(fx(() -> item.messageProperty().get())).isEqualTo("weight of " + replica.address()
                    + " is now " + wanted);
        });
        Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(cell(replica.address(),
                "weight")).contains(Long.toString(weightInEngine(replica))));
    }

    @Test
    @Order(3)
    void theCsvExportIsTheSameAsExportHealth() throws Exception {
        Path dir = Files.createTempDirectory("gantry-console-export");
        Path fromConsole = dir.resolve("console.csv");
        Path fromCli = dir.resolve("cli.csv");
        // A few seconds back, so that every round before it is stored before either export reads.
        Instant until = Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(5);
        Instant since = until.minus(Duration.ofMinutes(20));
        String server = topology.replicas().get(1).address();
        ExportViewModel export = console.models().export();
        fx(() -> {
            console.view().openExport();
            export.fromProperty().set(since.toString());
            export.untilProperty().set(until.toString());
            export.serverProperty().set(server);
            export.fileProperty().set(fromConsole.toString());
            return null;
        });
        robot.clickOn("#export-start");
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> fx(() -> export.resultProperty().get()) != null);
        assertThat(fx(() -> export.progressProperty().get())).isEqualTo(1.0);

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new GantryCommand());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int code = cli.execute("export-health", "--from", "mysql://app:app@127.0.0.1:" + gantry.address().getPort(),
                "--since", since.toString(), "--until", until.toString(), "--server", server, "--out",
                fromCli.toString());
        assertThat(code).as(err.toString()).isZero();

        List<String> consoleRows = Files.readAllLines(fromConsole, StandardCharsets.UTF_8);
        List<String> cliRows = Files.readAllLines(fromCli, StandardCharsets.UTF_8);
        assertThat(consoleRows.get(0)).isEqualTo("at,server,health,role,rtt_ms,lag_ms,connect_ms");
        assertThat(consoleRows).hasSizeGreaterThan(15 * 60).isEqualTo(cliRows);
        assertThat(Files.readAllBytes(fromConsole)).isEqualTo(Files.readAllBytes(fromCli));
        assertThat(consoleRows.subList(1, consoleRows.size())).allSatisfy(row -> assertThat(row.split(",", -1))
                .hasSize(7).contains(server));
        System.out.println("ConsoleIT: the console exported " + (consoleRows.size() - 1) + " samples, the same as "
                + "gantry export-health");
        fx(() -> {
            console.view().openExport().hide();
            return null;
        });
    }

    @Test
    @Order(2)
    void theQueriesTabListsTheShapesFiltersThemAndFollowsTheSelectedOne() throws Exception {
        try (java.sql.Connection session = java.sql.DriverManager.getConnection("jdbc:mysql://127.0.0.1:"
                + gantry.address().getPort() + "/app?sslMode=DISABLED", "app", "app");
             java.sql.Statement statement = session.createStatement()) {
            for (int i = 0; i < 20; i++) {
                statement.executeQuery("SELECT " + i + " AS console_queries").close();
            }
        }
        fx(() -> {
            console.view().showQueries();
            return null;
        });
        TableView<?> table = fx(() -> robot.lookup("#queries-table").queryAs(TableView.class));
        String shape = "SELECT ? AS console_queries";
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> fx(() -> table.getItems().stream()
                .anyMatch(row -> ((QueryRow) row).query().equals(shape))));
        assertThat(fx(() -> table.getItems().size())).as("every shape before the filter").isGreaterThan(1);
        robot.clickOn("#queries-filter").write("CONSOLE_QUERIES");
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> fx(() -> table.getItems().size()) == 1);
        fx(() -> {
            table.getSelectionModel().select(0);
            return null;
        });
        // The selection holds across the next pushes, which add points to its chart.
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> fx(() -> console.models().queries().history()
                .size()) >= 2);
        QueryRow selected = fx(() -> (QueryRow) table.getSelectionModel().getSelectedItem());
        assertThat(selected.query()).isEqualTo(shape);
        assertThat(selected.count()).isEqualTo(20);
        assertThat(fx(() -> robot.lookup("#queries-where").queryAs(javafx.scene.control.Label.class).getText()))
                .startsWith("Ran on: ").contains("replica 20 (100 %)");
        Path csv = Files.createTempFile(dataDir, "queries", ".csv");
        fx(() -> {
            console.models().queries().exportCsv(csv);
            return null;
        });
        Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(Files.readAllLines(csv))
                .hasSize(2).element(1).asString().startsWith(shape + ",app,app,20,0,"));
        fx(() -> {
            console.models().queries().filterProperty().set("");
            return null;
        });
    }

    @Test
    @Order(3)
    void aBlockedHostIsListedAndItsBlockLiftedFromTheConsole() throws Exception {
        fx(() -> {
            console.view().showBlockedHosts();
            return null;
        });
        InetSocketAddress proxy = gantry.address();
        for (int i = 0; i < LoginLimits.DEFAULTS.maxHandshakeErrors(); i++) {
            try (Socket socket = new Socket(proxy.getAddress(), proxy.getPort())) {
                socket.setSoTimeout(5000);
                InputStream in = socket.getInputStream();
                in.read(new byte[4096]); // the greeting
                // A login packet that ends before the user name: malformed.
                socket.getOutputStream().write(new byte[] {8, 0, 0, 1, (byte) 0x85, (byte) 0xA6, 0x0F, 0, 0, 0, 0, 1});
                in.read(new byte[4096]);
            }
        }
        // The host_blocked event reaches the console, which reads the list again.
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                fx(() -> List.copyOf(console.models().blockedHosts().hosts()))).singleElement()
                .satisfies(host -> {
                    assertThat(host.host()).isEqualTo("127.0.0.1");
                    assertThat(host.reason()).contains("malformed packet");
                }));
        TableView<?> table = fx(() -> robot.lookup("#blocked-hosts-table").queryAs(TableView.class));
        fx(() -> {
            table.getSelectionModel().select(0);
            return null;
        });
        robot.clickOn("#unblock-host");
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(fx(() -> console.models().blockedHosts().hosts())).isEmpty();
            assertThat(fx(() -> console.models().blockedHosts().messageProperty().get()))
                    .isEqualTo("host 127.0.0.1 unblocked");
        });
        assertThat(sql("SHOW GANTRY BLOCKED HOSTS")).isInstanceOfSatisfying(Reply.Rows.class,
                rows -> assertThat(rows.rows()).isEmpty());
    }

    @Test
    @Order(4)
    void aKilledReplicaTurnsItsRowDownAndAddsATimelineEvent() throws Exception {
        DatabaseServer victim = topology.replicas().get(1);
        fx(() -> {
            console.view().showTimeline();
            return null;
        });
        assertThat(cell(victim.address(), "health")).contains("up");
        long killed;
        long down;
        try {
            topology.kill(victim);
            killed = System.nanoTime();
            Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                    .until(() -> cell(victim.address(), "health").orElse("").equals("down"));
            down = System.nanoTime();
            System.out.println("ConsoleIT: replica killed -> its row down in the console after "
                    + TimeUnit.NANOSECONDS.toMillis(down - killed) + " ms (health interval "
                    + HEALTH_INTERVAL.toMillis() + " ms)");
            assertThat(cell(victim.address(), "down-since")).isPresent().get().asString().isNotEmpty();
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> fx(() -> console.models().timeline()
                    .events().stream().anyMatch(e -> e.kind().equals("down") && victim.address().equals(e.server()))));
            Callable<Optional<Node>> drawn = () -> robot.lookup(".timeline-event").queryAll().stream()
                    .filter(n -> n.getUserData() instanceof TimelineEvent e && e.kind().equals("down")
                            && victim.address().equals(e.server())).findFirst();
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> fx(drawn).isPresent());
            // The lanes are redrawn as the window follows the present: click where the dot is, not the node found.
            javafx.geometry.Point2D at = fx(() -> {
                javafx.scene.shape.Circle dot = (javafx.scene.shape.Circle) drawn.call().orElseThrow();
                return dot.localToScreen(dot.getCenterX(), dot.getCenterY());
            });
            robot.clickOn(robot.point(at));
            WaitForAsyncUtils.waitForFxEvents();
            TimelineEvent selected = fx(() -> console.models().timeline().selectedProperty().get());
            assertThat(selected.kind()).isEqualTo("down");
            assertThat(fx(() -> console.models().timeline().detailProperty().get())).contains(victim.address())
                    .contains(selected.reason());
        } finally {
            topology.start(victim);
        }
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> cell(victim.address(), "health").orElse("")
                .equals("up"));
    }

    @Test
    @Order(5)
    void theChartHoldsTheHourOfHistoryWithinBoundedMemory() throws Exception {
        fx(() -> {
            console.view().showChart();
            console.models().chart().windowProperty().set(Duration.ofHours(1));
            return null;
        });
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> fx(() -> console.models().chart()
                .samplesHeld()) >= 3 * 3500);
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> fx(() -> console.models().chart()
                .seriesProperty().get() != null && console.models().chart().seriesProperty().get().lag().size() == 3));
        var series = fx(() -> console.models().chart().seriesProperty().get());
        String slow = topology.replicas().get(1).address();
        assertThat(series.maxLag().get(slow)).isGreaterThan(series.maxLag().get(topology.replicas().get(0).address()));
        assertThat(series.lag().get(slow)).hasSizeLessThanOrEqualTo(300);
        System.out.println("ConsoleIT: the chart holds " + fx(() -> console.models().chart().samplesHeld())
                + " samples (an hour at 1 s for 3 servers)");
        measureAConsoleOfItsOwnOnTheHour();
    }

    /**
     * The console's memory, alone in its process (Monocle, as here): started on the chart with the hour's window,
     * given 10 s to load it and draw, then a full GC; heap used and resident size, as jcmd and /proc tell them.
     */
    private static void measureAConsoleOfItsOwnOnTheHour() throws Exception {
        Path javaHome = Path.of(System.getProperty("java.home"));
        Process process = new ProcessBuilder(javaHome.resolve("bin/java").toString(), "-Dprism.order=sw",
                "-Dglass.platform=Monocle", "-Dmonocle.platform=Headless", "-Dheadless.geometry=1600x1200-32", "-cp", System.getProperty("java.class.path"),
                ConsoleLauncher.class.getName(), "--socket", gantry.adminSocket().toString(), "--tab", "chart",
                "--window", "1h").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            Thread.sleep(10_000);
            assertThat(process.isAlive()).isTrue();
            // One jcmd for both commands: each jcmd is a JVM of its own to start.
            Path commands = Files.writeString(Files.createTempFile(dataDir, "jcmd", ".txt"), "GC.run\nGC.heap_info\n");
            String heap = run(javaHome.resolve("bin/jcmd").toString(), Long.toString(process.pid()), "-f",
                    commands.toString());
            java.util.regex.Matcher used = java.util.regex.Pattern.compile("used (\\d+)K").matcher(heap);
            assertThat(used.find()).as(heap).isTrue();
            long heapMiB = Long.parseLong(used.group(1)) / 1024;
            String status = Files.readString(Path.of("/proc", Long.toString(process.pid()), "status"));
            java.util.regex.Matcher rss = java.util.regex.Pattern.compile("VmRSS:\\s+(\\d+) kB").matcher(status);
            assertThat(rss.find()).isTrue();
            System.out.println("ConsoleIT: a console of its own on the hour's chart: heap used after a "
                    + "full GC " + heapMiB + " MiB, resident " + Long.parseLong(rss.group(1)) / 1024 + " MiB");
            assertThat(heapMiB).isLessThan(128);
        } finally {
            process.destroy();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String run(String... command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return output;
    }

    @Test
    @Order(6)
    void anEngineErrorOnASliderIsShownAndTheSliderReturns() throws Exception {
        DatabaseServer replica = topology.replicas().get(0);
        fx(() -> {
            console.view().showWeights();
            return null;
        });
        WaitForAsyncUtils.waitForFxEvents();
        long before = weightInEngine(replica);
        // The engine's store fails under it: the engine answers the ALTER with an error (the next test restarts it).
        gantry.authority().close();
        Slider slider = slider(replica.address());
        dragSlider(slider, -120);
        WeightItem item = fx(() -> console.models().weights().item(replica.address()).orElseThrow());
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(fx(() -> item.failedProperty().get())).isTrue();
            assertThat(fx(() -> item.messageProperty().get())).startsWith("not changed: failed: ");
            assertThat(fx(() -> slider.getValue())).isEqualTo((double) before);
        });
        Node message = fx(() -> robot.lookup(node -> ("weight-message-" + replica.address()).equals(node.getId()))
                .query());
        assertThat(fx(() -> ((javafx.scene.control.Label) message).getText())).startsWith("not changed: ");
        assertThat(fx(() -> item.engineWeightProperty().get())).isEqualTo((int) before);
    }

    @Test
    @Order(7)
    void theConsoleReconnectsWhenTheEngineRestarts() throws Exception {
        gantry.close();
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> fx(() -> console.models().connection()
                .stateProperty().get()) == ConnectionViewModel.State.WAITING);
        Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(fx(() -> robot
                .lookup("#status-bar").queryAs(org.controlsfx.control.StatusBar.class).getText()))
                .contains("Waiting for it"));
        gantry = startEngine();
        long restarted = System.nanoTime();
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> fx(() -> console.models().connection()
                .stateProperty().get()) == ConnectionViewModel.State.CONNECTED);
        System.out.println("ConsoleIT: the console reconnected " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime()
                - restarted) + " ms after the engine was back");
        Awaitility.await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            for (DatabaseServer server : topology.servers()) {
                assertThat(cell(server.address(), "health")).contains("up");
            }
        });
        assertThat(fx(() -> console.stage().getTitle())).contains(":" + gantry.address().getPort());
    }
}
