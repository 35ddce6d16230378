"""The Flink Java export: the same replay as ``flink_job`` (tick rows before each auto-watermark interval of
arrival time, Flink's own ``forBoundedOutOfOrderness`` per partition merged by Flink's own multiplexer), as one Java
source file run with Flink's Java ``WindowOperator``: ``java -cp "<flink jars>/*" Job.java EVENTS OUTDIR`` (Java 11+
runs a single source file; the jars PyFlink ships are enough).

Why Java as well as PyFlink: PyFlink's ``.window()`` runs PyFlink's Python port of the window operator, while a
Java job runs Flink's own; the preset's rules cite the Java one. The program reads the user's file as the Python
programs do (``replay.READING``, in Java): CSV, JSON lines or a JSON array (nested records as dotted columns,
gzip too), the mapped columns, ISO times (naive ones in the zone given) or numbers in the unit the explorer read,
rounded half to even to µs, the same arrival order (arrival, then event time, then id), scripted watermark rows
left out. Parquet and Avro have no reader among Flink's jars, so it asks for CSV.

Output contract (docs/export.md): ``OUTDIR/emissions.jsonl`` (``key``, ``window_start``, ``window_end`` in µs,
``ids``, ``seq``: Flink's firing order) and ``OUTDIR/refused.jsonl`` (``id``, ``key``: the late side output).
"""

from __future__ import annotations

import json

from explorer.config import RunConfig, WindowKind
from explorer.export.common import ExportSource, java_duration, watermark_lag
from explorer.export.flink_cumulate import JAVA_CUMULATIVE_ASSIGNER, JAVA_CUMULATIVE_IMPORTS
from explorer.export.flink_job import describe_cadence, flink_notes, flink_settings
from explorer.export.flink_watermarks import ARRIVAL_TICKS_JAVA, JAVA_IMPORTS
from explorer.export.java_reading import JAVA_READING
from explorer.timeutil import format_duration


