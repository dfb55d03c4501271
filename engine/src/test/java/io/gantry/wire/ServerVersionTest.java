package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ServerVersionTest {

    @Test
    void readsMariaDbBehindItsCompatibilityPrefix() {
        ServerVersion debian = ServerVersion.parse("5.5.5-10.11.18-MariaDB-0+deb12u1");
        assertThat(debian.mariaDb()).isTrue();
        assertThat(debian.atLeast(10, 11, 18)).isTrue();
        assertThat(debian.atLeast(10, 11, 19)).isFalse();
        assertThat(debian.atLeast(11, 1, 0)).isFalse();
    }

    @Test
    void readsVersionFunctionFormsOfBothProducts() {
        assertThat(ServerVersion.parse("11.4.5-MariaDB-log")).isEqualTo(new ServerVersion(true, 11_004_005L));
        assertThat(ServerVersion.parse("8.0.15")).isEqualTo(new ServerVersion(false, 8_000_015L));
        assertThat(ServerVersion.parse(" 8.4.3-commercial ").atLeast(8, 0, 22)).isTrue();
    }

    @Test
    void aVersionWithoutAReleaseIsTakenAsRecent() {
        ServerVersion cloud = ServerVersion.parse("cloud-build");
        assertThat(cloud.mariaDb()).isFalse();
        assertThat(cloud.atLeast(99, 0, 0)).isTrue();
    }
}
