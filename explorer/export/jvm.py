"""Export snippets for the engines configured in Java or in YAML: VoltSP (YAML and Java), Beam's Java SDK and Kafka
Streams (Flink's Java export is a whole program: ``flink_java_job``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import yaml

from explorer.config import BatchKind, Emit, Panes, RunConfig, Scope, Strategy, TimeSource, WindowKind, time_config_to_voltsp
from explorer.export.common import (DEFAULT_SOURCE, MS, ExportSource, beam_window_fn, comment, java_duration, joda_duration,
                                    unsupported, watermark_lag)
from explorer.timeutil import format_duration

def voltsp_yaml(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    kinds = {WindowKind.TUMBLING: "tumbling-time-window", WindowKind.SLIDING: "sliding-time-window",
             WindowKind.SESSION: "session-window"}
    section: dict[str, Any] = {}
    if config.window.kind is WindowKind.SESSION:
        section["gap"] = format_duration(config.window.gap)
    else:
        section["windowSpan"] = format_duration(config.window.size)
        if config.window.kind is WindowKind.SLIDING:
            section["slide"] = format_duration(config.window.slide)
    if source.key:
        section["keyExtractor"] = f"Event::{source.key}"
    time = config.time
    notes = unsupported(config, "VoltSP", {"strategy", "idle", "allowed", "side_output", "scope", "timestamp_rule"})
    if time.strategy is Strategy.EVENT_CLOCK:
        time = replace(time, strategy=Strategy.MAX)
    section["timeConfig"] = time_config_to_voltsp(time, source.event_time)
    body = yaml.safe_dump({"emitter": {kinds[config.window.kind]: section}}, sort_keys=False)
    return comment("#", notes) + body


def voltsp_java(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    t = config.time
    kinds = {WindowKind.TUMBLING: "tumblingTimeWindow", WindowKind.SLIDING: "slidingTimeWindow",
             WindowKind.SESSION: "sessionWindow"}
    lines = [f".aggregateWithWindow(Windows.<Event>{kinds[config.window.kind]}()"]
    if config.window.kind is WindowKind.SESSION:
        lines.append(f"    .withGap({java_duration(config.window.gap)})")
    else:
        lines.append(f"    .withWindowSpan({java_duration(config.window.size)})")
        if config.window.kind is WindowKind.SLIDING:
            lines.append(f"    .withSlide({java_duration(config.window.slide)})")
    lines.append(f"    .withKeyExtractor({_java_key(source)})")
    builder = []
    if t.time_source is TimeSource.EVENT:
        builder.append(f".withEventTimeExtractor(Event::{source.event_time})")
        strategy = {Strategy.MIN: "MIN_EVENT_TIME", Strategy.MAX: "MAX_EVENT_TIME"}.get(t.strategy, "MAX_EVENT_TIME")
        builder.append(f".withWatermarkStrategy(WatermarkStrategy.{strategy})")
        close_delay = t.delay + (t.bound if t.strategy is not Strategy.MIN else 0)
        if close_delay:
            builder.append(f".withDelayWindowClose({java_duration(close_delay)})")
    if t.idle_timeout is not None:
        builder.append(f".withIdleTimeout({java_duration(t.idle_timeout)})")
        clock = "EVENT_TIME" if t.idle_clock is TimeSource.EVENT else "PROCESSING_TIME"
        builder.append(f".withIdleTimeoutClock(TimeSource.{clock})")
    if builder:
        lines.append("    .withTimeConfigBuilder(builder -> builder")
        lines += [f"        {b}" for b in builder]
        lines.append("    )")
    lines.append("    .withExceptionHandler((records, context, throwable) -> { /* late events arrive here */ })")
    lines.append(")")
    notes = unsupported(config, "VoltSP", {"strategy", "idle", "side_output", "scope", "timestamp_rule"})
    return comment("//", notes) + "\n".join(lines) + "\n"


def _java_key(source: ExportSource) -> str:
    return f"Event::{source.key}" if source.key else "event -> \"all\"  /* the stream has no key column */"


def beam_java(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    """Beam's Java SDK: KafkaIO with CustomTimestampPolicyWithLimitedDelay (the watermark trails the largest
    timestamp by the max delay, per partition, min over partitions), then Window.into with the default trigger,
    a late firing per late element (and with early firings, an early pane a processing-time delay after a pane's
    first element), the allowed lateness and the panes."""
    t = config.time
    lag = joda_duration(watermark_lag(config))
    key = f"kv.getValue().{source.key}" if source.key else '"all"'
    panes = "accumulatingFiredPanes()" if t.panes is Panes.ACCUMULATING else "discardingFiredPanes()"
    sessions = config.window.kind is WindowKind.SESSION
    timer = ("" if t.early_firings is None else f".plusDelayOf({joda_duration(t.early_firings)})"
             if t.early_aligned_to is None  # Beam's offset is an Instant: ms since the epoch, as the arrival times
             else f".alignedTo({joda_duration(t.early_firings)}, new Instant({t.early_aligned_to // MS}L))")
    early = ("" if t.early_firings is None or sessions else "\n            .withEarlyFirings(AfterProcessingTime"
             f".pastFirstElementInPane(){timer})\n            ")
    lines = ["PCollection<KV<String, Long>> counts = pipeline",
             "    .apply(KafkaIO.<String, Event>read()",
             "        .withBootstrapServers(servers).withTopic(\"events\")",
             "        .withKeyDeserializer(StringDeserializer.class).withValueDeserializer(EventDeserializer.class)",
             "        .withTimestampPolicyFactory((partition, previous) -> new CustomTimestampPolicyWithLimitedDelay<>(",
             f"            record -> new Instant(record.getKV().getValue().{source.event_time}), {lag}, previous))",
             "        .withoutMetadata())",
             f"    .apply(MapElements.into(TypeDescriptors.strings()).via(kv -> {key}))",
             f"    .apply(Window.<String>into({beam_window_fn(config, joda_duration)})",
             f"        .triggering(AfterWatermark.pastEndOfWindow(){early}"
             ".withLateFirings(AfterPane.elementCountAtLeast(1)))",
             f"        .withAllowedLateness({joda_duration(t.allowed_lateness)})",
             f"        .{panes})",
             "    .apply(Count.perElement());"]
    notes = unsupported(config, "Beam", {"allowed", "panes", "offset", "early"})
    if t.early_firings is not None and sessions:
        notes.append("--early-firings with sessions is not modelled (the explorer refuses it); the snippet has no "
                     "early firings")
    return comment("//", notes) + "\n".join(lines) + "\n"


def kafka_streams_java(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    """Kafka Streams' DSL: the grace period is the lateness bound; emit on-close is EmitStrategy.onWindowClose;
    on-batch is the record cache on (its 10 MB default) flushed every commit.interval.ms, on-update the cache off
    (size 0: each update forwarded); the event time comes from the record's field."""
    t = config.time
    grace = java_duration(watermark_lag(config))
    windows = {WindowKind.TUMBLING: f"TimeWindows.ofSizeAndGrace({java_duration(config.window.size)}, {grace})",
               WindowKind.SLIDING: f"TimeWindows.ofSizeAndGrace({java_duration(config.window.size)}, {grace})"
                                   f".advanceBy({java_duration(config.window.slide)})",
               WindowKind.SESSION: f"SessionWindows.ofInactivityGapAndGrace({java_duration(config.window.gap)}, "
                                   f"{grace})",
               WindowKind.KSTREAMS_SLIDING: f"SlidingWindows.ofTimeDifferenceAndGrace("
                                            f"{java_duration(config.window.size)}, {grace})"}[config.window.kind]
    key = f"(k, event) -> event.{source.key}" if source.key else "(k, event) -> \"all\"  /* no key column */"
    notes = unsupported(config, "Kafka Streams", {"scope", "emit", "from_zero"})
    lines = [f"// stream time = the max {source.event_time} a task has seen, per input partition; grace {grace}",
             *_kafka_cache(config, notes),
             "KStream<String, Event> events = builder.stream(\"events\", Consumed.with(Serdes.String(), eventSerde)",
             f"    .withTimestampExtractor((record, previous) -> ((Event) record.value()).{source.event_time}));",
             "KTable<Windowed<String>, Long> counts = events",
             f"    .groupBy({key}, Grouped.with(Serdes.String(), eventSerde))",
             f"    .windowedBy({windows})",
             *(["    .emitStrategy(EmitStrategy.onWindowClose())"] if t.emit is Emit.ON_CLOSE else []),
             "    .count();"]
    if t.scope is Scope.KEY:
        notes.append("Kafka Streams has no per-key watermark: stream time is one per partition (task), shared by "
                     "its keys")
    elif t.scope is not Scope.PARTITION:
        notes.append(f"Kafka Streams has one stream time per partition (task), not --scope {t.scope.value}")
    return comment("//", notes) + "\n".join(lines) + "\n"


