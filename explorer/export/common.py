"""What every export snippet shares: where the user's events live (:class:`ExportSource`), durations as each
language writes them, and the comments for every setting a target cannot express (so nothing is silently lost in
translation).

A module of its own so that the snippets, one function per engine in ``jvm`` and ``python``, say only what is
particular to their engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from explorer.config import (PRESETS, TIME_FIELDS, BatchKind, Emit, LatePolicy, LatenessRule, Panes, RunConfig, WindowKind,
                             WindowSpec, what_if)
from explorer.core.rules import derive
from explorer.streams import Stream
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
    arrival_time: str | None = None  # None: the file has none; its order is the arrival order
    arrival_time_format: TimeFormat | None = None
    id: str | None = None  # None: the file has none; events are e1, e2… by row
    kind: str | None = None  # the column marking scripted watermark rows (None: the file has none)
    partition: str | None = None  # the Kafka partition column (None: one partition)

    @staticmethod
    def of(stream: Stream) -> "ExportSource":
        named = stream.source_columns
        return ExportSource(named.get("event_time", "event_time"),
                            named.get("key", "key") if stream.has_keys else None,
                            stream.time_formats.get("event_time"), stream.source,
                            named.get("arrival_time", "arrival_time") if stream.has_arrival else None,
                            stream.time_formats.get("arrival_time"),
                            named.get("id", "id") if stream.has_ids else None,
                            named.get("kind", "kind") if len(stream.watermarks) else None,
                            named.get("partition", "partition") if len(stream.partitions) > 1 else None)


DEFAULT_SOURCE = ExportSource()


def java_duration(micros: int) -> str:
    if micros == 0:
        return "Duration.ZERO"
    if micros % (3600 * 10**6) == 0:
        return f"Duration.ofHours({micros // (3600 * 10**6)})"
    if micros % (60 * 10**6) == 0:
        return f"Duration.ofMinutes({micros // (60 * 10**6)})"
    if micros % 10**6 == 0:
        return f"Duration.ofSeconds({micros // 10**6})"
    return f"Duration.ofMillis({micros // MS})"


def joda_duration(micros: int) -> str:
    """A duration as Beam's Java SDK takes it: ``org.joda.time.Duration`` (its windows, triggers, allowed lateness
    and KafkaIO's timestamp policy), whose factories are not java.time's (``standardSeconds``, not ``ofSeconds``)."""
    if micros == 0:
        return "Duration.ZERO"
    for unit, name in ((3600 * 10**6, "standardHours"), (60 * 10**6, "standardMinutes"), (10**6, "standardSeconds")):
        if micros % unit == 0:
            return f"Duration.{name}({micros // unit})"
    return f"Duration.millis({micros // MS})"


def spark_interval(micros: int) -> str:
    return f"{micros / 10**6:g} seconds"


def window_length(config: RunConfig) -> int:
    return config.window.gap if config.window.kind is WindowKind.SESSION else config.window.size


def watermark_lag(config: RunConfig) -> int:
    """The one lateness bound most engines have: bound L plus delayWindowClose."""
    return config.time.bound + config.time.delay


# The engine each target's API belongs to (its preset is what the program runs, whatever the config says).
ENGINE_OF_TARGET = {"VoltSP": "voltsp", "Flink": "flink", "PyFlink": "flink", "Beam": "beam",
                    "Kafka Streams": "kafka-streams", "Bytewax": "bytewax", "Spark Structured Streaming": "spark"}
# The TimeConfig fields the notes below judge in the target's own words; delay and bound are in every program
# (the watermark's lag). Every other field is compared with what the target's engine does (:func:`_differences`),
# so a field added to TimeConfig is never dropped silently by any target.
JUDGED_IN_WORDS = frozenset({"strategy", "idle_timeout", "idle_clock", "allowed_lateness", "late_policy", "scope",
                             "lateness_rule", "end_inclusive", "time_source", "emit", "panes", "windows_from_zero",
                             "late_fires_per_element", "source_idle_timeout", "delay", "bound",
                             "commit_interval", "early_firings", "early_aligned_to", "continuous_event_time",
                             "bytewax_live_wakeups",
                             "continuous_processing_time", "session_state_kept"})


def _differences(config: RunConfig, target: str) -> list[str]:
    """A note for each remaining setting where the config differs from what the target's engine does: the program
    runs the engine's, and says which."""
    engine = ENGINE_OF_TARGET[target]
    own = PRESETS[engine].time
    notes = []
    for spec in TIME_FIELDS:
        ours, theirs = getattr(config.time, spec.name), getattr(own, spec.name)
        if spec.name in JUDGED_IN_WORDS or ours == theirs or config.window.kind.value not in spec.windows:
            continue
        notes.append(f"--{spec.option.replace('_', '-')} is {spec.to_text(ours)} here; {target} runs "
                     f"{spec.to_text(theirs)}, which the program keeps")
    return notes


def what_if_note(config: RunConfig, setting: str) -> str:
    return f"what if: {setting} is not a setting of {config.preset}, the engine these settings model"