def _literal(value: object) -> str:
    """A Python setting as a Java constant's value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}L"
    if isinstance(value, tuple):
        return "new String[] {" + ", ".join(_literal(v) for v in value) + "}"
    return json.dumps(str(value))


def _java_type(name: str, value: object) -> str:
    if isinstance(value, tuple):
        return "String[]"
    if isinstance(value, str) or (value is None and name in ("KEY", "ID", "PARTITION", "KIND")):
        return "String"
    return "Long"


def flink_java_job(config: RunConfig, source: ExportSource) -> str:
    """The program's text (see the module's docstring)."""
    window = config.window
    offset = f", {java_duration(window.offset)}" if window.offset else ""  # Flink's window offset
    assigner = {WindowKind.TUMBLING: f"TumblingEventTimeWindows.of({java_duration(window.size)}{offset})",
                WindowKind.SLIDING: f"SlidingEventTimeWindows.of({java_duration(window.size)}, "
                                    f"{java_duration(window.slide)}{offset})",
                WindowKind.SESSION: f"EventTimeSessionWindows.withGap({java_duration(window.gap)})",
                WindowKind.CUMULATE: f"CumulativeEventTimeWindows.of({java_duration(window.size)}, "
                                     f"{java_duration(window.slide)}, {java_duration(window.offset)})"}[window.kind]
    cumulate = window.kind is WindowKind.CUMULATE
    settings = flink_settings(config, source)
    constants = "\n".join(f"    static final {_java_type(name, value)} {name} = {_literal(value)};"
                          for name, value in settings.items())
    lag, allowed, idle = watermark_lag(config), config.time.allowed_lateness, config.time.source_idle_timeout
    continuous, processing = config.time.continuous_event_time, config.time.continuous_processing_time
    deploy = [" *   WatermarkStrategy<Event> watermarks = WatermarkStrategy",
              f" *       .<Event>forBoundedOutOfOrderness({java_duration(lag)})",
              " *       .withTimestampAssigner((event, previous) -> event.timestamp)"]
    if idle is not None:
        deploy.append(f" *       .withIdleness({java_duration(idle)})")
    deploy[-1] += ";"
    deploy += [" *   env.fromSource(kafkaSource, watermarks, \"events\")  // a watermark per partition, merged by min",
               " *       .keyBy(event -> event.key)",
               f" *       .window({assigner})",
               *([] if continuous is None else
                 [f" *       .trigger(ContinuousEventTimeTrigger.of({java_duration(continuous)}))"]),
               *([] if processing is None else
                 [f" *       .trigger(ContinuousProcessingTimeTrigger.of({java_duration(processing)}))"]),
               f" *       .allowedLateness({java_duration(allowed)})",
               " *       .sideOutputLateData(late)",
               " *       .process(...);"]
    if config.batches is not None and config.batches.interval:
        deploy.append(f" *   env.getConfig().setAutoWatermarkInterval({config.batches.interval // 1000});  // ms")
    header = [f"// NOTE: {n}" for n in flink_notes(config, "Flink")]
    header.append(f"// cadence: {describe_cadence(config)}")
    header.append(f"// watermark: forBoundedOutOfOrderness({format_duration(lag)}); window: {window}; allowedLateness "
                  f"{format_duration(allowed)}; late events to the side output 'late'")
    if cumulate:
        deploy.append(" *   (CumulativeEventTimeWindows: the class below, Flink SQL's CUMULATE windows for the DataStream API)")
    trigger = ("\n            .trigger(ContinuousEventTimeTrigger.of(Duration.ofMillis(CONTINUOUS_MS)))"
               if continuous is not None else
               "\n            .trigger(ContinuousProcessingTimeTrigger.of(Duration.ofMillis(PROCESSING_MS)))"
               if processing is not None else "")
    body = (_PROGRAM.replace("{CONSTANTS}", constants).replace("{ASSIGNER}", assigner).replace("{TRIGGER}", trigger)
            .replace("{DEPLOY}", "\n".join(deploy)).replace("{TICKS}", ARRIVAL_TICKS_JAVA)
            .replace("{CUMULATE}", JAVA_CUMULATIVE_ASSIGNER if cumulate else "")
            .replace("{IMPORTS}", JAVA_IMPORTS + (JAVA_CUMULATIVE_IMPORTS if cumulate else ""))
            .replace("{READING}", JAVA_READING))
    return "\n".join(header) + "\n" + body


_PROGRAM = r"""{IMPORTS}import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.triggers.ContinuousEventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.ContinuousProcessingTimeTrigger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * A Flink job exported by the Watermark Explorer.
 *
 *   java -cp "FLINK_LIB/*" Job.java EVENTS OUTDIR
 *
 * replays EVENTS in arrival order (parallelism 1) through keyBy(key), the window below, allowedLateness and
 * sideOutputLateData, with forBoundedOutOfOrderness(BOUND_MS) watermarks emitted once per auto-watermark interval
 * of arrival time (a tick row before the first event of each interval; TICK_EVERY_EVENTS: after every N events),
 * and writes every firing to OUTDIR/emissions.jsonl (key, window_start, window_end in µs, ids, seq), every event
 * Flink sent to the late side output to OUTDIR/refused.jsonl (id, key), and where its time went to
 * OUTDIR/timing.json (read_s, engine_start_s, run_s). FLINK_LIB: Flink's lib directory (or
 * pyflink/lib of a PyFlink install).
 * To deploy: read your Kafka topic, drop the tick rows and ArrivalTicks, and keep the rest:
{DEPLOY}
 */
public class Job {
{CONSTANTS}

