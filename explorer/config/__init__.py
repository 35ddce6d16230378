"""The configuration model, in the words users already know (VoltSP's timeConfig and its peers).

Plain dataclasses: they are data, they compare and hash, and every runner reads the same ones.
All durations are integer microseconds; :func:`explorer.timeutil.parse_duration` reads what users type.

This module holds the model itself: the enums, TimeConfig, BatchSpec and RunConfig (their names,
``explorer.config.TimeConfig`` and so on, are also how an engine's saved state names them: ``core.snapshot``).
What surrounds it has a module of its own, and every name is importable from here as before:

- ``windows``: the window kinds and WindowSpec (where an event goes);
- ``fields``: each TimeConfig field as the CLI, the YAML, the controls and the checks see it (``TIME_FIELDS``);
- ``presets``: the engines' rules as data (``PRESETS``, :func:`preset`, the ``--delay`` knob);
- ``voltsp_yaml``: reading a VoltSP YAML file into a RunConfig, and writing a TimeConfig back in its words.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from explorer.config.windows import MAX_DURATION, MAX_WINDOWS_PER_EVENT, WindowKind, WindowSpec
from explorer.errors import InputError
from explorer.timeutil import format_duration, parse_duration, truncate_to_unit

SECOND = 1_000_000
MILLISECOND = 1_000
MAX_BATCH_COUNT = 10**12  # events per batch: past any stream, far inside int64 (event numbers are divided by it)


class TimeSource(str, Enum):
    EVENT = "event"
    PROCESSING = "processing"


class Strategy(str, Enum):
    """How the raw watermark advances.

    MIN/MAX move once per committed batch to the smallest/largest event time of the batch (VoltSP).
    BOUNDED moves per element to max-seen − bound (003's T = t_max − L, Flink's bounded out-of-orderness).
    EVENT_CLOCK is Bytewax's EventClock: a timely item (timestamp ≥ watermark) whose timestamp − bound is
    ahead of the watermark resets it there; in between the watermark advances with the processing clock.
    SCRIPTED follows the input's own watermark rows (``kind`` = watermark), as Flink's test harness
    (``processWatermark``) and Beam's ``TestStream`` (``advance_watermark_to``) do: one watermark for the whole
    stream (scope does not apply), moved at the commit of the batch holding the row, never back.
    """

    MIN = "min"
    MAX = "max"
    BOUNDED = "bounded"
    EVENT_CLOCK = "event-clock"
    SCRIPTED = "scripted"


class LatenessRule(str, Enum):
    """When is an event late? 000 says both, and they disagree (see README: "The contradiction in 000")."""

    WINDOW = "window"  # its window is already closed (000's scenario tables, 003's code)
    TIMESTAMP = "timestamp"  # its timestamp is behind the effective watermark (000's prose)


class LatePolicy(str, Enum):
    DROP = "drop"
    SIDE_OUTPUT = "side-output"  # VoltSP's exception handler, Flink's sideOutputLateData


class RefusedWhen(str, Enum):
    """When an event that some of its windows refused counts as refused (dropped, or sent to the side output).

    ANY_WINDOW: as soon as one window refuses it (VoltSP, Spark, the textbook).
    EVERY_WINDOW: only when all of them do; a sliding window that refuses it while another keeps it drops it
    without a trace: no side output, no drop count (Flink's WindowOperator: ``isSkippedElement &&
    isElementLate``).
    """

    ANY_WINDOW = "any-window"
    EVERY_WINDOW = "every-window"


class Scope(str, Enum):
    """Who shares a watermark."""

    KEY = "key"  # one watermark per key (VoltSP, Bytewax)
    GLOBAL = "global"  # one watermark for the whole stream
    PARTITION_MIN = "partition-min"  # one per partition, merged by min (Flink, Storm, 003 section 4)
    PARTITION_MAX = "partition-max"  # merged by max (Spark's multipleWatermarkPolicy=max)
    # one per partition, not merged: a key's windows close by its partition's own watermark (Kafka Streams'
    # stream time per task). A key must stay in one partition, as Kafka's partitioner keeps it.
    PARTITION = "partition"


class Schedule(str, Enum):
    """When a committed batch's watermark takes effect (Spark's two trigger patterns).

    LIVE: at the batch's own commit (and for the next batch's lateness) — every engine here, and Spark when
    arrivals are live (a no-data micro-batch follows each batch that raised the watermark).
    BACKLOG: one micro-batch later — Spark replaying a backlog (trigger availableNow): micro-batch N emits with
    the watermark of the batches before it and drops rows by the previous micro-batch's watermark; one
    no-data micro-batch runs after the last.
    """

    LIVE = "live"
    BACKLOG = "backlog"


class Emit(str, Enum):
    """When a window is emitted (Kafka Streams' EmitStrategy).

    ON_CLOSE: once the watermark closes it, then again per late update (every engine's default but Kafka
    Streams'; there ``emitStrategy(onWindowClose)`` or ``suppress(untilWindowCloses)``).
    ON_UPDATE: every record a window takes forwards the window's new result at once, a revision; nothing is
    emitted when it closes (Kafka Streams with its record cache off: the TopologyTestDriver's view).
    ON_BATCH: the same updates, coalesced per batch: when a batch commits, each window the batch changed emits
    once, with its whole result after the batch; nothing is emitted when it closes. Spark's outputMode("update")
    (the batches are its micro-batches), and Kafka Streams' record cache, on by default, which forwards a key's
    latest result at each commit (batches of ``commit.interval.ms``). Decisions (drops, eviction) are on-update's,
    so the windows table is cut from the on-update one after any runner (``core/coalesce.py``).
    """

    ON_CLOSE = "on-close"
    ON_UPDATE = "on-update"
    ON_BATCH = "on-batch"


class Panes(str, Enum):
    """What a window's second and later emissions carry (Beam's accumulation mode).

    ACCUMULATING: the whole window, every time. DISCARDING: only the events since its previous emission (the
    state is cleared when a pane fires), so a downstream sum of the panes counts each event once.
    """

    ACCUMULATING = "accumulating"
    DISCARDING = "discarding"


@dataclass(frozen=True)
class TimeConfig:
    """Every knob that decides lateness and emission. Defaults are VoltSP's."""

    time_source: TimeSource = TimeSource.EVENT
    strategy: Strategy = Strategy.MIN
    bound: int = 0  # L of the BOUNDED strategy: raw watermark = max seen − bound
    delay: int = 0  # delayWindowClose D: effective watermark = raw − D
    allowed_lateness: int = 0  # A: a closed window accepts updates until effective ≥ end + A
    late_policy: LatePolicy = LatePolicy.SIDE_OUTPUT
    lateness_rule: LatenessRule = LatenessRule.WINDOW
    refused_when: RefusedWhen = RefusedWhen.ANY_WINDOW
    idle_timeout: int | None = None
    idle_clock: TimeSource = TimeSource.PROCESSING
    heartbeat: int = 60 * SECOND  # VoltSP's pipeline heartbeat
    scope: Scope = Scope.KEY
    schedule: Schedule = Schedule.LIVE
    # Storm's windows are (end − length, end]: an event exactly at a boundary belongs to the window that
    # ends there, not to the one that starts there. Tumbling and sliding windows only.
    end_inclusive: bool = False
    # Bytewax's sessions take an item within `gap` of the session and close once the watermark is *past*
    # last + gap; modelled as [first, last + gap + 1 µs) joined only by overlap. Others (Spark) merge
    # sessions [t, t + gap) that overlap or touch and close when last + gap ≤ watermark.
    session_close_strict: bool = False
    # Flink's merging windows: an event's lateness is judged on the session it merges into (MergingWindowSet), and
    # an emitted session it extends past the watermark fires again when the watermark reaches the new end. Others
    # (Spark) judge the event's own [t, t + gap) and re-emit an emitted session at once.
    session_lateness_on_merge: bool = False
    # Beam's Sessions.mergeWindows joins windows [t, t + gap) only when they overlap: [10, 20) and [20, 30) stay
    # two. Others (Spark) merge sessions that touch as well.
    session_merge_overlap_only: bool = False
    # Beam's Python DirectRunner never drops a fired session's state (its GeneralTriggerDriver has no cleanup timer),
    # so an element whose own [t, t + gap) has not expired merges into an overlapping session however old, and the
    # merged session fires at once. Beam's model, its Java runners and Dataflow drop it at end + allowed lateness.
    session_state_kept: bool = False
    # Bytewax discards a key's state, its clock included, once the key has no window left to emit (tumbling and
    # sliding): the key's next item starts a fresh watermark, so a window can be emitted twice. Per-key
    # watermarks and fixed windows only.
    forget_clock_when_empty: bool = False
    # Bytewax's live dataflow on the system clock (EventClock's default to_system_utc): a key is woken only once the
    # processing time reaches its notify_at, the earliest end of its windows holding a released item or the timestamp
    # of its first held-back item; so a key stamped ahead of the clock closes late (core/wakeups.py). Per key, fixed.
    bytewax_live_wakeups: bool = False
    windows_from_zero: bool = False
    # Beam drops a late element only once the watermark is *past* end + allowed lateness (maxTimestamp + allowedLateness
    # < watermark): at exactly end + allowed lateness it is still kept. Others drop it there (Flink: <= watermark).
    late_kept_at_horizon: bool = False
    # Flink's EventTimeTrigger fires on the element: a window that takes an element once the watermark has passed
    # its end fires there and then, once per element, even when several arrive between two watermarks. Others
    # (Beam, per bundle; VoltSP, per batch) re-emit a window once when the batch that touched it commits.
    late_fires_per_element: bool = False
    # Flink's withIdleness, at periodic emits only: idle at an emit more than this after the first with no record,
    # back at the emit after its next; the merge never goes back, all idle take the highest (partition-min/max).
    source_idle_timeout: int | None = None
    # Spark keeps its watermark in milliseconds: the event times that move it are read as t / 1000 and the
    # withWatermark delay is whole ms, so on a µs stream the watermark is a whole ms. 1 µs: exact.
    watermark_unit: int = 1
    emit: Emit = Emit.ON_CLOSE
    panes: Panes = Panes.ACCUMULATING
    # emit on-batch: updates coalesced per this much arrival time, flushed at each multiple (commit.interval.ms; None: per batch)
    commit_interval: int | None = None
    # Beam's withEarlyFirings(AfterProcessingTime.pastFirstElementInPane().plusDelayOf(T)): a pane's first element at
    # processing time p fires an EARLY pane at p + T unless the watermark fired first; decides nothing (core/early.py)
    early_firings: int | None = None
    # Beam's .alignedTo(T, O) instead of .plusDelayOf(T): the early timer at the next processing time O + k·T, by
    # Java's arithmetic (from a time before O, the one after it); None: plusDelayOf (core/early.py)
    early_aligned_to: int | None = None
    # Flink's ContinuousEventTimeTrigger.of(I): a window also fires at each multiple of I the watermark passes (core/continuous)
    continuous_event_time: int | None = None
    # Flink's ContinuousProcessingTimeTrigger.of(I): fires every I of arrival time from its first (core/continuous_processing)
    continuous_processing_time: int | None = None

    def __post_init__(self) -> None:
        """Every value checked against TIME_FIELDS, whoever built the config (a flag, YAML, a control, code):
        one rule, one message."""
        for spec in TIME_FIELDS:
            spec.check(getattr(self, spec.name))

    @property
    def watermark_delay(self) -> int:
        """The delay as the engine subtracts it: in whole watermark units (Spark's ms), like the event times."""
        return truncate_to_unit(self.delay, self.watermark_unit)

    @property
    def follows_watermark_rows(self) -> bool:
        """The input's watermark rows are the watermark (the scripted strategy; processing time ignores it)."""
        return self.strategy is Strategy.SCRIPTED and self.time_source is TimeSource.EVENT


class BatchKind(str, Enum):
    EVENT = "event"
    COUNT = "count"
    INTERVAL = "interval"
    COLUMN = "column"


@dataclass(frozen=True)
class BatchSpec:
    """How arrivals are cut into micro-batches (numbered from 1 in arrival order)."""

    kind: BatchKind = BatchKind.EVENT
    count: int = 1
    interval: int = 0

    def __post_init__(self) -> None:
        if self.kind is BatchKind.COUNT and not (isinstance(self.count, int) and 1 <= self.count <= MAX_BATCH_COUNT):
            raise InputError(f"batching count:N needs a whole number N from 1 to {MAX_BATCH_COUNT:,} (more events "
                             f"than any stream holds), not {self.count!r}")
        if self.kind is BatchKind.INTERVAL and not (isinstance(self.interval, int) and 0 < self.interval <= MAX_DURATION):
            raise InputError(f"batching interval:T needs a positive duration up to 100 years, not {self.interval!r} µs")

    @staticmethod
    def parse(text: str) -> "BatchSpec":
        """Read ``event``, ``count:N``, ``interval:T`` or ``column``."""
        head, _, arg = str(text).partition(":")
        try:
            kind = BatchKind(head.strip().lower())
        except ValueError:
            raise InputError(f"unknown batching {text!r}: use event, count:N, interval:T or column") from None
        if kind is BatchKind.COUNT:
            if not arg.strip().isascii() or not arg.strip().isdigit() or int(arg) < 1:
                raise InputError(f"batching {text!r}: count:N needs a whole number N ≥ 1")
            return BatchSpec(kind, count=int(arg))
        if kind is BatchKind.INTERVAL:
            interval = parse_duration(arg) if arg else 0
            if interval <= 0:
                raise InputError(f"batching {text!r}: interval:T needs a positive duration")
            return BatchSpec(kind, interval=interval)
        return BatchSpec(kind)

    def describe(self) -> str:
        """The cadence in words: how arrivals become the batches the watermark moves between."""
        if self.kind is BatchKind.INTERVAL:
            return f"one micro-batch per {format_duration(self.interval)} of arrival time (a trigger interval)"
        if self.kind is BatchKind.COUNT:
            return f"one batch per {self.count} events"
        if self.kind is BatchKind.COLUMN:
            return "the file's batch column"
        return "one batch per event"

    def __str__(self) -> str:
        if self.kind is BatchKind.COUNT:
            return f"count:{self.count}"
        if self.kind is BatchKind.INTERVAL:
            return f"interval:{format_duration(self.interval)}"
        return str(self.kind.value)


@dataclass(frozen=True)
class RunConfig:
    """One complete configuration: the window (where), the time config (when) and the batching."""

    window: WindowSpec = field(default_factory=lambda: WindowSpec(WindowKind.TUMBLING, 10 * SECOND, 10 * SECOND))
    time: TimeConfig = field(default_factory=TimeConfig)
    batches: BatchSpec | None = None  # None: the file's batch column if it has one, else one batch per event
    preset: str = "voltsp"

    def with_time(self, **changes: Any) -> "RunConfig":
        return replace(self, time=replace(self.time, **changes))



def describe(config: RunConfig) -> dict[str, Any]:
    """A flat, JSON-friendly description of a config (for outputs and the UI)."""
    time = {f.name: getattr(config.time, f.name) for f in dataclasses.fields(config.time)}
    return {
        "preset": config.preset,
        "window": str(config.window),
        "batches": str(config.batches) if config.batches else None,
        **{k: (v.value if isinstance(v, Enum) else v) for k, v in time.items()},
    }


# The parts around the model, after it: each imports the model's names from here (the package is initialised
# first, so they are defined by then). TimeConfig checks its values against TIME_FIELDS when it is built.
from explorer.config.fields import ENGINE_WORDS, FIELD_BY_OPTION, TIME_FIELDS, TimeField, time_option  # noqa: E402
from explorer.config.presets import PRESETS, Preset, apply_delay, delay_of, emission, preset, what_if  # noqa: E402
from explorer.config.voltsp_yaml import (MAX_YAML_BYTES, MAX_YAML_NODES, LoadedConfig, load_yaml_config,  # noqa: E402
                                         read_yaml, time_config_to_voltsp)

__all__ = [
    "ENGINE_WORDS", "FIELD_BY_OPTION", "MAX_DURATION", "MAX_WINDOWS_PER_EVENT", "MAX_YAML_BYTES", "MAX_YAML_NODES", "MILLISECOND",
    "PRESETS", "SECOND", "TIME_FIELDS", "BatchKind", "BatchSpec", "Emit", "LatePolicy", "LatenessRule",
    "LoadedConfig", "Panes", "Preset", "RefusedWhen", "RunConfig", "Schedule", "Scope", "Strategy", "TimeConfig",
    "TimeField", "TimeSource", "WindowKind", "WindowSpec", "apply_delay", "delay_of", "describe", "emission",
    "load_yaml_config", "preset", "read_yaml", "time_config_to_voltsp", "time_option", "what_if",
]
