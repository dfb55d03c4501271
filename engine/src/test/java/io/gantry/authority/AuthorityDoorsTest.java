package io.gantry.authority;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Authority is Gantry's alone: no database port for other processes (one process opens it at a time, and
 * another is told how to read a running Gantry's tables instead), H2 users with a password, and a data directory
 * that only its owner can use.
 */
class AuthorityDoorsTest {

    @TempDir
    Path dir;

    @Test
    void anotherProcessCannotOpenARunningGantrysAuthorityAndIsToldWhatToDo() throws Exception {
        try (Authority authority = Authority.open(dir)) {
            authority.replaceServerList(Purpose.PROXY, List.of(new StoredServer("db1", 3306, "shop", "svc", 50)),
                    "start");
            Result other = runOtherProcess();
            assertThat(other.exitCode()).isNotZero();
            assertThat(other.output()).contains("in use by another process").contains("--from mysql://");
        }
        // Once it is closed, another process opens it (export-health of a stopped Gantry).
        Result other = runOtherProcess();
        assertThat(other.exitCode()).as(other.output()).isZero();
        assertThat(other.output()).contains("proxy=1");
    }

    @Test
    void theDatabaseHasAPasswordKeptOwnerOnly() throws Exception {
        try (Authority authority = Authority.open(dir)) {
            authority.recordEvent(Instant.now(), null, EventKind.STARTUP, "start");
        }
        Path key = dir.resolve(DataDirectory.KEY_FILE);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(key))).isEqualTo("rw-------");
        assertThat(Files.readString(key, StandardCharsets.US_ASCII).strip()).hasSizeGreaterThanOrEqualTo(32);
        String url = AuthorityDatabase.jdbcUrl(dir, true);
        for (String user : List.of("sa", Schema.READER)) {
            assertThatThrownBy(() -> DriverManager.getConnection(url, user, "").close())
                    .as("%s with an empty password", user).isInstanceOf(SQLException.class)
                    .hasMessageContaining("Wrong user name or password");
        }
        assertThat(url).doesNotContain("AUTO_SERVER");
    }

    @Test
    void aDataDirectoryOpenToOthersIsMadeOwnerOnly() throws Exception {
        Path data = dir.resolve("data");
        Files.createDirectories(data);
        Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxr-xr-x"));
        try (Authority authority = Authority.open(data)) {
            authority.recordEvent(Instant.now(), null, EventKind.STARTUP, "start");
        }
        Files.setPosixFilePermissions(data.resolve(Authority.FILE_NAME), PosixFilePermissions.fromString("rw-r--r--"));
        Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxr-x---"));
        Authority.open(data).close();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(data))).isEqualTo("rwx------");
        try (Stream<Path> files = Files.list(data)) {
            for (Path file : files.toList()) {
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).as(file.toString())
                        .isEqualTo("rw-------");
            }
        }
    }

    @Test
    void anAuthorityMadeWithAnEmptyPasswordGetsTheKey() throws Exception {
        // What an earlier Gantry left: owner 'sa' with an empty password, no key file.
        String url = AuthorityDatabase.jdbcUrl(dir, false);
        try (var connection = DriverManager.getConnection(url, "sa", "")) {
            connection.createStatement().execute("CREATE SCHEMA IF NOT EXISTS GANTRY");
        }
        Authority.open(dir).close();
        assertThat(dir.resolve(DataDirectory.KEY_FILE)).exists();
        assertThatThrownBy(() -> DriverManager.getConnection(url, "sa", "").close()).isInstanceOf(SQLException.class);
    }

    private record Result(int exitCode, String output) {
    }

    private Result runOtherProcess() throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of(java, "-cp", classPath, AnotherGantryProcess.class.getName(),
                dir.toString()));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the other process ends").isTrue();
            return new Result(process.exitValue(),
                    new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        } finally {
            process.destroyForcibly();
        }
    }
}
