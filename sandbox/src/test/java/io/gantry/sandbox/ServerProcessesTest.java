package io.gantry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ServerProcessesTest {

    private static final String SERVER = "/opt/mariadb/bin/mariadbd --defaults-file=/tmp/demo2/primary/my.cnf";

    @Test
    void aServerBelongsToTheDirectoryItsFilesAreUnder() {
        assertThat(ServerProcesses.mentionsDirectory(SERVER, Path.of("/tmp/demo2"))).isTrue();
        assertThat(ServerProcesses.mentionsDirectory(SERVER, Path.of("/tmp/demo2/primary"))).isTrue();
        assertThat(ServerProcesses.mentionsDirectory(SERVER, Path.of("/tmp/demo2/"))).isTrue();
    }

    @Test
    void aDirectoryWhoseNameIsAPrefixOfAnotherDoesNotClaimItsServers() {
        assertThat(ServerProcesses.mentionsDirectory(SERVER, Path.of("/tmp/demo"))).isFalse();
        assertThat(ServerProcesses.mentionsDirectory(SERVER, Path.of("/tmp/demo2/prim"))).isFalse();
    }
}
