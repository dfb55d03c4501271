package io.gantry.console.timeline;

import io.gantry.admin.protocol.TimelineEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Where the timeline's marks and their labels go, without the FX toolkit: entries of one lane whose dots would
 * cover each other (a list change of each list in the same second, a burst of weight changes) become one mark,
 * labelled with what it holds ({@code list changed ×2}); a mark's label goes above its dot, else below, else (when
 * both rows are taken by the labels before it) it is left out, so no two labels are ever drawn over each other.
 */
final class TimelineLayout {

    /** Dots closer than this, in pixels, are one mark. */
    static final double MERGE_DISTANCE = 12;
    /** From a dot's centre to the start of its label. */
    static final double LABEL_OFFSET = 8;
    /** Free space kept after a label before the next one in its row: wide enough that two never read as one. */
    static final double LABEL_GAP = 12;

    /** Which of a mark's two label rows its label is in. */
    enum Row { ABOVE, BELOW, NONE }

    /**
     * One dot: the entries it stands for (oldest first), where it is, and its label.
     *
     * @param labelX where the label starts, meaningful unless {@code row} is {@link Row#NONE}
     */
    record Mark(int lane, double x, List<TimelineEvent> events, String label, Row row, double labelX,
                double labelWidth) {

        Mark {
            events = List.copyOf(events);
        }

        /** The newest entry: the one a click selects. */
        TimelineEvent newest() {
            return events.get(events.size() - 1);
        }
    }

    /** An entry and where its dot is. */
    record Placed(TimelineEvent event, int lane, double x) {
    }

    private TimelineLayout() {
    }

    /**
     * The marks for entries in time order.
     *
     * @param width a label's width in pixels, as the font draws it
     */
    static List<Mark> layout(List<Placed> entries, int lanes, ToDoubleFunction<String> width) {
        List<List<Placed>> groups = new ArrayList<>();
        List<List<Placed>> openByLane = new ArrayList<>();
        for (int i = 0; i < lanes; i++) {
            openByLane.add(null);
        }
        for (Placed entry : entries) {
            List<Placed> group = openByLane.get(entry.lane());
            if (group != null && entry.x() - group.get(0).x() < MERGE_DISTANCE) {
                group.add(entry);
            } else {
                group = new ArrayList<>(List.of(entry));
                openByLane.set(entry.lane(), group);
                groups.add(group);
            }
        }
        double[] aboveEnds = new double[lanes];
        double[] belowEnds = new double[lanes];
        Arrays.fill(aboveEnds, Double.NEGATIVE_INFINITY);
        Arrays.fill(belowEnds, Double.NEGATIVE_INFINITY);
        List<Mark> marks = new ArrayList<>();
        for (List<Placed> group : groups) {
            Placed first = group.get(0);
            int lane = first.lane();
            String label = label(group.stream().map(Placed::event).toList());
            double labelWidth = width.applyAsDouble(label);
            double labelX = first.x() + LABEL_OFFSET;
            Row row;
            if (labelX >= aboveEnds[lane]) {
                row = Row.ABOVE;
                aboveEnds[lane] = labelX + labelWidth + LABEL_GAP;
            } else if (labelX >= belowEnds[lane]) {
                row = Row.BELOW;
                belowEnds[lane] = labelX + labelWidth + LABEL_GAP;
            } else {
                row = Row.NONE;
            }
            marks.add(new Mark(lane, first.x(), group.stream().map(Placed::event).toList(), label, row, labelX,
                    labelWidth));
        }
        return marks;
    }

    /** {@code down}; {@code list changed ×2}; {@code startup, list changed ×2}: the kinds in order, with counts. */
    static String label(List<TimelineEvent> events) {
        Map<String, Integer> kinds = new LinkedHashMap<>();
        for (TimelineEvent event : events) {
            kinds.merge(event.kind().replace('_', ' '), 1, Integer::sum);
        }
        List<String> parts = new ArrayList<>();
        kinds.forEach((kind, count) -> parts.add(count == 1 ? kind : kind + " \u00d7" + count));
        return String.join(", ", parts);
    }
}
