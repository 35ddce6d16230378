"""The watermarks both Flink programs carry, as Java source text: Flink's own ``forBoundedOutOfOrderness`` per
partition (and ``withIdleness``), merged by min, emitted on the replay's tick rows instead of a wall-clock timer.

Java because PyFlink has no Python ``WatermarkGenerator``: the PyFlink program compiles :data:`HELPER` with javac
on first run (``flink_job``), the Java program has :data:`ARRIVAL_TICKS_JAVA` as a nested class
(``flink_java_job``). One text, so both engines' runs start from the same watermarks.
"""

from __future__ import annotations

# Flink's own generators, one per partition, periodic emission driven by the replay's tick rows. Rows are
# (id, key, event time ms, partition, is_tick). Shared by the PyFlink helper and the Java program.
ARRIVAL_TICKS_JAVA = r"""
    /** Flink's forBoundedOutOfOrderness(bound), one generator per partition (wrapped in Flink's withIdleness when
     *  idleMs ≥ 0), merged by min over the partitions not idle, as a Kafka source merges its splits; onPeriodicEmit
     *  is called on each tick row (an auto-watermark interval of arrival time, its time in f2) instead of on a
     *  wall-clock timer, and the idleness timer reads the ticks' time, so the same file gives the same
     *  watermarks on every run. */
    public static class ArrivalTicks implements WatermarkStrategy<Tuple5<String, String, Long, String, Boolean>> {
        private final long boundMs;
        private final int partitions;
        private final long idleMs;

        public ArrivalTicks(long boundMs, int partitions, long idleMs) {
            this.boundMs = boundMs;
            this.partitions = partitions;
            this.idleMs = idleMs;
        }

        @Override
        public WatermarkGenerator<Tuple5<String, String, Long, String, Boolean>> createWatermarkGenerator(
                WatermarkGeneratorSupplier.Context context) {
            final long[] nowMs = {0, Long.MIN_VALUE};  // the replay's clock: the last tick's arrival, the first's
            final RelativeClock clock = new RelativeClock() {  // from the first tick: epoch ns overflow a long
                @Override public long relativeTimeMillis() { return nowMs[0] - nowMs[1]; }
                @Override public long relativeTimeNanos() { return (nowMs[0] - nowMs[1]) * 1_000_000L; }
            };
            final List<WatermarkGenerator<Tuple5<String, String, Long, String, Boolean>>> generators = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {  // every partition from the start, as a Kafka source's splits
                WatermarkGenerator<Tuple5<String, String, Long, String, Boolean>> g =
                    WatermarkStrategy.<Tuple5<String, String, Long, String, Boolean>>forBoundedOutOfOrderness(
                        Duration.ofMillis(boundMs)).createWatermarkGenerator(context);
                generators.add(idleMs < 0 ? g : new WatermarksWithIdleness<>(g, Duration.ofMillis(idleMs), clock));
            }
            return new WatermarkGenerator<Tuple5<String, String, Long, String, Boolean>>() {
                private final Map<String, Integer> index = new HashMap<>();  // partition -> its generator
                // each partition's last watermark and whether it said it is idle, kept between periodic emits as
                // a source's WatermarkOutputMultiplexer keeps them (withIdleness marks idle once, when it goes idle)
                private final long[] marks = new long[generators.size()];
                private final boolean[] idle = new boolean[generators.size()];
                private long emitted = Long.MIN_VALUE;

                { java.util.Arrays.fill(marks, Long.MIN_VALUE); }

                @Override
                public void onEvent(Tuple5<String, String, Long, String, Boolean> row, long ts, WatermarkOutput out) {
                    if (!row.f4) {
                        generators.get(index.computeIfAbsent(row.f3, p -> index.size())).onEvent(row, ts, out);
                        return;
                    }
                    nowMs[0] = row.f2;
                    nowMs[1] = nowMs[1] == Long.MIN_VALUE ? row.f2 : nowMs[1];
                    long merged = Long.MAX_VALUE;
                    boolean active = false;
                    for (int p = 0; p < generators.size(); p++) {
                        final int at = p;
                        generators.get(p).onPeriodicEmit(new WatermarkOutput() {
                            @Override public void emitWatermark(Watermark w) {
                                marks[at] = Math.max(marks[at], w.getTimestamp());
                                idle[at] = false;
                            }
                            @Override public void markIdle() { idle[at] = true; }
                            @Override public void markActive() { idle[at] = false; }
                        });
                        if (!idle[p]) {
                            merged = Math.min(merged, marks[p]);
                            active = true;
                        }
                    }
                    if (active && merged > emitted) {  // all idle: no watermark; it never goes back
                        emitted = merged;
                        out.emitWatermark(new Watermark(merged));
                    }
                }

                @Override
                public void onPeriodicEmit(WatermarkOutput out) {}
            };
        }

        @Override
        public TimestampAssigner<Tuple5<String, String, Long, String, Boolean>> createTimestampAssigner(
                TimestampAssignerSupplier.Context context) {
            return (row, previous) -> row.f2;
        }
    }
"""

JAVA_IMPORTS = """import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.eventtime.TimestampAssigner;
import org.apache.flink.api.common.eventtime.TimestampAssignerSupplier;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkGeneratorSupplier;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.eventtime.WatermarksWithIdleness;
import org.apache.flink.api.java.tuple.Tuple5;
import org.apache.flink.util.clock.RelativeClock;
"""

HELPER = ("package wxreplay;\n\n" + JAVA_IMPORTS + "import org.apache.flink.streaming.api.datastream.DataStream;\n\n"
           "/** The replay's watermarks for a PyFlink job (PyFlink has no Python WatermarkGenerator). */\n"
           "public class Replay {\n" + ARRIVAL_TICKS_JAVA + """
    public static WatermarkStrategy<Tuple5<String, String, Long, String, Boolean>> watermarks(long boundMs,
                                                                                          int partitions,
                                                                                          long idleMs) {
        return new ArrivalTicks(boundMs, partitions, idleMs);
    }

    /** The events, without the tick rows (before keyBy). */
    public static DataStream<Tuple5<String, String, Long, String, Boolean>> events(
            DataStream<Tuple5<String, String, Long, String, Boolean>> rows) {
        return rows.filter(row -> !row.f4);
    }
}
""")
