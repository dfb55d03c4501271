package io.gantry.installers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console's {@code .deb}, checked without installing it: its control data, that it depends on the package of
 * every library its JavaFX natives and its Java runtime link (so that apt brings GTK 3 and the rest, and the console
 * never meets a desktop without them), its files, and its launcher running from the unpacked tree.
 */
class ConsoleDebIT {

    private static final Path DEB = Path.of(System.getProperty("gantry.consoleDeb", "target/gantry-console.deb"));
    private static final String VERSION = System.getProperty("gantry.version", "");
    /**
     * The runtime's libraries that every start of it loads. The others (libawt*, libfontmanager, libjavajpeg,
     * liblcms, libmlib_image, libjsound, libsplashscreen) come with java.desktop, which JavaFX requires for its
     * classes, and serve only AWT, Swing and javax.sound, which the console never uses.
     */
    private static final List<String> RUNTIME = List.of("lib/server/libjvm.so", "lib/libjli.so", "lib/libjava.so",
            "lib/libjimage.so", "lib/libzip.so", "lib/libnio.so", "lib/libnet.so");

    @TempDir
    static Path unpacked;

    private static Path home;

    @BeforeAll
    static void unpack() throws Exception {
        assertThat(DEB).exists();
        assertThat(run("dpkg-deb", "-x", DEB.toString(), unpacked.toString()).exitCode()).isZero();
        home = unpacked.resolve("usr/lib/gantry-console");
    }

    @Test
    void controlNamesThePackageAndDependsOnGtkAndTheOtherDesktopLibraries() throws Exception {
        String info = run("dpkg-deb", "-I", DEB.toString()).output();
        assertThat(info).contains("Package: gantry-console").contains("Version: " + VERSION.replace('-', '~'))
                .contains("Architecture: amd64");
        assertThat(depends(info)).contains("libgtk-3-0 | libgtk-3-0t64", "libgl1", "libx11-6", "libxtst6",
                "libxxf86vm1", "libc6");
    }

    @Test
    void everyLibraryTheNativesAndTheRuntimeLinkIsInDepends() throws Exception {
        Set<String> depends = depends(run("dpkg-deb", "-I", DEB.toString()).output());
        Map<String, List<String>> linked = new TreeMap<>();
        Properties table = new Properties();
        try (ZipFile jar = new ZipFile(home.resolve("lib/app/gantry-console.jar").toFile())) {
            try (InputStream in = jar.getInputStream(jar.getEntry("io/gantry/console/desktop-libraries.properties"))) {
                table.load(in);
            }
            for (ZipEntry entry : jar.stream().filter(e -> !e.getName().contains("/") && e.getName().endsWith(".so"))
                    .toList()) {
                try (InputStream in = jar.getInputStream(entry)) {
                    linked.put(entry.getName(), ElfLibraries.needed(in.readAllBytes(), entry.getName()));
                }
            }
        }
        assertThat(linked).as("JavaFX's natives in the jar").containsKeys("libglass.so", "libglassgtk3.so",
                "libprism_es2.so", "libprism_sw.so", "libjavafx_font_freetype.so");
        Path runtime = home.resolve("lib/runtime");
        for (String library : RUNTIME) {
            linked.put(library, ElfLibraries.needed(Files.readAllBytes(runtime.resolve(library)), library));
        }
        Set<String> bundled;
        try (Stream<Path> files = Files.walk(runtime)) {
            bundled = files.map(p -> p.getFileName().toString()).filter(n -> n.contains(".so"))
                    .collect(Collectors.toSet());
        }
        Set<String> undeclared = new TreeSet<>();
        linked.forEach((library, needs) -> needs.stream().filter(soname -> !bundled.contains(soname))
                .filter(soname -> !table.containsKey(soname) || !depends.contains(table.getProperty(soname)))
                .forEach(soname -> undeclared.add(soname + " (linked by " + library + ", package "
                        + table.getProperty(soname, "unknown: add it to desktop-libraries.properties") + ")")));
        assertThat(undeclared).as("libraries whose package is not in Depends").isEmpty();
        assertThat(linked.get("libglassgtk3.so")).contains("libgtk-3.so.0", "libXtst.so.6");
    }

    @Test
    void filesAreWhereADesktopUserLooksForThemOwnedByRoot() throws Exception {
        String listing = run("dpkg-deb", "-c", DEB.toString()).output();
        assertThat(listing).contains("./usr/bin/gantry-console -> ../lib/gantry-console/bin/gantry-console")
                .contains("./usr/lib/gantry-console/lib/app/gantry-console.jar")
                .contains("./usr/lib/gantry-console/lib/runtime/bin/java")
                .contains("./usr/share/doc/gantry-console/copyright");
        for (String line : listing.split("\n")) {
            assertThat(line).as("owner of %s", line).contains(" root/root ");
        }
    }

    @Test
    void packagedLauncherSaysItsVersionFromItsOwnRuntime() throws Exception {
        Result version = run(unpacked.resolve("usr/bin/gantry-console").toString(), "--version");
        assertThat(version.exitCode()).as(version.output()).isZero();
        assertThat(version.output().strip()).isEqualTo("gantry console " + VERSION);
    }

    private static final Pattern DEPENDS = Pattern.compile("(?m)^ Depends: (.*)$");

    /** The entries of {@code Depends:}, each as written ("a | b" for alternatives). */
    private static Set<String> depends(String info) {
        Matcher line = DEPENDS.matcher(info);
        assertThat(line.find()).as("a Depends line in %s", info).isTrue();
        return new TreeSet<>(Arrays.asList(line.group(1).strip().split(", ")));
    }

    private record Result(int exitCode, String output) {
    }

    private static Result run(String... command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Result(process.exitValue(), output);
    }
}
