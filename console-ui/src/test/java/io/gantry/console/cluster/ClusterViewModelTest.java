package io.gantry.console.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.Column;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.console.FakeEngine;
import io.gantry.console.ui.UiExecutor;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterViewModelTest {

    private static final List<String> NAMES = List.of("Instance", "Address", "Gantry_version", "Config_version",
            "Cluster_version", "Last_seen", "Seconds_since_seen", "This_instance");

    private static Reply rows(Request request, List<List<Object>> rows) {
        List<Column> columns = new ArrayList<>();
        for (String name : NAMES) {
            columns.add(new Column(name, Column.Type.TEXT));
        }
        return new Reply.Rows(request.id(), columns, rows);
    }

    @Test
    void theInstancesAreReadOnConnectAndOneBehindIsTold() {
        FakeEngine engine = FakeEngine.answering(request -> rows(request, List.of(
                List.of("gantry-a", "10.0.0.1:3307", "1.0", "7", "7", "2026-12-05T10:00:00Z", "0.5", "yes"),
                List.of("gantry-b", "10.0.0.2:3307", "1.0", "6", "7", "2026-12-05T09:59:58Z", "2.5", "no"))));
        ClusterViewModel model = new ClusterViewModel(UiExecutor.direct(), engine, Clock.systemUTC());
        model.connected(new Reply.Welcome(1, "test", "127.0.0.1:3307", "/data"));
        assertThat(model.rows()).extracting(Instance::instance).containsExactly("gantry-a", "gantry-b");
        assertThat(model.rows()).extracting(Instance::behind).containsExactly(false, true);
        assertThat(model.messageProperty().get()).isEmpty();
        assertThat(engine.requests()).extracting(request -> ((Request.Sql) request).sql())
                .containsExactly("SHOW GANTRY CLUSTER");
    }

    @Test
    void anEngineInNoClusterSaysHowToStartOne() {
        FakeEngine engine = FakeEngine.answering(request -> new Reply.Error(request.id(), "refused",
                "this Gantry is not in a cluster: start it with --cluster NAME to share its configuration with other "
                        + "instances"));
        ClusterViewModel model = new ClusterViewModel(UiExecutor.direct(), engine, Clock.systemUTC());
        model.refresh();
        assertThat(model.rows()).isEmpty();
        assertThat(model.messageProperty().get()).isEqualTo("cannot read the cluster: refused: this Gantry is not in "
                + "a cluster: start it with --cluster NAME to share its configuration with other instances");
    }
}
