package io.gantry.localsocket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A socket's file: owner-only from the start, in place in one step, and careful of what it replaces. */
class SocketFileTest {

    @TempDir
    Path dir;

    private final List<ServerSocketChannel> servers = new ArrayList<>();

    @AfterEach
    void close() throws IOException {
        for (ServerSocketChannel server : servers) {
            server.close();
        }
    }

    private static final SocketFile.Name ADMIN = new SocketFile.Name("the admin socket",
            "choose another path with --admin-socket");

    private SocketFile bind(Path path) throws IOException {
        return SocketFile.bind(path, ADMIN, address -> {
            ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            servers.add(server);
            server.bind(address);
        });
    }

    @Test
    void theSocketIsOwnerOnlyInItsPlaceAndNothingIsLeftBeside() throws IOException {
        SocketFile file = bind(dir.resolve("admin.sock"));
        assertThat(file.path()).isEqualTo(dir.resolve("admin.sock").toAbsolutePath());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file.path()))).isEqualTo("rw-------");
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).toList()).containsExactly("admin.sock");
        }
        try (SocketChannel client = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            client.connect(UnixDomainSocketAddress.of(file.path()));
            assertThat(client.isConnected()).isTrue();
        }
        file.delete();
        assertThat(file.path()).doesNotExist();
    }

    @Test
    void aFileThatIsNotASocketIsLeftAloneAndStopsTheStart() throws IOException {
        Path path = Files.writeString(dir.resolve("admin.sock"), "mine");
        assertThatThrownBy(() -> bind(path)).isInstanceOf(IOException.class)
                .hasMessageContaining("exists and is not a socket");
        assertThat(Files.readString(path)).isEqualTo("mine");
    }

    @Test
    void aSocketSomeoneListensOnIsNotTakenOver() throws IOException {
        bind(dir.resolve("admin.sock"));
        assertThatThrownBy(() -> bind(dir.resolve("admin.sock"))).isInstanceOf(IOException.class)
                .hasMessageContaining("another process listens on the admin socket");
    }

    @Test
    void aSocketLeftByAGantryThatDiedIsReplaced() throws IOException {
        bind(dir.resolve("admin.sock"));
        servers.get(0).close();
        SocketFile again = bind(dir.resolve("admin.sock"));
        try (SocketChannel client = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            client.connect(UnixDomainSocketAddress.of(again.path()));
        }
    }

    @Test
    void aPathTooLongForAUnixSocketIsRefusedWithTheReason() {
        Path path = dir.resolve("x".repeat(120) + ".sock");
        assertThatThrownBy(() -> bind(path)).isInstanceOf(IOException.class)
                .hasMessageContaining("may have at most 107").hasMessageContaining("--admin-socket");
    }

    @Test
    void deletingLeavesAnotherProcesssSocketAlone() throws IOException {
        SocketFile first = bind(dir.resolve("admin.sock"));
        servers.get(0).close();
        bind(dir.resolve("admin.sock"));
        first.delete();
        assertThat(dir.resolve("admin.sock")).exists();
    }
}
