package io.gantry.testsummary;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TestRunSummaryTest {

    private static final String REPORT = """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuite name="io.gantry.proxy.%s" time="%s" tests="4" errors="0" skipped="2" failures="0">
              <testcase name="runs" classname="io.gantry.proxy.%1$s" time="1.0"/>
              <testcase name="alsoRuns" classname="io.gantry.proxy.%1$s" time="1.0"/>
              <testcase name="onMySql" classname="io.gantry.proxy.%1$s" time="0">
                <skipped type="org.opentest4j.TestAbortedException"><![CDATA[org.opentest4j.TestAbortedException: \
            Assumption failed: skipped: MySQL (bundled) cannot start here: it needs libaio.so.1
            	at org.junit.jupiter.api.Assumptions.throwAssumptionFailed(Assumptions.java:321)
            ]]></skipped>
              </testcase>
              <testcase name="onDocker" classname="io.gantry.proxy.%1$s" time="0">
                <skipped message="no Docker engine"/>
              </testcase>
            </testsuite>
            """;

    @Test
    void namesEachSkippedTestWithItsReasonAndTheSlowestClassesFirst(@TempDir Path root) throws Exception {
        Path reports = Files.createDirectories(root.resolve("engine/target/failsafe-reports"));
        Files.writeString(reports.resolve("TEST-io.gantry.proxy.FastIT.xml"), REPORT.formatted("FastIT", "2.5"));
        Files.writeString(reports.resolve("TEST-io.gantry.proxy.SlowIT.xml"), REPORT.formatted("SlowIT", "1,234.5"));
        Path stale = reports.resolve("TEST-io.gantry.proxy.StaleIT.xml");
        Files.writeString(stale, REPORT.formatted("StaleIT", "9999"));
        Files.setLastModifiedTime(stale, FileTime.from(Instant.parse("2020-01-01T00:00:00Z")));

        Files.writeString(root.resolve("engine/target/skipped-classes.txt"), """
                2020-06-01T00:00:00Z	io.gantry.proxy.OldMySqlIT	an earlier build's
                2022-06-01T00:00:00Z	io.gantry.proxy.KillTranslationMySqlIT	skipped: MySQL (bundled) cannot start
                """);

        Instant started = Instant.parse("2021-01-01T00:00:00Z");
        List<TestRunSummary.ClassReport> read = TestRunSummary.read(root, started);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        TestRunSummary.print(read, TestRunSummary.readSkippedClasses(root, started),
                new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String printed = bytes.toString(StandardCharsets.UTF_8);

        assertThat(printed).contains("[summary] 8 tests in 2 classes of 1 modules: 0 failed, 4 skipped, 1 classes"
                        + " skipped whole")
                .contains("[summary]   engine KillTranslationMySqlIT: skipped: MySQL (bundled) cannot start")
                .doesNotContain("OldMySqlIT")
                .contains("[summary]   engine FastIT.onMySql: skipped: MySQL (bundled) cannot start here: it needs"
                        + " libaio.so.1")
                .contains("[summary]   engine FastIT.onDocker: no Docker engine")
                .doesNotContain("StaleIT");
        assertThat(printed.indexOf("io.gantry.proxy.SlowIT")).isLessThan(printed.indexOf("io.gantry.proxy.FastIT"));
        assertThat(printed).contains("1234.5 s  engine     io.gantry.proxy.SlowIT (4 tests)");
    }
}
