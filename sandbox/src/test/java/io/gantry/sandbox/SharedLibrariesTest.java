package io.gantry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SharedLibrariesTest {

    private static final String LDD_WITHOUT_LIBAIO = """
            \tlinux-vdso.so.1 (0x00007ffd5c5f2000)
            \tlibpthread.so.0 => /lib/x86_64-linux-gnu/libpthread.so.0 (0x00007f3a1c9e1000)
            \tlibaio.so.1 => not found
            \tlibnuma.so.1 => /lib/x86_64-linux-gnu/libnuma.so.1 (0x00007f3a1c9d0000)
            \tlibaio.so.1 => not found
            \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f3a1c600000)
            """;

    @Test
    void readsEachLibraryTheLoaderCannotFindOnce() {
        assertThat(SharedLibraries.parseNotFound(LDD_WITHOUT_LIBAIO)).containsExactly("libaio.so.1");
        assertThat(SharedLibraries.parseNotFound("\tlibc.so.6 => /lib/libc.so.6 (0x1)\n")).isEmpty();
    }

    @Test
    void bridgesALibraryThatExistsUnderItsT64NameFromAPrivateDirectory(@TempDir Path temp) throws Exception {
        Path system = Files.createDirectories(temp.resolve("system"));
        Files.writeString(system.resolve("libaio.so.1t64"), "not really a library");
        Path bridge = temp.resolve("bridge");

        List<String> left = SharedLibraries.bridge(List.of("libaio.so.1", "libnuma.so.1"), bridge, List.of(system));

        assertThat(left).containsExactly("libnuma.so.1");
        assertThat(Files.readSymbolicLink(bridge.resolve("libaio.so.1"))).isEqualTo(system.resolve("libaio.so.1t64"));
        assertThat(system).isDirectoryNotContaining(p -> p.getFileName().toString().equals("libaio.so.1"));
    }

    @Test
    void namesEachMissingLibraryWithThePackageThatBringsIt() {
        assertThat(SharedLibraries.explain("MySQL 8.0.15 (bundled)", List.of("libaio.so.1", "libfoo.so.3")))
                .isEqualTo("MySQL 8.0.15 (bundled) cannot start here: it needs libaio.so.1 (apt-get install libaio1;"
                        + " on Debian 13 and Ubuntu 24.04: libaio1t64), libfoo.so.3 (install the package that"
                        + " provides it)");
    }
}
