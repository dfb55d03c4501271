package io.gantry.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.authority.Purpose;
import java.util.List;
import org.junit.jupiter.api.Test;

class SharedConfigurationTest {

    private static final SharedConfiguration.Server DB1 =
            new SharedConfiguration.Server("db1", 3306, "shop", "svc", 50, "");
    private static final SharedConfiguration.Server DB2 =
            new SharedConfiguration.Server("db2", 3306, "shop", "svc", 50, "ssl-mode=REQUIRED");

    private final SharedConfiguration configuration = new SharedConfiguration(List.of(DB1, DB2), List.of(DB1));

    @Test
    void aVersionReadsBackAsItWasWrittenAndCarriesNoPassword() {
        String json = configuration.toJson();
        assertThat(json).doesNotContainIgnoringCase("password");
        assertThat(SharedConfiguration.fromJson(json)).isEqualTo(configuration);
    }

    @Test
    void aWeightChangesOnEveryListThatHasTheServerAndNothingElse() {
        SharedConfiguration changed = configuration.withWeight("DB1:3306", 7);
        assertThat(changed.proxy()).extracting(SharedConfiguration.Server::weight).containsExactly(7, 50);
        assertThat(changed.cdc()).extracting(SharedConfiguration.Server::weight).containsExactly(7);
        assertThat(configuration.sameServers(Purpose.PROXY, changed)).as("weights alone").isTrue();
        assertThat(configuration.withWeight("db3:3306", 7)).isEqualTo(configuration);
    }

    @Test
    void anotherServerAccountOrTlsIsNotTheSameList() {
        SharedConfiguration otherAccount = configuration.withList(Purpose.PROXY,
                List.of(DB1, new SharedConfiguration.Server("db2", 3306, "shop", "other", 50, "ssl-mode=REQUIRED")));
        SharedConfiguration otherOrder = configuration.withList(Purpose.PROXY, List.of(DB2, DB1));
        assertThat(configuration.sameServers(Purpose.PROXY, otherAccount)).isFalse();
        assertThat(configuration.sameServers(Purpose.PROXY, otherOrder)).isFalse();
        assertThat(configuration.sameServers(Purpose.CDC, otherOrder)).isTrue();
    }

    @Test
    void textThatIsNoConfigurationIsRefusedSayingSo() {
        assertThatThrownBy(() -> SharedConfiguration.fromJson("{\"proxy\": []}"))
                .hasMessageContaining("not a Gantry cluster configuration");
        assertThatThrownBy(() -> SharedConfiguration.fromJson("[1, 2"))
                .hasMessageContaining("not a Gantry cluster configuration");
    }

    @Test
    void namesAreCheckedWithTheFlagInTheMessage() {
        assertThatThrownBy(() -> new ClusterSettings("shop floor", "gantry_cluster", "a", "h:1"))
                .hasMessageContaining("--cluster must be");
        assertThatThrownBy(() -> new ClusterSettings("shop", "gantry-cluster", "a", "h:1"))
                .hasMessageContaining("--cluster-schema must be");
        assertThat(new ClusterSettings("shop", "gantry_cluster", "host-1.example:3307", "h:1").instance())
                .isEqualTo("host-1.example:3307");
    }
}