    /** Rows: (id, key, event time ms, partition, is_tick). */
    public static class Contents extends ProcessWindowFunction<Tuple5<String, String, Long, String, Boolean>, String,
                                                             String, TimeWindow> {
        @Override
        public void process(String key, Context context, Iterable<Tuple5<String, String, Long, String, Boolean>> rows,
                            Collector<String> out) {
            List<String> ids = new ArrayList<>();
            for (Tuple5<String, String, Long, String, Boolean> row : rows) ids.add(quote(row.f0));
            Collections.sort(ids);
            out.collect("{\"key\": " + quote(key) + ", \"window_start\": " + context.window().getStart() * 1000
                        + ", \"window_end\": " + context.window().getEnd() * 1000 + ", \"ids\": ["
                        + String.join(", ", ids) + "]}");
        }
    }
{CUMULATE}{TICKS}
    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

{READING}    /** (id, key, event time ms, partition, is_tick) in arrival order (arrival, then event time, then id; without an
     *  arrival column the file's order, arriving with the newest event time so far), a tick before the first
     *  event of each new auto-watermark interval of arrival time; partitions[0] gets how many partitions there
     *  are. With a trace, each event as read (times in µs) is printed there too. */
    static List<Tuple5<String, String, Long, String, Boolean>> replayRows(List<java.util.Map<String, String>> table,
                                                                          int[] partitions,
                                                                          java.io.PrintStream trace) {
        List<String> fileIds = new ArrayList<>();  // ids by row of the file, before watermark rows leave it
        for (int i = 0; i < table.size(); i++) fileIds.add(ID != null ? table.get(i).get(ID).strip() : "e" + (i + 1));
        if (KIND != null) {  // rows of kind "watermark" are the explorer's scripted watermarks, not events
            List<java.util.Map<String, String>> events = new ArrayList<>();
            List<String> eventIds = new ArrayList<>();
            for (int i = 0; i < table.size(); i++) {
                if (!table.get(i).getOrDefault(KIND, "").strip().equalsIgnoreCase("watermark")) {
                    events.add(table.get(i));
                    eventIds.add(fileIds.get(i));
                }
            }
            table = events;
            fileIds = eventIds;
        }
        int n = table.size();
        String[] ids = new String[n], keys = new String[n], parts = new String[n];
        long[] t = new long[n], arrival = new long[n];
        Integer[] order = new Integer[n];
        long newest = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) {
            java.util.Map<String, String> row = table.get(i);
            ids[i] = fileIds.get(i);
            keys[i] = KEY != null ? row.get(KEY).strip() : "";
            parts[i] = PARTITION != null && row.containsKey(PARTITION) ? row.get(PARTITION).strip() : "";
            t[i] = micros(row.get(EVENT_TIME[0]), EVENT_TIME);
            newest = Math.max(newest, t[i]);
            arrival[i] = ARRIVAL_TIME[0] != null ? micros(row.get(ARRIVAL_TIME[0]), ARRIVAL_TIME) : newest;
            order[i] = i;
        }
        if (ARRIVAL_TIME[0] != null) {
            java.util.Arrays.sort(order, Comparator.<Integer>comparingLong(i -> arrival[i])
                .thenComparingLong(i -> t[i]).thenComparing(i -> ids[i]));  // stable: ties keep the file's order
        }
        partitions[0] = new HashSet<>(java.util.Arrays.asList(parts)).size();
        List<Tuple5<String, String, Long, String, Boolean>> rows = new ArrayList<>();
        long latest = Long.MIN_VALUE, last = 0;
        for (int j = 0; j < n; j++) {
            int i = order[j];
            latest = Math.max(latest, arrival[i]);  // arrivals made non-decreasing along the order
            long interval = TICK_EVERY_US != null ? Math.floorDiv(latest, TICK_EVERY_US) : j / TICK_EVERY_EVENTS;
            if (j > 0 && interval != last) {  // with withIdleness, every interval ticks, the silent ones too
                long tickMs = TICK_EVERY_US != null ? TICK_EVERY_US / 1000 : 0;
                for (long k = IDLE_MS >= 0 && TICK_EVERY_US != null ? last + 1 : interval; k <= interval; k++) {
                    rows.add(Tuple5.of("", "", k * tickMs, "", true));
                }
            }
            last = interval;
            rows.add(Tuple5.of(ids[i], keys[i], Math.floorDiv(t[i], 1000L), parts[i], false));
            if (trace != null) {
                trace.println("{\"id\": " + quote(ids[i]) + ", \"key\": " + quote(keys[i]) + ", \"t\": " + t[i]
                              + ", \"arrival\": " + latest + ", \"partition\": " + quote(parts[i]) + "}");
            }
        }
        return rows;
    }

    /** Run from its source (java Job.java), the program's classes live in the launcher's memory, which Flink's
     *  user-code class loader does not see: they are written into a jar the job ships (pipeline.jars). */
    static Configuration shipOwnClasses() throws IOException {
        Configuration conf = new Configuration();
        java.net.URL self = Job.class.getResource("Job.class");
        if (self == null || self.getProtocol().equals("file") || self.getProtocol().equals("jar")) return conf;
        Path jar = Files.createTempFile("flink-job-", ".jar");
        jar.toFile().deleteOnExit();
        ClassLoader loader = Job.class.getClassLoader();
        try (JarOutputStream sink = new JarOutputStream(Files.newOutputStream(jar))) {
            List<String> names = new ArrayList<>(List.of("Job"));
            for (int k = 0; k < names.size(); k++) {  // Job, its member classes and the anonymous ones ($1, $2…)
                String name = names.get(k);
                try (InputStream in = loader.getResourceAsStream(name + ".class")) {
                    if (in == null) continue;
                    sink.putNextEntry(new JarEntry(name + ".class"));
                    sink.write(in.readAllBytes());
                    sink.closeEntry();
                }
                try {
                    for (Class<?> member : Class.forName(name, false, loader).getDeclaredClasses()) {
                        names.add(member.getName());
                    }
                } catch (ClassNotFoundException e) {
                    throw new IOException(e);
                }
                for (int a = 1; loader.getResource(name + "$" + a + ".class") != null; a++) names.add(name + "$" + a);
            }
        }
        conf.set(PipelineOptions.JARS, List.of(jar.toUri().toURL().toString()));
        return conf;
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("--read")) {  // how the job reads the file: its events, no Flink
            replayRows(readEvents(Path.of(args[1])), new int[1], System.out);
            return;
        }
        if (args.length != 2) {
            System.err.println("usage: java -cp \"FLINK_LIB/*\" Job.java EVENTS OUTDIR  (or --read EVENTS)");
            System.exit(2);
        }
        Path out = Path.of(args[1]);
        Files.createDirectories(out);
        int[] partitions = {1};
        long began = System.nanoTime();
        List<Tuple5<String, String, Long, String, Boolean>> rows = replayRows(readEvents(Path.of(args[0])), partitions, null);
        long read = System.nanoTime();
        TypeInformation<Tuple5<String, String, Long, String, Boolean>> type =
            TypeInformation.of(new TypeHint<Tuple5<String, String, Long, String, Boolean>>() {});
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(shipOwnClasses());
        env.setParallelism(1);
        env.getConfig().setAutoWatermarkInterval(0);  // the ticks emit the watermarks, not the wall clock
        OutputTag<Tuple5<String, String, Long, String, Boolean>> late = new OutputTag<>("late", type);
        SingleOutputStreamOperator<String> fired = env.fromData(rows, type)
            .assignTimestampsAndWatermarks(new ArrivalTicks(BOUND_MS, partitions[0], IDLE_MS))
            .filter(row -> !row.f4)
            .keyBy(row -> row.f1, Types.STRING)
            .window({ASSIGNER}){TRIGGER}
            .allowedLateness(Duration.ofMillis(ALLOWED_LATENESS_MS))
            .sideOutputLateData(late)
            .process(new Contents());
        DataStream<String> lines = fired.union(fired.getSideOutput(late)
            .map(row -> "{\"id\": " + quote(row.f0) + ", \"key\": " + quote(row.f1) + "}").returns(Types.STRING));
        long seq = 0, refused = 0, started = System.nanoTime();
        try (Writer emissions = Files.newBufferedWriter(out.resolve("emissions.jsonl"));
             Writer lateSink = Files.newBufferedWriter(out.resolve("refused.jsonl"));
             CloseableIterator<String> results = lines.executeAndCollect()) {
            while (results.hasNext()) {
                String line = results.next();
                if (line.startsWith("{\"key\"")) {
                    seq++;
                    emissions.write(line.substring(0, line.length() - 1) + ", \"seq\": " + seq + "}\n");
                } else {
                    refused++;
                    lateSink.write(line + "\n");
                }
            }
        }
        Files.writeString(out.resolve("timing.json"), "{\"read_s\": " + (read - began) / 1e9 + ", \"engine_start_s\": "
                          + (started - read) / 1e9 + ", \"run_s\": " + (System.nanoTime() - started) / 1e9 + "}");
        System.out.println(seq + " firings, " + refused + " events to the late side output; written to " + out);
    }
}
"""
