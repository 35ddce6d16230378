"""The engines' rules as data: each preset is the TimeConfig an engine starts from (and its batching), and which
field the one knob every engine has, ``--delay``, sets in that engine's arithmetic.

A module of its own because the presets are long prose and settings, read by the CLI, the UI, the Spark preset
checks and the YAML reader alike, while the model they are made of (``explorer.config``) is short.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from explorer.config import (MILLISECOND, SECOND, BatchKind, BatchSpec, Emit, LatePolicy, LatenessRule, RefusedWhen,
                             RunConfig, Schedule, Scope, Strategy, TimeConfig, WindowKind)
from explorer.errors import InputError
from explorer.timeutil import format_duration


# Kafka Streams' commit.interval.ms default (at-least-once): its record cache forwards what it coalesced at each commit
KAFKA_COMMIT_INTERVAL = 30 * SECOND

# a setting beside the TimeConfig's fields: tumbling and sliding windows that start at an offset (WindowSpec.offset)
WINDOW_OFFSET = "window_offset"
# another: cumulate windows (WindowKind.CUMULATE), which only Flink has (its SQL's CUMULATE table-valued function)
WINDOW_CUMULATE = "window_cumulate"
# and Kafka Streams' SlidingWindows (WindowKind.KSTREAMS_SLIDING), windows its records make, which only it has
WINDOW_KSTREAMS_SLIDING = "window_kstreams_sliding"


@dataclass(frozen=True)
class Preset:
    """An engine's rules as data: the TimeConfig it starts from, and which field ``--delay`` sets."""

    name: str
    description: str
    time: TimeConfig
    delay_field: str  # "delay" (delayWindowClose-like) or "bound" (max seen − L)
    batches: BatchSpec | None = None
    allowed_lateness: bool = False  # the engine can keep a closed window for late events (and re-emit it)
    # the TimeConfig fields the engine's own API sets (and WINDOW_OFFSET where its windows can start at an offset);
    # any other field moved off the preset's value is a "what if" (:func:`what_if`): a run the engine itself
    # cannot make
    settings: frozenset[str] = frozenset()
    # of those settings, the ones whose API offers only some of the values: Spark's outputMode has append and
    # update (emit on-close, on-batch) but nothing that forwards every row
    only: tuple[tuple[str, frozenset[Any]], ...] = ()
    # (field, value, window kind) the engine refuses together: Spark's update mode with session windows
    refuses: tuple[tuple[str, Any, str], ...] = ()


