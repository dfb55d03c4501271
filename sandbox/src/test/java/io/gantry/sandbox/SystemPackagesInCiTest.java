package io.gantry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * CI's machine was set up by hand by earlier sessions, so a package that only a hand-made install brought would
 * pass there and fail on a new machine: {@code .ci/run} must install every package the harness looks for, by its
 * own name (not as something another package happens to pull in).
 */
class SystemPackagesInCiTest {

    @Test
    void ciInstallsEverySystemPackageTheHarnessLooksForByName() throws Exception {
        String ciRun = Files.readString(Path.of("..", ".ci", "run"));
        List<String> missing = new ArrayList<>();
        for (SystemPackage systemPackage : SystemPackage.values()) {
            List<String> names = new ArrayList<>(List.of(systemPackage.packageName()));
            systemPackage.newerName().ifPresent(names::add);
            for (String name : names) {
                if (!Pattern.compile("(?<![\\w.+-])" + Pattern.quote(name) + "(?![\\w.+-])").matcher(ciRun).find()) {
                    missing.add(name + " (" + systemPackage.neededFor() + ")");
                }
            }
        }
        assertThat(missing).as(".ci/run must install these packages by name").isEmpty();
    }
}
