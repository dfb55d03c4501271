package io.gantry.testsummary;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * The end of {@code mvn verify}: reads back every module's Surefire and Failsafe reports of this build and prints
 * what a developer wants after a run of many minutes and several modules: how many tests ran, each test that was
 * skipped with the reason it gave, and the ten slowest test classes (where to look when the suite grows slow).
 * Reports written before the build started belong to an earlier run and are left out.
 */
public final class TestRunSummary {

    /** One test class's report. */
    record ClassReport(String module, String className, double seconds, int tests, int failures, int skipped,
                       List<Skip> skips) {
    }

    /** A skipped test and the reason it gave (an assumption's message), as the report has them. */
    record Skip(String test, String reason) {
    }

    /** A test class skipped as a whole, which the reports do not show (see the engine's SkippedClassesReport). */
    record SkippedClass(String module, String className, String reason) {
    }

    private static final int SLOWEST = 10;

    private TestRunSummary() {
    }

    /** {@code args}: the repository's root, and the build's start as an ISO-8601 instant. */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: TestRunSummary <repository root> <build start, ISO-8601>");
        }
        Path root = Path.of(args[0]).toAbsolutePath().normalize();
        Instant started = Instant.parse(args[1]);
        print(read(root, started), readSkippedClasses(root, started), System.out);
    }

    /** The lines of each module's {@code target/skipped-classes.txt} written at or after {@code started}. */
    static List<SkippedClass> readSkippedClasses(Path root, Instant started) throws IOException {
        List<SkippedClass> skipped = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root, 4)) {
            for (Path file : files.filter(f -> f.endsWith(Path.of("target", "skipped-classes.txt"))).sorted()
                    .toList()) {
                String module = root.relativize(file.getParent().getParent()).toString();
                for (String line : Files.readAllLines(file)) {
                    String[] fields = line.split("\t", 3);
                    if (fields.length == 3 && !Instant.parse(fields[0]).isBefore(started)) {
                        skipped.add(new SkippedClass(module, fields[1], fields[2]));
                    }
                }
            }
        }
        return skipped;
    }

    /** Every report under {@code root}'s modules written at or after {@code started}. */
    static List<ClassReport> read(Path root, Instant started) throws IOException {
        List<ClassReport> reports = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root, 5)) {
            for (Path file : files.filter(TestRunSummary::isReport).sorted().toList()) {
                if (!Files.getLastModifiedTime(file).toInstant().isBefore(started)) {
                    Path module = root.relativize(file.getParent().getParent().getParent());
                    reports.add(parse(module.toString(), file));
                }
            }
        }
        return reports;
    }

    private static boolean isReport(Path file) {
        String name = file.getFileName().toString();
        String directory = file.getParent() == null ? "" : file.getParent().getFileName().toString();
        return name.startsWith("TEST-") && name.endsWith(".xml")
                && (directory.equals("surefire-reports") || directory.equals("failsafe-reports"));
    }

    static ClassReport parse(String module, Path file) throws IOException {
        Document document;
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            document = factory.newDocumentBuilder().parse(file.toFile());
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException("cannot read the test report " + file + ": " + e.getMessage(), e);
        }
        Element suite = document.getDocumentElement();
        List<Skip> skips = new ArrayList<>();
        NodeList cases = suite.getElementsByTagName("testcase");
        for (int i = 0; i < cases.getLength(); i++) {
            Element testCase = (Element) cases.item(i);
            NodeList skipped = testCase.getElementsByTagName("skipped");
            if (skipped.getLength() > 0) {
                skips.add(new Skip(testCase.getAttribute("name"), reason((Element) skipped.item(0))));
            }
        }
        return new ClassReport(module, suite.getAttribute("name"), number(suite, "time"), (int) number(suite, "tests"),
                (int) (number(suite, "failures") + number(suite, "errors")), (int) number(suite, "skipped"), skips);
    }

    /**
     * Surefire writes a skip's reason as the {@code message} attribute, or (Failsafe, an assumption) only inside the
     * stack trace of its {@code TestAbortedException}, whose first line then holds it.
     */
    private static String reason(Element skipped) {
        String message = skipped.getAttribute("message");
        if (message.isBlank()) {
            String trace = skipped.getTextContent().strip();
            message = trace.lines().findFirst().orElse("")
                    .replaceFirst("^org\\.opentest4j\\.TestAbortedException: (Assumption failed: )?", "");
        }
        return message.isBlank() ? "(no reason given)" : message;
    }

    private static double number(Element element, String attribute) {
        String value = element.getAttribute(attribute).replace(",", "");
        return value.isBlank() ? 0 : Double.parseDouble(value);
    }

    static void print(List<ClassReport> reports, List<SkippedClass> skippedClasses, PrintStream out) {
        if (reports.isEmpty()) {
            out.println("[summary] no test reports from this build");
            return;
        }
        int tests = reports.stream().mapToInt(ClassReport::tests).sum();
        int failed = reports.stream().mapToInt(ClassReport::failures).sum();
        int skipped = reports.stream().mapToInt(ClassReport::skipped).sum();
        double seconds = reports.stream().mapToDouble(ClassReport::seconds).sum();
        long modules = reports.stream().map(ClassReport::module).distinct().count();
        out.printf(Locale.ROOT, "[summary] %d tests in %d classes of %d modules: %d failed, %d skipped, %d classes"
                + " skipped whole (%.0f s of test time, classes run in parallel count in full)%n",
                tests, reports.size(), modules, failed, skipped, skippedClasses.size(), seconds);
        if (!skippedClasses.isEmpty()) {
            out.println("[summary] classes skipped whole, and why:");
            for (SkippedClass skippedClass : skippedClasses) {
                out.printf("[summary]   %s %s: %s%n", skippedClass.module(), simpleName(skippedClass.className()),
                        skippedClass.reason());
            }
        }
        List<ClassReport> withSkips = reports.stream().filter(r -> !r.skips().isEmpty()).toList();
        if (!withSkips.isEmpty()) {
            out.println("[summary] skipped, and why:");
            for (ClassReport report : withSkips) {
                for (Skip skip : report.skips()) {
                    out.printf("[summary]   %s %s.%s: %s%n", report.module(), simpleName(report.className()),
                            skip.test(), skip.reason());
                }
            }
        }
        out.println("[summary] the " + Math.min(SLOWEST, reports.size()) + " slowest test classes:");
        reports.stream().sorted(Comparator.comparingDouble(ClassReport::seconds).reversed()).limit(SLOWEST)
                .forEach(r -> out.printf(Locale.ROOT, "[summary]   %7.1f s  %-10s %s (%d tests)%n", r.seconds(),
                        r.module(), r.className(), r.tests()));
    }

    private static String simpleName(String className) {
        return className.substring(className.lastIndexOf('.') + 1);
    }
}
