package io.gantry.console.timeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.TimelineEvent;
import io.gantry.console.timeline.TimelineLayout.Mark;
import io.gantry.console.timeline.TimelineLayout.Placed;
import io.gantry.console.timeline.TimelineLayout.Row;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TimelineLayoutTest {

    /** 6 px a character, about the 10 pt label font. */
    private static double width(String text) {
        return 6 * text.length();
    }

    private static Placed at(int lane, double x, String kind) {
        return new Placed(new TimelineEvent(0, Instant.EPOCH.plusMillis((long) x), null, kind, kind), lane, x);
    }

    @Test
    void listChangesInTheSameSecondAreOneMarkThatSaysHowMany() {
        List<Mark> marks = TimelineLayout.layout(List.of(at(0, 500, "startup"), at(0, 500, "list_changed"),
                at(0, 501, "list_changed"), at(1, 500, "up")), 2, TimelineLayoutTest::width);

        assertThat(marks).extracting(Mark::lane, Mark::label, Mark::row).containsExactly(
                org.assertj.core.groups.Tuple.tuple(0, "startup, list changed \u00d72", Row.ABOVE),
                org.assertj.core.groups.Tuple.tuple(1, "up", Row.ABOVE));
        assertThat(marks.get(0).events()).hasSize(3);
        assertThat(marks.get(0).newest().kind()).isEqualTo("list_changed");
        assertThat(TimelineLayout.label(List.of(at(0, 0, "list_changed").event(), at(0, 0, "list_changed").event())))
                .isEqualTo("list changed \u00d72");
    }

    @Test
    void closeMarksTakeTheRowBelowAndAThirdGoesWithoutALabel() {
        List<Mark> marks = TimelineLayout.layout(List.of(at(0, 100, "list_changed"), at(0, 130, "list_changed"),
                at(0, 160, "list_changed"), at(0, 400, "list_changed")), 1, TimelineLayoutTest::width);

        assertThat(marks).extracting(Mark::row).containsExactly(Row.ABOVE, Row.BELOW, Row.NONE, Row.ABOVE);
        assertThat(marks).extracting(Mark::label).containsOnly("list changed");
    }

    @Test
    void noTwoLabelsOfALaneOverlapHoweverCrowded() {
        Random random = new Random(31);
        for (int round = 0; round < 200; round++) {
            List<Placed> entries = new ArrayList<>();
            double x = 140;
            for (int i = 0; i < 40; i++) {
                x += random.nextInt(3) == 0 ? 0 : random.nextDouble() * 60;
                entries.add(at(random.nextInt(3), x, random.nextBoolean() ? "list_changed" : "weight_changed"));
            }
            List<Mark> marks = TimelineLayout.layout(entries, 3, TimelineLayoutTest::width);

            assertThat(marks.stream().mapToInt(m -> m.events().size()).sum()).isEqualTo(entries.size());
            for (Mark a : marks) {
                for (Mark b : marks) {
                    if (a != b && a.lane() == b.lane()) {
                        assertThat(Math.abs(a.x() - b.x())).as("dots of one lane apart")
                                .isGreaterThanOrEqualTo(TimelineLayout.MERGE_DISTANCE);
                        if (a.row() == b.row() && a.row() != Row.NONE) {
                            boolean apart = a.labelX() + a.labelWidth() <= b.labelX()
                                    || b.labelX() + b.labelWidth() <= a.labelX();
                            assertThat(apart).as("'%s' at %.1f and '%s' at %.1f in lane %d", a.label(), a.labelX(),
                                    b.label(), b.labelX(), a.lane()).isTrue();
                        }
                    }
                }
            }
        }
    }
}
