"""A tuned configuration handed back in the user's own engine: a snippet carrying the window, delay /
lateness bound, allowed lateness, idle timeout and late-data handling, with a comment for every setting
the target cannot express (so nothing is silently lost in translation).

A snippet uses the user's own column names (``ExportSource``: the file's name for event time and key), and
the PySpark one is a whole query: source, event time as a timestamp, watermark, window, sink, ``start()``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from explorer.config import (Emit, LatePolicy, LatenessRule, RunConfig, Panes, Scope, Strategy, TimeSource, WindowKind,
                             time_config_to_voltsp)
from explorer.core.rules import derive
from explorer.streams import Stream
from explorer.streams.files import SUFFIXES
from explorer.streams.times import TimeFormat
from explorer.timeutil import format_duration

MS = 1000


@dataclass(frozen=True)
class ExportSource:
    """What the user's events are called where they live: the event-time and key columns, how event time is
    written, and the file (for a runnable query)."""

    event_time: str = "event_time"
    key: str | None = "key"  # None: the stream has no key column; one group
    event_time_format: TimeFormat | None = None
    path: str | None = None

    @staticmethod
    def of(stream: Stream) -> "ExportSource":
        named = stream.source_columns
        return ExportSource(named.get("event_time", "event_time"),
                            named.get("key", "key") if stream.has_keys else None,
                            stream.time_formats.get("event_time"), stream.source)


DEFAULT_SOURCE = ExportSource()


def _java_duration(micros: int) -> str:
    if micros == 0:
        return "Duration.ZERO"
    if micros % (3600 * 10**6) == 0:
        return f"Duration.ofHours({micros // (3600 * 10**6)})"
    if micros % (60 * 10**6) == 0:
        return f"Duration.ofMinutes({micros // (60 * 10**6)})"
    if micros % 10**6 == 0:
        return f"Duration.ofSeconds({micros // 10**6})"
    return f"Duration.ofMillis({micros // MS})"


def _py_timedelta(micros: int) -> str:
    return f"timedelta(seconds={micros / 10**6:g})"


def _spark_interval(micros: int) -> str:
    return f"{micros / 10**6:g} seconds"


def _window_length(config: RunConfig) -> int:
    return config.window.gap if config.window.kind is WindowKind.SESSION else config.window.size


def _watermark_lag(config: RunConfig) -> int:
    """The one lateness bound most engines have: bound L plus delayWindowClose."""
    return config.time.bound + config.time.delay


def _unsupported(config: RunConfig, target: str, handled: set[str]) -> list[str]:
    """Comments for what the target cannot say."""
    t, rules = config.time, derive(config)
    notes = []
    if "strategy" not in handled and rules.strategy_min:
        notes.append("MIN_EVENT_TIME (watermark = each batch's smallest event time) has no equivalent; "
                     "the snippet uses max seen − lag")
    if "event_clock" not in handled and rules.event_clock:
        notes.append("Bytewax's event clock (watermark advancing with system time) has no equivalent here")
    if rules.scripted:
        notes.append("scripted watermarks (the input's watermark rows) have no equivalent; the snippet uses "
                     "max seen − lag")
    if "idle" not in handled and t.idle_timeout is not None:
        notes.append(f"idle timeout {format_duration(t.idle_timeout)} ({t.idle_clock.value} clock) has no "
                     f"direct equivalent in {target}")
    if "allowed" not in handled and t.allowed_lateness:
        notes.append(f"allowed lateness {format_duration(t.allowed_lateness)} has no equivalent in {target}")
    if "side_output" not in handled and t.late_policy is LatePolicy.SIDE_OUTPUT:
        notes.append(f"late events cannot go to a side output in {target}; they are dropped")
    if "scope" not in handled and rules.per_key:
        notes.append(f"{target} has no per-key watermark: one watermark serves all keys")
    if "timestamp_rule" not in handled and t.lateness_rule is LatenessRule.TIMESTAMP:
        notes.append("'late = timestamp behind the watermark' is not this engine's rule (it drops by window end)")
    if "end_inclusive" not in handled and t.end_inclusive:
        notes.append("windows here are [start, end); Storm's are (start, end]")
    if rules.processing:
        notes.append("processing time: no watermark settings apply")
    if "emit" not in handled and rules.on_update:
        notes.append(f"emit on-update (every record forwards its window's new result) is Kafka Streams' default; "
                     f"{target} emits a window when it closes")
    if "panes" not in handled and t.panes is Panes.DISCARDING:
        notes.append(f"discarding panes have no equivalent in {target}: a re-emission carries the whole window")
    if config.window.kind is WindowKind.SLIDING and rules.from_zero != ("from_zero" in handled):
        notes.append(f"{target} also creates the sliding windows that start before 0; here an event at t ≥ 0 is in "
                     f"none of them" if t.windows_from_zero else
                     f"{target} creates no window that starts before 0; here events near 0 are in those too")
    if "allowed" in handled and t.allowed_lateness and rules.late_at_once != ("per_element" in handled):
        notes.append(f"{target} re-fires a window once for the late elements of a bundle or batch; here each late "
                     f"element fires it" if t.late_fires_per_element else
                     f"{target} fires a window the watermark has passed for each late element; here once per batch")
    if rules.source_idle_timeout is not None and target not in ("Flink", "PyFlink"):
        notes.append(f"a partition idle for {format_duration(t.source_idle_timeout)} leaving the watermark merge "
                     f"(Flink's withIdleness) has no equivalent in {target}")
    return notes


def _comment(prefix: str, notes: list[str]) -> str:
    return "".join(f"{prefix} NOTE: {n}\n" for n in notes)


def voltsp_yaml(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    kinds = {WindowKind.TUMBLING: "tumbling-time-window", WindowKind.SLIDING: "sliding-time-window",
             WindowKind.SESSION: "session-window"}
    section: dict = {}
    if config.window.kind is WindowKind.SESSION:
        section["gap"] = format_duration(config.window.gap)
    else:
        section["windowSpan"] = format_duration(config.window.size)
        if config.window.kind is WindowKind.SLIDING:
            section["slide"] = format_duration(config.window.slide)
    if source.key:
        section["keyExtractor"] = f"Event::{source.key}"
    time = config.time
    notes = _unsupported(config, "VoltSP", {"strategy", "idle", "allowed", "side_output", "scope", "timestamp_rule"})
    if time.strategy is Strategy.EVENT_CLOCK:
        time = replace(time, strategy=Strategy.MAX)
    section["timeConfig"] = time_config_to_voltsp(time, source.event_time)
    body = yaml.safe_dump({"emitter": {kinds[config.window.kind]: section}}, sort_keys=False)
    return _comment("#", notes) + body


def voltsp_java(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    t = config.time
    kinds = {WindowKind.TUMBLING: "tumblingTimeWindow", WindowKind.SLIDING: "slidingTimeWindow",
             WindowKind.SESSION: "sessionWindow"}
    lines = [f".aggregateWithWindow(Windows.<Event>{kinds[config.window.kind]}()"]
    if config.window.kind is WindowKind.SESSION:
        lines.append(f"    .withGap({_java_duration(config.window.gap)})")
    else:
        lines.append(f"    .withWindowSpan({_java_duration(config.window.size)})")
        if config.window.kind is WindowKind.SLIDING:
            lines.append(f"    .withSlide({_java_duration(config.window.slide)})")
    lines.append(f"    .withKeyExtractor({_java_key(source)})")
    builder = []
    if t.time_source is TimeSource.EVENT:
        builder.append(f".withEventTimeExtractor(Event::{source.event_time})")
        strategy = {Strategy.MIN: "MIN_EVENT_TIME", Strategy.MAX: "MAX_EVENT_TIME"}.get(t.strategy, "MAX_EVENT_TIME")
        builder.append(f".withWatermarkStrategy(WatermarkStrategy.{strategy})")
        close_delay = t.delay + (t.bound if t.strategy is not Strategy.MIN else 0)
        if close_delay:
            builder.append(f".withDelayWindowClose({_java_duration(close_delay)})")
    if t.idle_timeout is not None:
        builder.append(f".withIdleTimeout({_java_duration(t.idle_timeout)})")
        clock = "EVENT_TIME" if t.idle_clock is TimeSource.EVENT else "PROCESSING_TIME"
        builder.append(f".withIdleTimeoutClock(TimeSource.{clock})")
    if builder:
        lines.append("    .withTimeConfigBuilder(builder -> builder")
        lines += [f"        {b}" for b in builder]
        lines.append("    )")
    lines.append("    .withExceptionHandler((records, context, throwable) -> { /* late events arrive here */ })")
    lines.append(")")
    notes = _unsupported(config, "VoltSP", {"strategy", "idle", "side_output", "scope", "timestamp_rule"})
    return _comment("//", notes) + "\n".join(lines) + "\n"


def _java_key(source: ExportSource) -> str:
    return f"Event::{source.key}" if source.key else "event -> \"all\"  /* the stream has no key column */"


def flink_java(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    t = config.time
    lag = _watermark_lag(config)
    assigner = {WindowKind.TUMBLING: f"TumblingEventTimeWindows.of({_java_duration(config.window.size)})",
                WindowKind.SLIDING: f"SlidingEventTimeWindows.of({_java_duration(config.window.size)}, "
                                    f"{_java_duration(config.window.slide)})",
                WindowKind.SESSION: f"EventTimeSessionWindows.withGap({_java_duration(config.window.gap)})"}
    lines = ["OutputTag<Event> late = new OutputTag<Event>(\"late\") {};",
             "WatermarkStrategy<Event> watermarks = WatermarkStrategy",
             f"    .<Event>forBoundedOutOfOrderness({_java_duration(lag)})",
             f"    .withTimestampAssigner((event, ts) -> event.{source.event_time})"]
    if t.source_idle_timeout is not None:
        lines.append(f"    .withIdleness({_java_duration(t.source_idle_timeout)})")
    lines[-1] += ";"
    lines += ["stream.assignTimestampsAndWatermarks(watermarks)",
              f"    .keyBy({f'event -> event.{source.key}' if source.key else 'event -> 0  /* no key column */'})",
              f"    .window({assigner[config.window.kind]})"]
    if t.allowed_lateness:
        lines.append(f"    .allowedLateness({_java_duration(t.allowed_lateness)})")
    if t.late_policy is LatePolicy.SIDE_OUTPUT:
        lines.append("    .sideOutputLateData(late)")
    lines.append("    .aggregate(new CountAggregate());")
    notes = _unsupported(config, "Flink", {"allowed", "side_output", "per_element"})
    return _comment("//", notes) + "\n".join(lines) + "\n"


def pyflink(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    t = config.time
    lag = _watermark_lag(config)

    def ms(micros: int) -> str:
        return f"Duration.of_millis({micros // MS})"

    assigner = {WindowKind.TUMBLING: f"TumblingEventTimeWindows.of(Time.milliseconds({config.window.size // MS}))",
                WindowKind.SLIDING: f"SlidingEventTimeWindows.of(Time.milliseconds({config.window.size // MS}), "
                                    f"Time.milliseconds({config.window.slide // MS}))",
                WindowKind.SESSION: f"EventTimeSessionWindows.with_gap(Time.milliseconds({config.window.gap // MS}))"}
    lines = ["late = OutputTag('late', Types.PICKLED_BYTE_ARRAY())",
             f"watermarks = (WatermarkStrategy.for_bounded_out_of_orderness({ms(lag)})",
             f"              .with_timestamp_assigner(EventTimestamps('{source.event_time}'))"]
    if t.source_idle_timeout is not None:
        lines.append(f"              .with_idleness({ms(t.source_idle_timeout)})")
    lines[-1] += ")"
    chain = ["stream.assign_timestamps_and_watermarks(watermarks)",
             f".key_by(lambda e: {f'e.{source.key}' if source.key else '0'})",
             f".window({assigner[config.window.kind]})"]
    if t.allowed_lateness:
        chain.append(f".allowed_lateness({t.allowed_lateness // MS})")
    if t.late_policy is LatePolicy.SIDE_OUTPUT:
        chain.append(".side_output_late_data(late)")
    chain.append(".reduce(lambda a, b: a + b)")
    lines.append("counts = (" + "\n          ".join(chain) + ")")
    notes = _unsupported(config, "PyFlink", {"allowed", "side_output", "per_element"})
    return _comment("#", notes) + "\n".join(lines) + "\n"


SPARK_FROM_UNIT = {"s": "F.timestamp_seconds({})", "ms": "F.timestamp_millis({})", "us": "F.timestamp_micros({})",
                   "ns": "F.timestamp_micros(({} / 1000).cast('long'))"}


def _spark_event_time(source: ExportSource) -> str:
    """The event-time column as a Spark timestamp, from however the file writes it."""
    column = f"F.col('{source.event_time}')"
    form = source.event_time_format
    if form is None:
        return f"{column}.cast('timestamp')"
    if form.kind == "iso":
        return f"F.to_timestamp({column})"
    if form.kind in ("epoch", "number"):
        return SPARK_FROM_UNIT[form.unit].format(column)
    return column  # a typed timestamp column


def pyspark(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    """A whole Structured Streaming query over the user's file: it replays the file (availableNow) and prints
    each window as the watermark closes it. For Kafka, swap the source for the commented one."""
    lag = config.time.delay + config.time.bound
    if config.window.kind is WindowKind.SESSION:
        window = f"F.session_window('event_ts', '{_spark_interval(config.window.gap)}')"
    else:
        window = (f"F.window('event_ts', '{_spark_interval(config.window.size)}', "
                  f"'{_spark_interval(config.window.slide)}')")
    group = f"{window}, '{source.key}'" if source.key else window
    path = Path(source.path or "events.csv")
    reader = SUFFIXES.get(path.suffix.lower(), "csv")  # the loader's formats are Spark's reader names
    header = ".option('header', True)" if reader == "csv" else ""
    infer = ".option('inferSchema', True)" if reader == "csv" else ""
    # a streaming file source reads a directory: the file's own, keeping to that file
    folder, only = (path, "") if path.is_dir() else (path.parent, f".option('pathGlobFilter', {path.name!r})")
    lines = ["from pyspark.sql import SparkSession, functions as F",
             "",
             "spark = SparkSession.builder.master('local[2]').appName('watermark-explorer').getOrCreate()",
             f"FOLDER = {str(folder)!r}",
             f"schema = spark.read{header}{infer}{only}.{reader}(FOLDER).schema  # a stream's file source needs one",
             f"events = spark.readStream.schema(schema){header}{only}.{reader}(FOLDER)",
             "# from Kafka instead: spark.readStream.format('kafka').option('kafka.bootstrap.servers', ...)"
             ".option('subscribe', ...).load(), then parse the value",
             "counts = (events",
             f"          .withColumn('event_ts', {_spark_event_time(source)})",
             f"          .withWatermark('event_ts', '{_spark_interval(lag)}')",
             f"          .groupBy({group})",
             "          .count())",
             "query = (counts.writeStream",
             "         .outputMode('append')  # each window once, when the watermark passes its end",
             "         .format('console').option('truncate', False)",
             "         .trigger(availableNow=True)  # replay the file, then stop; drop this line to keep listening",
             "         .start())",
             "query.awaitTermination()"]
    notes = _unsupported(config, "Spark Structured Streaming", set())
    return _comment("#", notes) + "\n".join(lines) + "\n"


def bytewax(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    t = config.time
    wait = t.bound + t.delay
    if config.window.kind is WindowKind.SESSION:
        windower = f"SessionWindower(gap={_py_timedelta(config.window.gap)})"
    elif config.window.kind is WindowKind.SLIDING:
        windower = (f"SlidingWindower(length={_py_timedelta(config.window.size)}, "
                    f"offset={_py_timedelta(config.window.slide)}, align_to=ALIGN_TO)")
    else:
        windower = f"TumblingWindower(length={_py_timedelta(config.window.size)}, align_to=ALIGN_TO)"
    lines = ["from datetime import datetime, timedelta, timezone",
             "import bytewax.operators.windowing as win",
             "from bytewax.operators.windowing import EventClock, SessionWindower, SlidingWindower, TumblingWindower",
             "ALIGN_TO = datetime(1970, 1, 1, tzinfo=timezone.utc)",
             f"clock = EventClock(lambda e: e.{source.event_time}, wait_for_system_duration={_py_timedelta(wait)})",
             f"windower = {windower}",
             f"counts = win.count_window('count', keyed_stream, clock, windower, "
             f"key=lambda e: {f'e.{source.key}' if source.key else repr('all')})",
             "# counts.late holds the items the clock called late (as a stream of their own)"]
    notes = _unsupported(config, "Bytewax", {"side_output", "event_clock", "scope", "timestamp_rule"})
    return _comment("#", notes) + "\n".join(lines) + "\n"


def _beam_window_fn(config: RunConfig, seconds, java: bool) -> str:
    size, slide, gap = (seconds(v) for v in (config.window.size, config.window.slide, config.window.gap))
    if java:
        return {WindowKind.TUMBLING: f"FixedWindows.of({size})",
                WindowKind.SLIDING: f"SlidingWindows.of({size}).every({slide})",
                WindowKind.SESSION: f"Sessions.withGapDuration({gap})"}[config.window.kind]
    return {WindowKind.TUMBLING: f"window.FixedWindows({size})",
            WindowKind.SLIDING: f"window.SlidingWindows({size}, {slide})",
            WindowKind.SESSION: f"window.Sessions({gap})"}[config.window.kind]


def beam_python(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    """Beam's Python SDK: KafkaIO's limited-delay timestamp policy for the lag, WindowInto with the default
    trigger (a late pane per late element), the allowed lateness and the panes (accumulating, as the explorer's
    windows re-fire whole, or discarding)."""
    t = config.time
    lag = _watermark_lag(config)
    key = f"e['{source.key}']" if source.key else "'all'"
    lines = ["import apache_beam as beam",
             "from apache_beam.transforms import trigger, window",
             f"# watermark = max event time seen − {format_duration(lag)}: in Java, KafkaIO's "
             "CustomTimestampPolicyWithLimitedDelay with that max delay",
             f"stamped = events | beam.Map(lambda e: window.TimestampedValue(e, e['{source.event_time}']))",
             "counts = (stamped",
             f"          | beam.Map(lambda e: ({key}, 1))",
             f"          | beam.WindowInto({_beam_window_fn(config, lambda v: f'{v / 1e6:g}', java=False)},",
             "                           trigger=trigger.AfterWatermark(late=trigger.AfterCount(1)),",
             f"                           allowed_lateness={t.allowed_lateness / 1e6:g},",
             f"                           accumulation_mode=trigger.AccumulationMode.{t.panes.value.upper()})",
             "          | beam.CombinePerKey(sum))"]
    notes = _unsupported(config, "Beam", {"allowed", "panes"})
    return _comment("#", notes) + "\n".join(lines) + "\n"


def beam_java(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    """Beam's Java SDK: KafkaIO with CustomTimestampPolicyWithLimitedDelay (the watermark trails the largest
    timestamp by the max delay, per partition, min over partitions), then Window.into with the default trigger,
    a late firing per late element, the allowed lateness and the panes."""
    t = config.time
    lag = _java_duration(_watermark_lag(config))
    key = f"kv.getValue().{source.key}" if source.key else '"all"'
    panes = "accumulatingFiredPanes()" if t.panes is Panes.ACCUMULATING else "discardingFiredPanes()"
    lines = ["PCollection<KV<String, Long>> counts = pipeline",
             "    .apply(KafkaIO.<String, Event>read()",
             "        .withBootstrapServers(servers).withTopic(\"events\")",
             "        .withKeyDeserializer(StringDeserializer.class).withValueDeserializer(EventDeserializer.class)",
             "        .withTimestampPolicyFactory((partition, previous) -> new CustomTimestampPolicyWithLimitedDelay<>(",
             f"            record -> new Instant(record.getKV().getValue().{source.event_time}), {lag}, previous))",
             "        .withoutMetadata())",
             f"    .apply(MapElements.into(TypeDescriptors.strings()).via(kv -> {key}))",
             f"    .apply(Window.<String>into({_beam_window_fn(config, _java_duration, java=True)})",
             "        .triggering(AfterWatermark.pastEndOfWindow().withLateFirings(AfterPane.elementCountAtLeast(1)))",
             f"        .withAllowedLateness({_java_duration(t.allowed_lateness)})",
             f"        .{panes})",
             "    .apply(Count.perElement());"]
    notes = _unsupported(config, "Beam", {"allowed", "panes"})
    return _comment("//", notes) + "\n".join(lines) + "\n"


def kafka_streams_java(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    """Kafka Streams' DSL: the grace period is the lateness bound; emit on-close is EmitStrategy.onWindowClose,
    on-update the default with the record cache off (each update forwarded, as the explorer shows them); the
    event time comes from the record's field."""
    t = config.time
    grace = _java_duration(_watermark_lag(config))
    windows = {WindowKind.TUMBLING: f"TimeWindows.ofSizeAndGrace({_java_duration(config.window.size)}, {grace})",
               WindowKind.SLIDING: f"TimeWindows.ofSizeAndGrace({_java_duration(config.window.size)}, {grace})"
                                   f".advanceBy({_java_duration(config.window.slide)})",
               WindowKind.SESSION: f"SessionWindows.ofInactivityGapAndGrace({_java_duration(config.window.gap)}, "
                                   f"{grace})"}[config.window.kind]
    key = f"(k, event) -> event.{source.key}" if source.key else "(k, event) -> \"all\"  /* no key column */"
    lines = [f"// stream time = the max {source.event_time} a task has seen, per input partition; grace {grace}",
             "KStream<String, Event> events = builder.stream(\"events\", Consumed.with(Serdes.String(), eventSerde)",
             f"    .withTimestampExtractor((record, previous) -> ((Event) record.value()).{source.event_time}));",
             "KTable<Windowed<String>, Long> counts = events",
             f"    .groupBy({key}, Grouped.with(Serdes.String(), eventSerde))",
             f"    .windowedBy({windows})",
             *(["    .emitStrategy(EmitStrategy.onWindowClose())"] if t.emit is Emit.ON_CLOSE else []),
             "    .count();"]
    if t.emit is Emit.ON_UPDATE:
        lines.append("// every update forwarded, as the explorer shows it: the record cache off "
                     "(props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0)); with it on, a key's updates "
                     "coalesce until each commit")
    notes = _unsupported(config, "Kafka Streams", {"scope", "emit", "from_zero"})
    if t.scope is Scope.KEY:
        notes.append("Kafka Streams has no per-key watermark: stream time is one per partition (task), shared by "
                     "its keys")
    elif t.scope is not Scope.PARTITION:
        notes.append(f"Kafka Streams has one stream time per partition (task), not --scope {t.scope.value}")
    return _comment("//", notes) + "\n".join(lines) + "\n"


TARGETS: dict[str, Callable[[RunConfig, ExportSource], str]] = {
    "voltsp-yaml": voltsp_yaml, "voltsp-java": voltsp_java, "flink-java": flink_java, "pyflink": pyflink,
    "pyspark": pyspark, "bytewax": bytewax, "beam-python": beam_python, "beam-java": beam_java,
    "kafka-streams-java": kafka_streams_java,
}


def export(config: RunConfig, target: str, source: ExportSource = DEFAULT_SOURCE) -> str:
    """The snippet for ``target`` (one of :data:`TARGETS`), naming the columns as ``source`` does."""
    from explorer.errors import InputError

    if target not in TARGETS:
        raise InputError(f"unknown export target {target!r}; use one of {', '.join(TARGETS)}")
    return TARGETS[target](config, source)
