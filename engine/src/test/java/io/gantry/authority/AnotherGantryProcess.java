package io.gantry.authority;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;

/**
 * Run in a separate JVM by {@link AuthorityDoorsTest}: opens the Authority of {@code args[0]}, prints what it
 * reads, writes one event, and keeps it open for {@code args[1]} milliseconds if given. A failure to open it
 * is printed and ends the process with exit code 1.
 */
public final class AnotherGantryProcess {

    private AnotherGantryProcess() {
    }

    private static Authority open(Path dataDir) {
        try {
            return Authority.openExisting(dataDir);
        } catch (AuthorityException e) {
            System.out.println(e.getMessage());
            System.out.flush();
            System.exit(1);
            throw e;
        }
    }

    /** {@code args}: the data directory, then optionally how long to keep it open after writing, in ms. */
    public static void main(String[] args) throws InterruptedException {
        try (Authority authority = open(Path.of(args[0]))) {
            System.out.println("samples=" + authority.healthHistory(null, null, Optional.empty()).size());
            System.out.println("proxy=" + authority.serverList(Purpose.PROXY).orElseThrow().size());
            authority.recordEvent(Instant.parse("2026-11-30T21:00:05Z"), null, EventKind.STARTUP,
                    "written from another process");
            System.out.println("written");
            System.out.flush();
            if (args.length > 1) {
                Thread.sleep(Long.parseLong(args[1]));
            }
        }
    }
}
