"""The watermarks both Flink programs carry, as Java source text: Flink's own ``forBoundedOutOfOrderness`` per
partition (and ``withIdleness``), merged by Flink's own ``WatermarkOutputMultiplexer`` (as a Kafka source merges its
splits), emitted on the replay's tick rows instead of a wall-clock timer.

Java because PyFlink has no Python ``WatermarkGenerator``: the PyFlink program compiles :data:`HELPER` with javac
on first run (``flink_job``), the Java program has :data:`ARRIVAL_TICKS_JAVA` as a nested class
(``flink_java_job``). One text, so both engines' runs start from the same watermarks.
"""

from __future__ import annotations

# Flink's own generators, one per partition, periodic emission driven by the replay's tick rows. Rows are
# (id, key, event time ms, partition, is_tick). Shared by the PyFlink helper and the Java program.
ARRIVAL_TICKS_JAVA = r"""
    /** Flink's forBoundedOutOfOrderness(bound), one generator per partition (wrapped in Flink's withIdleness when
     *  idleMs ≥ 0), merged by Flink's own WatermarkOutputMultiplexer, as a Kafka source merges its splits: on each
     *  tick row (an auto-watermark interval of arrival time, its time in f2) every generator's onPeriodicEmit
     *  writes to its partition's deferred output, then the multiplexer merges (the min over the partitions not
     *  idle, the highest when all are), as ProgressiveTimestampsAndWatermarks does on its wall-clock timer. The
     *  idleness timer reads the ticks' time, so the same file gives the same watermarks on every run. */
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
            final long[] nowMs = {0, Long.MIN_VALUE};  // the replay's clock: the last tick's arrival, its origin
            // from 1 ms before the first tick: epoch ns overflow a long, and IdlenessTimer reads a clock start of 0
            // as "no clock started" (a system clock never reads 0)
            final RelativeClock clock = new RelativeClock() {
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
                private final List<WatermarkOutput> splits = new ArrayList<>();  // each partition's deferred output
                private WatermarkOutputMultiplexer merge;  // made on the first row: it writes to the operator's output

                @Override
                public void onEvent(Tuple5<String, String, Long, String, Boolean> row, long ts, WatermarkOutput out) {
                    if (merge == null) {
                        merge = new WatermarkOutputMultiplexer(out);
                        for (int p = 0; p < generators.size(); p++) {
                            merge.registerNewOutput(String.valueOf(p));
                            splits.add(merge.getDeferredOutput(String.valueOf(p)));
                        }
                    }
                    if (!row.f4) {
                        int p = index.computeIfAbsent(row.f3, key -> index.size());
                        generators.get(p).onEvent(row, ts, splits.get(p));
                        return;
                    }
                    nowMs[0] = row.f2;
                    nowMs[1] = nowMs[1] == Long.MIN_VALUE ? row.f2 - 1 : nowMs[1];
                    for (int p = 0; p < generators.size(); p++) {
                        generators.get(p).onPeriodicEmit(splits.get(p));
                    }
                    merge.onPeriodicEmit();
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
import org.apache.flink.api.common.eventtime.WatermarkOutputMultiplexer;
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