def without_cumulate(config: RunConfig, target: str) -> tuple[RunConfig, list[str]]:
    """For a target whose engine has no CUMULATE windows (Flink SQL's): the config its program runs instead, tumbling
    windows of the size at the same offset (each cumulation's last, whole window), and the notes that say so."""
    window = config.window
    tumbling = replace(config, window=WindowSpec(WindowKind.TUMBLING, size=window.size, slide=window.size,
                                                 offset=window.offset))
    notes = [what_if_note(config, setting) for setting in what_if(config) if setting not in what_if(tumbling)]
    notes.append(f"{target} has no CUMULATE windows (Flink SQL's {window}: [s, s + k × "
                 f"{format_duration(window.slide)}) up to s + {format_duration(window.size)}); the program runs "
                 f"{tumbling.window}, the last window of each cumulation, and emits none of the shorter ones")
    return tumbling, notes


def unsupported(config: RunConfig, target: str, handled: set[str]) -> list[str]:
    """Comments for what the target cannot say."""
    t, rules = config.time, derive(config)
    notes = [what_if_note(config, setting) for setting in what_if(config)]
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
    if "emit" not in handled and t.emit is Emit.ON_UPDATE:
        notes.append(f"emit on-update (every record forwards its window's new result: Kafka Streams with its record "
                     f"cache off) has no equivalent in {target}; it emits a window when it closes")
    if "emit" not in handled and t.emit is Emit.ON_BATCH:
        notes.append(f"emit on-batch (each batch's updates coalesced, one per window it changed: Spark's update "
                     f"output mode, Kafka Streams' record cache) has no equivalent in {target}; it emits a window "
                     "when it closes")
    if "emit" not in handled and t.commit_interval is not None and t.emit is Emit.ON_BATCH:
        notes.append(f"updates coalesced per commit interval ({format_duration(t.commit_interval)}) have no "
                     f"equivalent in {target}")
    if "early" not in handled and t.early_firings is not None:
        aligned = "" if t.early_aligned_to is None else f", aligned to {format_duration(t.early_aligned_to)}"
        notes.append(f"early firings every {format_duration(t.early_firings)} of processing time{aligned} (Beam's "
                     f"withEarlyFirings) have no equivalent in {target}: it emits a window when it closes")
    if "continuous" not in handled and t.continuous_event_time is not None:
        notes.append(f"periodic firings every {format_duration(t.continuous_event_time)} of event time (Flink's "
                     f"ContinuousEventTimeTrigger) have no equivalent in {target}: it emits a window when it closes")
    if "continuous_processing" not in handled and t.continuous_processing_time is not None:
        notes.append(f"periodic firings every {format_duration(t.continuous_processing_time)} of processing time "
                     f"(Flink's ContinuousProcessingTimeTrigger) have no equivalent in {target}: it emits a window when "
                     "it closes")
    if "live_wakeups" not in handled and rules.live_wakeups:
        notes.append(f"Bytewax's live wake-ups on the system clock (--bytewax-live-wakeups) have no equivalent in "
                     f"{target}: it closes a window as the watermark reaches its end")
    if "state_kept" not in handled and rules.sessions_kept:
        notes.append(f"--session-state-kept (Beam's Python DirectRunner: a fired session is never dropped) has no "
                     f"equivalent in {target}: it drops a session at its end + allowed lateness, so a later event "
                     "that overlaps it opens a new session there")
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
    if "offset" not in handled and config.window.offset:
        notes.append(f"{target} aligns its windows to the epoch; here they start {format_duration(config.window.offset)} "
                     "later (the window offset), so every window differs")
    if rules.source_idle_timeout is not None and target not in ("Flink", "PyFlink"):
        notes.append(f"a partition idle for {format_duration(rules.source_idle_timeout)} leaving the watermark merge "
                     f"(Flink's withIdleness) has no equivalent in {target}")
    return notes + _differences(config, target)


def one_event_per_batch(config: RunConfig, replay: str) -> str | None:
    """A reason a replay that takes one event at a time (``replay`` says how) cannot follow the prediction, or
    None: the prediction's batches are larger, so its watermark moves inside them."""
    if config.batches is not None and config.batches.kind is not BatchKind.EVENT:
        return f"{replay}; the prediction must take one event per batch too (--batches event)"
    return None


def comment(prefix: str, notes: list[str]) -> str:
    return "".join(f"{prefix} NOTE: {n}\n" for n in notes)


def beam_window_fn(config: RunConfig, seconds: Callable[[int], str]) -> str:
    """Beam Java's WindowFn for the window (Beam Python's is in ``beam_job``, with its own time types)."""
    size, slide, gap, offset = (seconds(v) for v in (config.window.size, config.window.slide, config.window.gap,
                                                     config.window.offset))
    with_offset = f".withOffset({offset})" if config.window.offset else ""
    return {WindowKind.TUMBLING: f"FixedWindows.of({size}){with_offset}",
            WindowKind.SLIDING: f"SlidingWindows.of({size}).every({slide}){with_offset}",
            WindowKind.SESSION: f"Sessions.withGapDuration({gap})"}[config.window.kind]
