package io.gantry.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ConsoleLauncherTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return ConsoleLauncher.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void helpNamesEveryFlag() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("Usage: gantry console [--data-dir DIR | "
                + "--socket PATH] [--tab NAME] [--window W]").contains("--admin-socket PATH is the same");
    }

    @Test
    void badFlagsSayWhatIsWrongAndExitWithTwo() {
        assertThat(run("--data-dir", "a", "--socket", "b")).isEqualTo(2);
        assertThat(run("--socket")).isEqualTo(2);
        assertThat(run("--tab", "table")).isEqualTo(2);
        assertThat(run("--window", "2h")).isEqualTo(2);
        assertThat(run("--watch")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8).lines().filter(l -> l.startsWith("gantry console: ")))
                .containsExactly("gantry console: give --data-dir or --socket, not both",
                        "gantry console: --socket needs a value",
                        "gantry console: --tab must be timeline, chart, weights or queries",
                        "gantry console: --window must be one of 5m, 15m, 1h, 6h, 1d",
                        "gantry console: unknown option '--watch'");
    }
}