KAFKA_CACHE_BYTES = 10 * 1024 * 1024  # statestore.cache.max.bytes' default


def _kafka_cache(config: RunConfig, notes: list[str]) -> list[str]:
    """The record cache's two settings as the config's emission needs them: on-update forwards every update (the
    cache off, size 0), on-batch coalesces them per commit (the cache on, flushed every commit.interval.ms: the
    config's commit interval, or its batches' when it has none). On-close's output does not depend on them."""
    t = config.time
    if t.emit is Emit.ON_UPDATE:
        return ["props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0L);  // the record cache off: "
                "every update forwarded at once"]
    if t.emit is not Emit.ON_BATCH:
        return []
    interval = t.commit_interval or (config.batches.interval if config.batches is not None and
                                     config.batches.kind is BatchKind.INTERVAL else None)
    if interval is None:
        notes.append("emit on-batch coalesces per batch, and these batches are not a commit interval; give "
                     "--commit-interval T (commit.interval.ms, 30s by default)")
    return [f"props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, {KAFKA_CACHE_BYTES}L);  // the record "
            "cache on (its default): a window's updates coalesce until the commit",
            *([f"props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, {max(interval // 1000, 1)}L);  // "
               f"{format_duration(interval)}: a commit forwards each window updated since the last"]
              if interval else []),
            "// a full cache also forwards a key's update before the commit (eviction on size), which the explorer "
            "does not model: size the cache for the windows one commit interval updates"]
