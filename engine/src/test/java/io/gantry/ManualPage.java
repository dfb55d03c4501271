package io.gantry;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** A page of the manual, read from the repository's root above the module the tests run in. */
public final class ManualPage {

    private ManualPage() {
    }

    /** The text of {@code page} (a path from the repository's root, such as {@code docs/metrics.md}). */
    public static String read(String page) throws IOException {
        Path dir = Path.of("").toAbsolutePath();
        for (Path at = dir; at != null; at = at.getParent()) {
            if (Files.isRegularFile(at.resolve(page)) && Files.isRegularFile(at.resolve("pom.xml"))) {
                return Files.readString(at.resolve(page), StandardCharsets.UTF_8);
            }
        }
        throw new IllegalStateException("no " + page + " above " + dir);
    }
}
