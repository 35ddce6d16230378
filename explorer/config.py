"""The configuration model, in the words users already know (VoltSP's timeConfig and its peers).

Plain dataclasses: they are data, they compare and hash, and every runner reads the same ones.
All durations are integer microseconds; :func:`explorer.timeutil.parse_duration` reads what users type.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any, Sequence

import yaml

from explorer.errors import InputError
from explorer.timeutil import format_duration, parse_duration, truncate_to_unit

SECOND = 1_000_000
MILLISECOND = 1_000


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
    emitted when it closes (Kafka Streams' default, as with caching off: the TopologyTestDriver's view).
    """

    ON_CLOSE = "on-close"
    ON_UPDATE = "on-update"


class Panes(str, Enum):
    """What a window's second and later emissions carry (Beam's accumulation mode).

    ACCUMULATING: the whole window, every time. DISCARDING: only the events since its previous emission (the
    state is cleared when a pane fires), so a downstream sum of the panes counts each event once.
    """

    ACCUMULATING = "accumulating"
    DISCARDING = "discarding"


class WindowKind(str, Enum):
    TUMBLING = "tumbling"
    SLIDING = "sliding"
    SESSION = "session"


@dataclass(frozen=True)
class WindowSpec:
    """Where an event goes: tumbling(size), sliding(size, slide) or session(gap), aligned to time 0."""

    kind: WindowKind
    size: int = 0
    slide: int = 0
    gap: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.kind, WindowKind):
            raise InputError(f"window kind must be one of {', '.join(k.value for k in WindowKind)}, not {self.kind!r}")
        spans = [self.gap] if self.kind is WindowKind.SESSION else [self.size, self.slide]
        if any(isinstance(v, bool) or not isinstance(v, int) or not 0 < v <= MAX_DURATION for v in spans):
            raise InputError(f"window {self.kind.value}: sizes, slides and gaps must be positive durations up to 100 "
                             f"years (got {', '.join(map(str, spans))} µs)")
        if self.kind is WindowKind.TUMBLING and self.slide != self.size:
            raise InputError("a tumbling window slides by its size")
        if self.kind is WindowKind.SLIDING and -(-self.size // self.slide) > MAX_WINDOWS_PER_EVENT:
            raise InputError(f"window sliding:{format_duration(self.size)}:{format_duration(self.slide)} puts every "
                             f"event in {-(-self.size // self.slide):,} windows; at most {MAX_WINDOWS_PER_EVENT:,} "
                             "are allowed (use a longer slide)")

    @staticmethod
    def parse(text: str) -> "WindowSpec":
        """Read ``tumbling:10``, ``sliding:20:10`` or ``session:30`` (durations as in --delay)."""
        parts = str(text).split(":")
        try:
            kind = WindowKind(parts[0].strip().lower())
        except ValueError:
            raise InputError(f"unknown window {text!r}: use tumbling:SIZE, sliding:SIZE:SLIDE or session:GAP") from None
        expected = {WindowKind.TUMBLING: 2, WindowKind.SLIDING: 3, WindowKind.SESSION: 2}[kind]
        if len(parts) != expected:
            raise InputError(f"window {text!r} needs {expected - 1} duration(s) after '{kind.value}:'")
        values = [parse_duration(p) for p in parts[1:]]
        if kind is WindowKind.TUMBLING:
            return WindowSpec(kind, size=values[0], slide=values[0])
        if kind is WindowKind.SLIDING:
            return WindowSpec(kind, size=values[0], slide=values[1])
        return WindowSpec(kind, gap=values[0])

    def __str__(self) -> str:
        if self.kind is WindowKind.TUMBLING:
            return f"tumbling:{format_duration(self.size)}"
        if self.kind is WindowKind.SLIDING:
            return f"sliding:{format_duration(self.size)}:{format_duration(self.slide)}"
        return f"session:{format_duration(self.gap)}"


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
    # Flink's merging windows: an event's lateness is judged on the session it merges into (after
    # MergingWindowSet.addWindow), and an emitted session it extends past the watermark fires again only when
    # the watermark reaches the new end (EventTimeTrigger). Others (Spark) judge the event's own [t, t + gap)
    # and re-emit an emitted session at once.
    session_lateness_on_merge: bool = False
    # Beam's Sessions.mergeWindows joins windows [t, t + gap) only when they overlap: [10, 20) and [20, 30) stay
    # two. Others (Spark) merge sessions that touch as well.
    session_merge_overlap_only: bool = False
    # Bytewax discards a key's state, its clock included, once the key has no window left to emit (tumbling and
    # sliding): the key's next item starts a fresh watermark, so a window can be emitted twice. Per-key
    # watermarks and fixed windows only.
    forget_clock_when_empty: bool = False
    windows_from_zero: bool = False
    # Beam drops a late element only once the watermark is *past* end + allowed lateness (its window's
    # maxTimestamp + allowedLateness < watermark): at exactly end + allowed lateness it is still kept. Others drop
    # it there (Flink: maxTimestamp + allowedLateness <= watermark).
    late_kept_at_horizon: bool = False
    # Flink's EventTimeTrigger fires on the element: a window that takes an element once the watermark has passed
    # its end fires there and then, once per element, even when several arrive between two watermarks. Others
    # (Beam, per bundle; VoltSP, per batch) re-emit a window once when the batch that touched it commits.
    late_fires_per_element: bool = False
    # Flink's withIdleness: a partition silent this long (processing time) leaves the min/max merge until it
    # sends again; the merged watermark never goes back (scope partition-min/max only).
    source_idle_timeout: int | None = None
    # Spark keeps its watermark in milliseconds: the event times that move it are read as t / 1000 and the
    # withWatermark delay is whole ms, so on a µs stream the watermark is a whole ms. 1 µs: exact.
    watermark_unit: int = 1
    emit: Emit = Emit.ON_CLOSE
    panes: Panes = Panes.ACCUMULATING

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


# --- every TimeConfig field, everywhere it surfaces ------------------------------------------------

MAX_DURATION = 100 * 365 * 86_400 * SECOND  # a century: past any real setting, far from int64's limit
MAX_WINDOWS_PER_EVENT = 1_000  # sliding size / slide: each event is held once per window it falls in
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


@dataclass(frozen=True)
class TimeField:
    """One TimeConfig field: its option (CLI ``--option``, compare's ``preset:option=value``), VoltSP's YAML word,
    the explorer control that shows it, and the values it takes. ``values`` is an Enum, ``bool``, or None for a
    duration (integer µs, ≥ 0; > 0 when ``positive``; None allowed when ``optional``, meaning off)."""

    name: str
    option: str
    help: str
    values: type | None = None
    yaml: str | None = None
    voltsp_words: dict[str, Any] | None = None  # VoltSP's own spelling of an enum's values
    control: str | None = None
    optional: bool = False
    positive: bool = False
    windows: tuple[str, ...] = ("tumbling", "sliding", "session")  # the window kinds it can change anything for

    @property
    def label(self) -> str:
        return f"--{self.option.replace('_', '-')}" + (f" ({self.yaml})" if self.yaml else "")

    @property
    def choices(self) -> list[str]:
        if self.values is bool:
            return ["true", "false"]
        return [v.value for v in self.values] if self.values else []

    def parse(self, value: Any, written: str | None = None) -> Any:
        """A value as a user writes it (CLI text, a YAML scalar) → the field's value. An InputError names the
        setting as it was ``written`` (default: the CLI option): ``timeConfig.watermarkStrategy``."""
        written = written or self.label
        in_yaml = written != self.label
        if self.values is None:
            if self.optional and str(value).strip().lower() in ("off", "none", "0"):
                return None
            try:
                return parse_duration(value)
            except InputError as error:
                raise InputError(f"{written}: {error}") from None
        text = str(value).strip()
        if self.values is bool:
            if value is True or text.lower() in _TRUE:
                return True
            if value is False or text.lower() in _FALSE:
                return False
            raise InputError(f"{written} must be true or false, not {value!r}")
        if self.voltsp_words and text.upper() in self.voltsp_words:
            return self.voltsp_words[text.upper()]
        try:
            return self.values(text.lower())
        except ValueError:
            words = list(self.voltsp_words) if in_yaml and self.voltsp_words else self.choices
            raise InputError(f"{written} must be one of {', '.join(words)}, not {value!r}") from None

    def check(self, value: Any) -> None:
        """Refuse a value this field cannot take, in words that name the field."""
        if self.values is None:
            if value is None and self.optional:
                return
            if isinstance(value, bool) or not isinstance(value, int):
                raise InputError(f"{self.label} must be a duration, not {value!r}")
            if value < 0 or (self.positive and value == 0):
                raise InputError(f"{self.label} must be {'positive' if self.positive else '≥ 0'}"
                                 f"{' (or off)' if self.optional else ''}, not {format_duration(value)}")
            if value > MAX_DURATION:
                raise InputError(f"{self.label} is {format_duration(value)}; the most it can be is 100 years")
        elif not isinstance(value, self.values):
            raise InputError(f"{self.label} must be one of {', '.join(self.choices)}, not {value!r}")

    def to_text(self, value: Any) -> str:
        if self.values is None:
            return "off" if value is None else format_duration(value)
        if self.values is bool:
            return "true" if value else "false"
        return value.value


TIME_FIELDS: tuple[TimeField, ...] = (
    TimeField("time_source", "time", "event or processing time (in YAML: an eventTimeExtractor means event time)",
              TimeSource, control="time_source"),
    TimeField("strategy", "strategy", "min | max (once per batch) | bounded (per element) | event-clock (Bytewax) | "
              "scripted (the input's watermark rows)",
              Strategy, "watermarkStrategy", {"MIN_EVENT_TIME": Strategy.MIN, "MAX_EVENT_TIME": Strategy.MAX,
                                              "BOUNDED": Strategy.BOUNDED, "EVENT_CLOCK": Strategy.EVENT_CLOCK,
                                              "SCRIPTED": Strategy.SCRIPTED},
              control="strategy"),
    TimeField("bound", "bound", "L of the bounded strategy (raw watermark = max seen − L)", yaml="bound",
              control="bound"),
    TimeField("delay", "delay", "delayWindowClose: effective watermark = raw − delay", yaml="delayWindowClose",
              control="delay"),
    TimeField("allowed_lateness", "allowed_lateness", "keep closed windows for late updates until effective ≥ end + A",
              yaml="allowedLateness", control="allowed"),
    TimeField("late_policy", "late", "what happens to refused late events", LatePolicy, "latePolicy", control="late"),
    TimeField("lateness_rule", "lateness_rule", "late = window closed | timestamp behind the watermark", LatenessRule,
              "latenessRule", control="rule"),
    TimeField("refused_when", "refused_when", "an event some windows refused is refused (side output or drop) when "
              "any window refuses it, or only when every one does (Flink; the others lose it silently)", RefusedWhen,
              "refusedWhen", windows=("sliding",)),
    TimeField("idle_timeout", "idle_timeout", "flush a key's windows after this much silence (off: never)",
              yaml="idleTimeout", control="idle", optional=True, positive=True),
    TimeField("idle_clock", "idle_clock", "which clock measures silence", TimeSource, "idleTimeoutClock",
              {"PROCESSING_TIME": TimeSource.PROCESSING, "EVENT_TIME": TimeSource.EVENT}, control="idle_clock"),
    TimeField("heartbeat", "heartbeat", "pipeline heartbeat interval (default 60s)", yaml="heartbeat",
              positive=True),
    TimeField("scope", "scope", "who shares a watermark (default key): key, global, partition-min/max (merged), "
              "partition (each its own, Kafka Streams' stream time)", Scope, "scope", control="scope"),
    TimeField("schedule", "schedule", "when a batch's watermark takes effect: live, or backlog (Spark replaying "
              "with availableNow)", Schedule, "schedule"),
    TimeField("end_inclusive", "end_inclusive", "windows are (start, end], as Storm's", bool, "endInclusive",
              windows=("tumbling", "sliding")),
    TimeField("session_close_strict", "session_close_strict", "sessions join within the gap and close once the "
              "watermark is past last + gap, as Bytewax's", bool, "sessionCloseStrict", windows=("session",)),
    TimeField("session_lateness_on_merge", "session_lateness_on_merge", "sessions: judge lateness on the session "
              "an event merges into, and fire an emitted session it extends only when the watermark reaches the new "
              "end, as Flink's", bool, "sessionLatenessOnMerge", windows=("session",)),
    TimeField("session_merge_overlap_only", "session_merge_overlap_only", "sessions merge only when they overlap, "
              "not when one ends where the next starts, as Beam's", bool, "sessionMergeOverlapOnly",
              windows=("session",)),
    TimeField("forget_clock_when_empty", "forget_clock_when_empty", "per-key watermarks, tumbling and sliding: a "
              "key's watermark is forgotten once all its windows have fired, so its next event starts afresh, as "
              "Bytewax discards the key's state", bool, "forgetClockWhenEmpty", windows=("tumbling", "sliding")),
    TimeField("windows_from_zero", "windows_from_zero", "sliding windows start at 0 or later: an event at t ≥ 0 "
              "is in no window that starts before 0, as Kafka Streams creates none", bool, "windowsFromZero",
              windows=("sliding",)),
    TimeField("late_kept_at_horizon", "late_kept_at_horizon", "a closed window still takes late events while the "
              "effective watermark is exactly at end + allowed lateness (even 0), and drops them once it is past, "
              "as Beam's", bool, "lateKeptAtHorizon"),
    TimeField("late_fires_per_element", "late_fires_per_element", "a window that takes an element after the "
              "watermark passed its end fires at once, once per element, not once when its batch commits, as "
              "Flink's EventTimeTrigger", bool, "lateFiresPerElement"),
    TimeField("source_idle_timeout", "source_idle_timeout", "Flink's withIdleness: a partition this silent leaves "
              "the partition-min/max merge (off: never)", yaml="sourceIdleTimeout", control="source_idle",
              optional=True, positive=True),
    TimeField("watermark_unit", "watermark_unit", "the watermark is kept in whole units of this: the event times "
              "that move it and the delay are truncated toward zero to it (Spark: 1ms; default 1us, exact)",
              yaml="watermarkUnit", positive=True),
    TimeField("emit", "emit", "on-close: a window is emitted when the watermark closes it; on-update: every record "
              "it takes emits its new result at once, and its close emits nothing (Kafka Streams' default)", Emit,
              "emit"),
    TimeField("panes", "panes", "what a window's later emissions carry: the whole window (accumulating) or only the "
              "events since its previous one (discarding, Beam's discardingFiredPanes)", Panes, "panes"),
)
FIELD_BY_OPTION = {spec.option: spec for spec in TIME_FIELDS}


def time_option(option: str, text: Any) -> tuple[str, Any]:
    """A named option's value as (TimeConfig field, value): ('strategy', 'max') → ('strategy', Strategy.MAX)."""
    spec = FIELD_BY_OPTION[option]
    return spec.name, spec.parse(text)


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
        if self.kind is BatchKind.COUNT and not (isinstance(self.count, int) and self.count >= 1):
            raise InputError(f"batching count:N needs a whole number N ≥ 1, not {self.count!r}")
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

    def __str__(self) -> str:
        if self.kind is BatchKind.COUNT:
            return f"count:{self.count}"
        if self.kind is BatchKind.INTERVAL:
            return f"interval:{format_duration(self.interval)}"
        return self.kind.value


@dataclass(frozen=True)
class RunConfig:
    """One complete configuration: the window (where), the time config (when) and the batching."""

    window: WindowSpec = field(default_factory=lambda: WindowSpec(WindowKind.TUMBLING, 10 * SECOND, 10 * SECOND))
    time: TimeConfig = field(default_factory=TimeConfig)
    batches: BatchSpec | None = None  # None: the file's batch column if it has one, else one batch per event
    preset: str = "voltsp"

    def with_time(self, **changes: Any) -> "RunConfig":
        return replace(self, time=replace(self.time, **changes))


@dataclass(frozen=True)
class Preset:
    """An engine's rules as data: the TimeConfig it starts from, and which field ``--delay`` sets."""

    name: str
    description: str
    time: TimeConfig
    delay_field: str  # "delay" (delayWindowClose-like) or "bound" (max seen − L)
    batches: BatchSpec | None = None
    allowed_lateness: bool = False  # the engine can keep a closed window for late events (and re-emit it)


PRESETS: dict[str, Preset] = {
    "voltsp": Preset(
        "voltsp",
        "VoltSP (000): MIN_EVENT_TIME per committed batch, delayWindowClose, per-key watermarks, "
        "late events to the exception handler, idle timeout on the processing clock with a 60 s heartbeat.",
        TimeConfig(),
        delay_field="delay",
        allowed_lateness=True,
    ),
    "textbook": Preset(
        "textbook",
        "Code 9.4.1 of 003: one watermark T = t_max − L updated per event, windows close when T ≥ end, "
        "late events dropped.",
        TimeConfig(strategy=Strategy.BOUNDED, late_policy=LatePolicy.DROP, scope=Scope.GLOBAL),
        delay_field="bound",
        batches=BatchSpec(BatchKind.EVENT),
        allowed_lateness=True,  # 003's exercise: a grace period G
    ),
    "spark": Preset(
        "spark",
        "Spark Structured Streaming: withWatermark(col, delay) + groupBy(window|session_window, key) in append "
        "mode. One global watermark = max event time seen − delay (floored at 0), in whole milliseconds (event "
        "times enter it as t / 1000 ms); a row is dropped for a window whose end ≤ the previous micro-batch's "
        "watermark; windows with end ≤ the watermark are emitted.",
        TimeConfig(strategy=Strategy.MAX, late_policy=LatePolicy.DROP, scope=Scope.GLOBAL,
                   schedule=Schedule.BACKLOG, watermark_unit=MILLISECOND),
        delay_field="delay",
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
        "watermark has passed its end fires at once, for each such element (EventTimeTrigger.onElement).",
        TimeConfig(strategy=Strategy.MAX, scope=Scope.PARTITION_MIN, late_policy=LatePolicy.SIDE_OUTPUT,
                   refused_when=RefusedWhen.EVERY_WINDOW, session_lateness_on_merge=True,
                   late_fires_per_element=True),
        delay_field="delay",
        batches=BatchSpec(BatchKind.INTERVAL, interval=200 * SECOND // 1000),
        allowed_lateness=True,
    ),
    "bytewax": Preset(
        "bytewax",
        "Bytewax (004): EventClock per key. Watermark = largest timely timestamp − wait, advancing with "
        "processing (arrival) time since that item; an item is late when its timestamp is below the watermark "
        "and is dropped; windows close when end ≤ watermark, the rest at end of input. A key whose windows have "
        "all closed loses its state, clock included: its next item starts a fresh watermark (tumbling, sliding).",
        TimeConfig(strategy=Strategy.EVENT_CLOCK, lateness_rule=LatenessRule.TIMESTAMP, late_policy=LatePolicy.DROP,
                   session_close_strict=True, forget_clock_when_empty=True),
        delay_field="bound",
        batches=BatchSpec(BatchKind.EVENT),
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
        "dropped it. Sessions [t, t + gap) merge only when they overlap.",
        TimeConfig(strategy=Strategy.BOUNDED, scope=Scope.PARTITION_MIN, late_policy=LatePolicy.DROP,
                   refused_when=RefusedWhen.EVERY_WINDOW, late_kept_at_horizon=True, session_merge_overlap_only=True),
        delay_field="bound",
        batches=BatchSpec(BatchKind.EVENT),
        allowed_lateness=True,
    ),
    "kafka-streams": Preset(
        "kafka-streams",
        "Kafka Streams: windowedBy(TimeWindows.ofSizeAndGrace | SessionWindows.ofInactivityGapAndGrace).count(). "
        "Stream time is the max record timestamp a task has seen, one per input partition and shared by all its keys; "
        "it moves only when records arrive. A record is dropped for a window whose end ≤ stream time − grace (the "
        "delay here). By default every record a window takes forwards the window's new count at once, a revision "
        "(emit on-update, as with caching off), and closing emits nothing (a record that grows or merges sessions first "
        "forwards a tombstone for each session it replaced); with emit on-close "
        "(emitStrategy(onWindowClose), suppress(untilWindowCloses)) a window is emitted once, when stream time − "
        "grace reaches its end. A session [first, last] takes a record within the gap (inclusive), is judged after "
        "the merge, and closes once stream time − grace is past last + gap. Hopping windows start at 0 or later.",
        TimeConfig(strategy=Strategy.BOUNDED, scope=Scope.PARTITION, late_policy=LatePolicy.DROP,
                   session_close_strict=True, session_lateness_on_merge=True, emit=Emit.ON_UPDATE,
                   windows_from_zero=True),
        delay_field="bound",
        batches=BatchSpec(BatchKind.EVENT),
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
        time = replace(time, **{chosen.delay_field: delay})
    time = replace(time, **time_changes)
    return RunConfig(time=time, batches=chosen.batches, preset=name)


def apply_delay(config: RunConfig, delay: int) -> RunConfig:
    """Set the one knob every engine has, in the arithmetic of the config's preset (for sweeps)."""
    field_name = PRESETS[config.preset].delay_field if config.preset in PRESETS else "delay"
    return config.with_time(**{field_name: delay})


def delay_of(config: RunConfig) -> int:
    """Read the one knob back (inverse of :func:`apply_delay`)."""
    field_name = PRESETS[config.preset].delay_field if config.preset in PRESETS else "delay"
    return getattr(config.time, field_name)


# --- YAML in VoltSP's words -------------------------------------------------------------------------

_WINDOW_SECTIONS = {
    "tumbling-time-window": WindowKind.TUMBLING,
    "sliding-time-window": WindowKind.SLIDING,
    "session-window": WindowKind.SESSION,
}
@dataclass(frozen=True)
class LoadedConfig:
    """A YAML file read into a RunConfig, plus the event-time column its eventTimeExtractor names."""

    config: RunConfig
    event_time_column: str | None


MAX_YAML_BYTES = 1024**2  # a timeConfig is a few hundred bytes; a pipeline file a few KB
MAX_YAML_NODES = 10_000  # counted with every alias expanded: a 1 KB "billion laughs" file is refused, not built
_SHORT_FORM_KEYS = ("timeConfig", "window", "batches", "preset")


def load_yaml_config(path: str | Path) -> LoadedConfig:
    """Read a VoltSP-style YAML: either a top-level ``timeConfig`` (with optional ``window``,
    ``batches``, ``preset``) or a pipeline's ``emitter: <window-type>: {..., timeConfig: ...}``."""
    try:
        return _config_from_doc(read_yaml(path), path)
    except InputError as exc:
        message = str(exc)
        raise InputError(message if message.startswith(f"{path}:") else f"{path}: {message}") from None


def read_yaml(path: str | Path) -> Any:
    """A YAML document read safely: UTF-8/16/32 by its BOM, at most MAX_YAML_BYTES, and at most MAX_YAML_NODES
    nodes once aliases are expanded (checked on the composed graph, before any object is built)."""
    try:
        with Path(path).open("rb") as handle:
            data = handle.read(MAX_YAML_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"{path}: config file not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory; give the YAML file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the config file ({exc.strerror})") from None
    if len(data) > MAX_YAML_BYTES:
        raise InputError(f"{path}: over {MAX_YAML_BYTES // 1024} KiB; a config file is a few KB")
    loader = None
    try:
        loader = yaml.SafeLoader(data)  # reads the encoding and the first characters: can fail already
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_nodes(node, {}) > MAX_YAML_NODES:
            raise InputError(f"over {MAX_YAML_NODES:,} values once its aliases (*name) are expanded; a config file "
                             "is a few dozen")
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc.__class__.__name__).split())
        raise InputError(f"{path}: not valid YAML{where} ({problem})") from None
    except RecursionError:
        raise InputError(f"{path}: nested too deeply to be a config file") from None
    finally:
        if loader is not None:
            loader.dispose()


def _expanded_nodes(node: yaml.Node, memo: dict[int, int | None]) -> int:
    """How many nodes the document has with every alias expanded (an alias shares its anchor's node object).
    Stops counting past the limit, so a bomb costs no more than the limit; a node inside itself counts as over."""
    key = id(node)
    if key in memo:
        return MAX_YAML_NODES + 1 if memo[key] is None else memo[key]
    memo[key] = None  # being counted: meeting it again means it contains itself
    total = 1
    children = ([c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode)
                else node.value if isinstance(node, yaml.SequenceNode) else [])
    for child in children:
        total += _expanded_nodes(child, memo)
        if total > MAX_YAML_NODES:
            break
    memo[key] = total
    return total


def _mapping(value: Any, what: str) -> dict[str, Any]:
    """A YAML section that must be a mapping (empty when left blank)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{what} must be a mapping of settings, not {type(value).__name__} {str(value)[:40]!r}")
    return value


def _unknown(key: Any, known: Sequence[str], where: str) -> InputError:
    close = difflib.get_close_matches(str(key), known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return InputError(f"unknown {where} setting {str(key)[:40]!r}{hint}; known: {', '.join(sorted(known))}")


def _config_from_doc(doc: Any, path: str | Path) -> LoadedConfig:
    doc = _mapping(doc, "the file")
    if not doc:
        raise InputError("expected a mapping with timeConfig or emitter")
    if "emitter" not in doc:  # the short form has nothing else in it: a misspelt key must not pass unseen
        for key in doc:
            if key not in _SHORT_FORM_KEYS:
                raise _unknown(key, [*_SHORT_FORM_KEYS, "emitter"], "top-level")
    base = preset(str(doc.get("preset", "voltsp")))
    window = base.window
    section: dict[str, Any] = doc
    if "emitter" in doc:
        emitter = _mapping(doc["emitter"], "emitter")
        found = [k for k in emitter if k in _WINDOW_SECTIONS]
        if len(found) != 1:
            raise InputError(f"emitter needs exactly one of {', '.join(_WINDOW_SECTIONS)}")
        section = _mapping(emitter[found[0]], f"emitter.{found[0]}")
        window = _window_from_voltsp(found[0], section, path)
    elif "window" in doc:
        window = WindowSpec.parse(doc["window"])
    time_section = _mapping(section.get("timeConfig"), "timeConfig")
    time, column = _time_from_voltsp(time_section, base.time, path)
    batches = BatchSpec.parse(doc["batches"]) if "batches" in doc else base.batches
    return LoadedConfig(RunConfig(window=window, time=time, batches=batches, preset=base.preset), column)


def _window_from_voltsp(kind_name: str, section: dict[str, Any], path: str | Path) -> WindowSpec:
    kind = _WINDOW_SECTIONS[kind_name]
    try:
        if kind is WindowKind.TUMBLING:
            size = parse_duration(section["windowSpan"])
            return WindowSpec(kind, size=size, slide=size)
        if kind is WindowKind.SLIDING:
            return WindowSpec(kind, size=parse_duration(section["windowSpan"]), slide=parse_duration(section["slide"]))
        return WindowSpec(kind, gap=parse_duration(section["gap"]))
    except KeyError as missing:
        raise InputError(f"{path}: {kind_name} needs {missing.args[0]}") from None


def _time_from_voltsp(section: dict[str, Any], base: TimeConfig, path: str | Path) -> tuple[TimeConfig, str | None]:
    by_word = {spec.yaml: spec for spec in TIME_FIELDS if spec.yaml}
    changes: dict[str, Any] = {}
    column = None
    extractor = section.get("eventTimeExtractor")
    if extractor:
        changes["time_source"] = TimeSource.EVENT
        column = str(extractor).split("::")[-1]
    elif section:
        changes["time_source"] = TimeSource.PROCESSING
    for key, value in section.items():
        if key == "eventTimeExtractor":
            continue
        if key not in by_word:
            raise _unknown(key, ["eventTimeExtractor", *by_word], "timeConfig")
        try:
            changes[by_word[key].name] = by_word[key].parse(value, f"timeConfig.{key}")
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
    try:
        return replace(base, **changes), column
    except InputError as exc:
        raise InputError(f"{path}: timeConfig: {exc}") from None


def time_config_to_voltsp(time: TimeConfig, event_time_column: str = "event_time") -> dict[str, Any]:
    """The inverse of the YAML reader, for export and round-trip tests: every setting that differs from
    VoltSP's defaults, in VoltSP's words."""
    out: dict[str, Any] = {}
    if time.time_source is TimeSource.EVENT:
        out["eventTimeExtractor"] = event_time_column
    defaults = TimeConfig()
    for spec in TIME_FIELDS:
        value = getattr(time, spec.name)
        wanted = spec.name == "strategy" and time.time_source is TimeSource.EVENT
        wanted = wanted or (spec.name == "idle_clock" and time.idle_timeout is not None)
        if spec.yaml and (wanted or value != getattr(defaults, spec.name)):
            words = {v: k for k, v in (spec.voltsp_words or {}).items()}
            out[spec.yaml] = words.get(value) or (value if spec.values is bool else spec.to_text(value))
    return out


def describe(config: RunConfig) -> dict[str, Any]:
    """A flat, JSON-friendly description of a config (for outputs and the UI)."""
    time = {f.name: getattr(config.time, f.name) for f in dataclasses.fields(config.time)}
    return {
        "preset": config.preset,
        "window": str(config.window),
        "batches": str(config.batches) if config.batches else None,
        **{k: (v.value if isinstance(v, Enum) else v) for k, v in time.items()},
    }
