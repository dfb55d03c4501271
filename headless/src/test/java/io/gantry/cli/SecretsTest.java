package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.topology.UpstreamUrl;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SecretsTest {

    @TempDir
    Path directory;

    @Test
    void passwordFileGivesItsContentWithoutTheLineEnd() throws IOException {
        assertThat(Secrets.readPasswordFile("--upstream-password-file", file("s3cret #x\n", "rw-------")))
                .isEqualTo("s3cret #x");
        assertThat(Secrets.readPasswordFile("--upstream-password-file", file("s3cret\r\n", "r--------")))
                .isEqualTo("s3cret");
        assertThat(Secrets.readPasswordFile("--upstream-password-file", file(" two words ", "rw-------")))
                .isEqualTo(" two words ");
    }

    @ParameterizedTest
    @ValueSource(strings = {"rw-r-----", "rw----r--", "rw-r--r--"})
    void passwordFileOthersMayReadIsRefusedNamingIt(String mode) throws IOException {
        Path file = file("s3cret\n", mode);
        assertThatThrownBy(() -> Secrets.readPasswordFile("--cdc-password-file", file))
                .hasMessageContaining("--cdc-password-file " + file + " may be read by group or others (mode " + mode
                        + "): a password file must be readable by its owner only; chmod 600 " + file)
                .hasMessageNotContaining("s3cret");
    }

    @Test
    void emptyAndMissingFilesAreRefused() throws IOException {
        Path empty = file("\n", "rw-------");
        assertThatThrownBy(() -> Secrets.readPasswordFile("--upstream-password-file", empty))
                .hasMessage("--upstream-password-file " + empty + " is empty");
        Path missing = directory.resolve("missing");
        assertThatThrownBy(() -> Secrets.readPasswordFile("--upstream-password-file", missing))
                .hasMessage("--upstream-password-file " + missing + ": no such file");
    }

    @Test
    void fileAndVariableTogetherAreRefused() throws IOException {
        Path file = file("a", "rw-------");
        assertThatThrownBy(() -> Secrets.password("--upstream-password-file", file,
                Secrets.UPSTREAM_PASSWORD_VARIABLE, Map.of(Secrets.UPSTREAM_PASSWORD_VARIABLE, "b")))
                .hasMessage("--upstream-password-file and the environment variable GANTRY_UPSTREAM_PASSWORD both "
                        + "give a password: keep one");
        assertThat(Secrets.password("--upstream-password-file", null, Secrets.UPSTREAM_PASSWORD_VARIABLE,
                Map.of(Secrets.UPSTREAM_PASSWORD_VARIABLE, "b"))).contains("b");
        assertThat(Secrets.password("--upstream-password-file", null, Secrets.UPSTREAM_PASSWORD_VARIABLE,
                Map.of())).isEmpty();
    }

    @Test
    void passwordGoesOnlyToUrlsWrittenWithoutOne() {
        List<UpstreamUrl> urls = UpstreamUrl.parseList(List.of("mysql://app@db1:3306/app,mysql://cdc:own@db2:3306/app"));
        assertThat(Secrets.anyWrittenPassword(urls)).isTrue();
        List<UpstreamUrl> filled = Secrets.fillIn(urls, Optional.of("fromfile"));
        assertThat(filled).extracting(UpstreamUrl::password).containsExactly("fromfile", "own");
        assertThat(Secrets.fillIn(urls, Optional.empty())).isEqualTo(urls);
    }

    private Path file(String content, String mode) throws IOException {
        Path file = Files.createTempFile(directory, "password", "");
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }
}