PRESETS: dict[str, Preset] = {
    "voltsp": Preset(
        "voltsp",
        "VoltSP (000): MIN_EVENT_TIME per committed batch, delayWindowClose, per-key watermarks, "
        "late events to the exception handler, idle timeout on the processing clock with a 60 s heartbeat.",
        TimeConfig(),
        delay_field="delay",
        allowed_lateness=True,
        settings=frozenset({"strategy", "delay", "idle_timeout", "idle_clock", "heartbeat", "allowed_lateness",
                            "time_source", "scope"}),
    ),
    "textbook": Preset(
        "textbook",
        "Code 9.4.1 of 003: one watermark T = t_max − L updated per event, windows close when T ≥ end, "
        "late events dropped.",
        TimeConfig(strategy=Strategy.BOUNDED, late_policy=LatePolicy.DROP, scope=Scope.GLOBAL),
        delay_field="bound",
        batches=BatchSpec(BatchKind.EVENT),
        allowed_lateness=True,  # 003's exercise: a grace period G
        settings=frozenset({"bound", "allowed_lateness", "late_policy"}),
    ),
    "spark": Preset(
        "spark",
        "Spark Structured Streaming: withWatermark(col, delay) + groupBy(window|session_window, key) in append "
        "mode (--output-mode update: each micro-batch writes every window it changed, with its count then, and a "
        "window the watermark closes writes nothing more; tumbling and sliding windows only). One global "
        "watermark = max event time seen − delay (floored at 0), in whole milliseconds (event times enter it as "
        "t / 1000 ms); a row is dropped for a window whose end ≤ the previous micro-batch's "
        "watermark; windows with end ≤ the watermark are emitted. Micro-batches: one per second of arrival time "
        "(a 1 s trigger; Spark's default starts the next micro-batch as soon as the last ends, which on a small "
        "job is about as often); give yours with --batches interval:T.",
        TimeConfig(strategy=Strategy.MAX, late_policy=LatePolicy.DROP, scope=Scope.GLOBAL,
                   schedule=Schedule.BACKLOG, watermark_unit=MILLISECOND),
        delay_field="delay",
        batches=BatchSpec(BatchKind.INTERVAL, interval=SECOND),
        settings=frozenset({"delay", "scope", "time_source", "emit", WINDOW_OFFSET}),
        only=(("emit", frozenset({Emit.ON_CLOSE, Emit.ON_BATCH})),),
        refuses=(("emit", Emit.ON_BATCH, "session"),),  # "Update output mode not supported for session window"
    ),
    "flink": Preset(
        "flink",
        "Apache Flink (001): forBoundedOutOfOrderness(L) emitted every autoWatermarkInterval (200 ms): Flink's "
        "watermark is max − L − 1 ms, a window fires when it reaches end − 1 ms and drops an element when "
        "end − 1 ms + allowedLateness ≤ it; here the effective watermark shows max − L, which decides the same. "
        "One watermark per operator instance, the min over its parallel inputs (partitions); late elements to "
        "a side output only when every window it belongs to refused it (a sliding window that refuses it while "
        "another keeps it drops it silently); allowed lateness re-fires the window with its full contents. A "
        "session's lateness is judged after the merge, and an emitted session an element extends past the "
        "watermark fires again when the watermark reaches its new end. A window that takes an element once the "
        "watermark has passed its end fires at once, for each such element (EventTimeTrigger.onElement). Cumulate "
        "windows (--window cumulate:SIZE:STEP) are Flink SQL's CUMULATE: a row is refused only when every window it "
        "belongs to has fired (the longest, [start, start + size), last); those still open take it (SQL has no side "
        "output: there a refused row is dropped). With --continuous-event-time I (ContinuousEventTimeTrigger.of(I)) a "
        "window also fires, keeping its contents, at each multiple of I after its first element's timestamp that "
        "the watermark passes, then at its end (not with sessions). With --continuous-processing-time I "
        "(ContinuousProcessingTimeTrigger.of(I)) it fires only at each multiple of I of processing time after its "
        "first element's, up to its maxTimestamp, never by the watermark, which purges it at its end + allowed "
        "lateness.",
        TimeConfig(strategy=Strategy.MAX, scope=Scope.PARTITION_MIN, late_policy=LatePolicy.SIDE_OUTPUT,
                   refused_when=RefusedWhen.EVERY_WINDOW, session_lateness_on_merge=True,
                   late_fires_per_element=True),
        delay_field="delay",
        batches=BatchSpec(BatchKind.INTERVAL, interval=200 * SECOND // 1000),
        allowed_lateness=True,
        settings=frozenset({"delay", "allowed_lateness", "late_policy", "source_idle_timeout", "time_source",
                            "scope", "continuous_event_time", "continuous_processing_time", WINDOW_OFFSET,
                            WINDOW_CUMULATE}),
    ),
    "bytewax": Preset(
        "bytewax",
        "Bytewax (004): EventClock per key. Watermark = largest timely timestamp − wait, advancing with "
        "processing (arrival) time since that item; an item is late when its timestamp is below the watermark "
        "and is dropped; windows close when end ≤ watermark, the rest at end of input. A key whose windows have "
        "all closed loses its state, clock included: its next item starts a fresh watermark (tumbling, sliding). "
        "Every due key is woken before each item; --bytewax-live-wakeups wakes them as a live dataflow on the system "
        "clock does (a key stamped ahead of it only at its first held item or window close).",
        TimeConfig(strategy=Strategy.EVENT_CLOCK, lateness_rule=LatenessRule.TIMESTAMP, late_policy=LatePolicy.DROP,
                   session_close_strict=True, forget_clock_when_empty=True),
        delay_field="bound",
        batches=BatchSpec(BatchKind.EVENT),
        settings=frozenset({"bound", "time_source", "bytewax_live_wakeups", WINDOW_OFFSET}),
    ),
    "beam": Preset(
        "beam",
        "Apache Beam / Google Dataflow: a bounded-delay timestamp policy (KafkaIO's "
        "CustomTimestampPolicyWithLimitedDelay: watermark = max event time seen − max delay, per partition, the min "
        "over partitions); the default trigger fires a window once the watermark passes its end (Beam's window "
        "ends 1 µs before the next one starts, so here: end ≤ max − delay); allowed lateness keeps it for late "
        "elements, each of which fires a late pane with the whole window (accumulating); an element is dropped "
        "from a window only once the watermark is past its end + allowed lateness (at exactly that point, even with "
        "no allowed lateness, it still fires a late pane), and counts as dropped only when every window of it "
        "dropped it. Sessions [t, t + gap) merge only when they overlap; a fired session is dropped at end + allowed "
        "lateness, as Beam's Java runners and Dataflow do (with --session-state-kept never, as on Beam's Python "
        "DirectRunner: a later element that overlaps it merges in and fires it at once). With --early-firings T "
        "(withEarlyFirings(AfterProcessingTime.pastFirstElementInPane().plusDelayOf(T))), a pane's first element "
        "arriving at p fires an EARLY pane at p + T (processing time: the arrival clock) while the watermark has not "
        "fired the window; tumbling and sliding windows.",
        TimeConfig(strategy=Strategy.BOUNDED, scope=Scope.PARTITION_MIN, late_policy=LatePolicy.DROP,
                   refused_when=RefusedWhen.EVERY_WINDOW, late_kept_at_horizon=True, session_merge_overlap_only=True),
        delay_field="bound",
        batches=BatchSpec(BatchKind.EVENT),
        allowed_lateness=True,
        settings=frozenset({"bound", "allowed_lateness", "panes", "early_firings", "early_aligned_to",
                            "session_state_kept", WINDOW_OFFSET}),
    ),
    "kafka-streams": Preset(
        "kafka-streams",
        "Kafka Streams: windowedBy(TimeWindows.ofSizeAndGrace | SessionWindows.ofInactivityGapAndGrace).count(), "
        "as production runs it: with the record cache on (statestore.cache.max.bytes, 10 MB by default). "
        "Stream time is the max record timestamp a task has seen, one per input partition and shared by all its keys; "
        "it moves only when records arrive. A record is dropped for a window whose end ≤ stream time − grace (the "
        "delay here). The cache coalesces a window's updates and forwards them at each commit: here every 30 s of "
        "arrival time (commit.interval.ms, 30 s by default, 100 ms under exactly-once; --commit-interval), each "
        "window the interval changed once, with its count then (emit on-batch); closing emits nothing, and a "
        "session a commit forwarded that a record then grew or merged away gets a tombstone. The cache also "
        "forwards a key's update early when it is full: that eviction on size is not modelled. With the cache off "
        "(--emit on-update, what the TopologyTestDriver shows: it flushes after each record) every record a window "
        "takes forwards the window's new count at once (a record that grows or merges sessions first forwards a "
        "tombstone for each session it replaced); with emit on-close (emitStrategy(onWindowClose), "
        "suppress(untilWindowCloses)) a window is emitted once, when stream time − grace reaches its end. A session "
        "[first, last] takes a record within the gap (inclusive), is judged after the merge, and closes once stream "
        "time − grace is past last + gap. Hopping windows start at 0 or later. SlidingWindows"
        ".ofTimeDifferenceAndGrace(D, grace) (--window kstreams-sliding:D): a record makes its window [t − D, t] and, "
        "once a later one falls within D, [t + 1, t + 1 + D]; a new window starts from a neighbour's aggregate.",
        TimeConfig(strategy=Strategy.BOUNDED, scope=Scope.PARTITION, late_policy=LatePolicy.DROP,
                   session_close_strict=True, session_lateness_on_merge=True, emit=Emit.ON_BATCH,
                   commit_interval=KAFKA_COMMIT_INTERVAL, windows_from_zero=True),
        delay_field="bound",
        batches=BatchSpec(BatchKind.EVENT),
        settings=frozenset({"bound", "emit", "commit_interval", WINDOW_KSTREAMS_SLIDING}),
    ),
    "storm": Preset(
        "storm",
        "Apache Storm (002): every second (processing time) the watermark becomes the min over input streams "
        "(partitions) of latest timestamp − lag, and only ever advances; windows (end − length, end] are "
        "evaluated when the watermark reaches their end, empty ones skipped; a tuple behind the last watermark "
        "is late and dropped; tuples ahead of it wait for later windows.",
        TimeConfig(strategy=Strategy.MAX, scope=Scope.PARTITION_MIN, lateness_rule=LatenessRule.TIMESTAMP,
                   late_policy=LatePolicy.DROP, end_inclusive=True),
        delay_field="delay",
        batches=BatchSpec(BatchKind.INTERVAL, interval=SECOND),
        settings=frozenset({"delay", "late_policy"}),
    ),
}


def preset(name: str, delay: int | None = None, **time_changes: Any) -> RunConfig:
    """A RunConfig from a preset, with ``delay`` read in the preset's own arithmetic."""
    try:
        chosen = PRESETS[name]
    except KeyError:
        raise InputError(f"unknown preset {name!r}; available: {', '.join(sorted(PRESETS))}") from None
    time = chosen.time
    if delay is not None:
        knob: dict[str, Any] = {chosen.delay_field: delay}
        time = replace(time, **knob)
    time = replace(time, **time_changes)
    return RunConfig(time=time, batches=chosen.batches, preset=name)


def apply_delay(config: RunConfig, delay: int) -> RunConfig:
    """Set the one knob every engine has, in the arithmetic of the config's preset (for sweeps)."""
    field_name = PRESETS[config.preset].delay_field if config.preset in PRESETS else "delay"
    return config.with_time(**{field_name: delay})


def delay_of(config: RunConfig) -> int:
    """Read the one knob back (inverse of :func:`apply_delay`)."""
    field_name = PRESETS[config.preset].delay_field if config.preset in PRESETS else "delay"
    value: int = getattr(config.time, field_name)
    return value


def what_if(config: RunConfig) -> list[str]:
    """The settings of ``config`` its preset's engine does not have: each field moved off the preset's own value
    that the engine's API cannot set (:attr:`Preset.settings`), as ``--option value``. A run with any is a "what
    if": the numbers are not the engine's, and every front end says so where it shows them."""
    from explorer.config.fields import TIME_FIELDS

    chosen = PRESETS.get(config.preset)
    if chosen is None:
        return []
    out = []
    for spec in TIME_FIELDS:
        value = getattr(config.time, spec.name)
        allowed = dict(chosen.only).get(spec.name)
        if value == getattr(chosen.time, spec.name) or (spec.name in chosen.settings and
                                                        (allowed is None or value in allowed)):
            continue
        out.append(f"--{spec.option.replace('_', '-')} {spec.to_text(value)}")
    for name, value, kind in chosen.refuses:
        spec = next(spec for spec in TIME_FIELDS if spec.name == name)
        if getattr(config.time, name) == value and config.window.kind.value == kind:
            out.append(f"--{spec.option.replace('_', '-')} {spec.to_text(value)} with {kind} windows")
    if config.window.kind is WindowKind.CUMULATE and WINDOW_CUMULATE not in chosen.settings:
        out.append(f"--window {config.window}")  # (no cumulate windows)
    elif config.window.kind is WindowKind.KSTREAMS_SLIDING and WINDOW_KSTREAMS_SLIDING not in chosen.settings:
        out.append(f"--window {config.window}")  # (no record-driven sliding windows)
    elif config.window.offset and WINDOW_OFFSET not in chosen.settings:
        out.append(f"--window {config.window}")  # (its windows start at the epoch: no offset)
    return out


def emission(config: RunConfig) -> str:
    """When windows are emitted, in the words of the config's engine where it has its own (Spark's output modes),
    for the line beside the cadence (the CLI's run summary, the explorer's cards)."""
    emit = config.time.emit
    if config.preset == "spark" and emit in (Emit.ON_CLOSE, Emit.ON_BATCH):
        return ("update mode: every micro-batch writes each window it changed, with its count then "
                "(--output-mode update)" if emit is Emit.ON_BATCH else
                "append mode: each window once, when the watermark passes its end (--output-mode append)")
    kafka = config.preset == "kafka-streams"
    if emit is Emit.ON_BATCH and config.time.commit_interval is not None:
        every = format_duration(config.time.commit_interval)
        return (f"on commit: every {every} of arrival time, each window changed since the last commit, once, with "
                f"its result then (--emit on-batch --commit-interval {every})"
                + ("; Kafka Streams' record cache, on by default (--emit on-update turns it off)" if kafka else ""))
    return {Emit.ON_CLOSE: "on close: a window when the watermark closes it (--emit on-close)" + _early(config),
            Emit.ON_UPDATE: "on update: every record forwards its window's new result (--emit on-update)"
                            + (", as with Kafka Streams' record cache off" if kafka else ""),
            Emit.ON_BATCH: "on batch: every batch, each window it changed, once, with its result then "
                           "(--emit on-batch)"}[emit]


def _early(config: RunConfig) -> str:
    """The panes a window fires before the watermark closes it (both taken with on-close only): without this,
    the line said "a window when the watermark closes it" beside cards counting early panes."""
    out = ""
    if config.time.early_firings is not None and config.time.early_aligned_to is not None:
        every, offset = format_duration(config.time.early_firings), format_duration(config.time.early_aligned_to)
        out += (f"; before that, an early pane at the next multiple of {every} of processing time from {offset} after "
                f"each pane's first element (--early-firings {every} --early-aligned-to {offset})")
    elif config.time.early_firings is not None:
        every = format_duration(config.time.early_firings)
        out += (f"; before that, an early pane {every} of processing time after each pane's first element "
                f"(--early-firings {every})")
    if config.time.continuous_event_time is not None:
        every = format_duration(config.time.continuous_event_time)
        out += (f"; before that, a pane each time its watermark passes another {every} of event time after its "
                f"first element (--continuous-event-time {every})")
    if config.time.continuous_processing_time is not None:
        every = format_duration(config.time.continuous_processing_time)
        out += (f"; instead, a pane at each {every} of processing time after its first element, up to its "
                f"maxTimestamp, and none when the watermark reaches its end (--continuous-processing-time {every})")
    return out
