"""Every TimeConfig field, everywhere it surfaces: its CLI option, its word in VoltSP's YAML, the explorer control
that shows it, the values it takes and the message that refuses a wrong one.

A module of its own because one table (``TIME_FIELDS``) serves the CLI's flags, compare's ``preset:option=value``,
the YAML reader and writer, the UI's controls and TimeConfig's own checks: a field is added here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from explorer.config import (MAX_DURATION, Emit, LatenessRule, LatePolicy, Panes, RefusedWhen, Schedule, Scope,
                             Strategy, TimeSource)
from explorer.errors import InputError
from explorer.timeutil import format_duration, parse_duration

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
    # the window kinds it can change anything for
    windows: tuple[str, ...] = ("tumbling", "sliding", "session", "cumulate", "kstreams-sliding")

    @property
    def label(self) -> str:
        return f"--{self.option.replace('_', '-')}" + (f" ({self.yaml})" if self.yaml else "")

    @property
    def choices(self) -> list[str]:
        if self.values is not None and issubclass(self.values, Enum):
            return [v.value for v in self.values]
        return ["true", "false"] if self.values is bool else []

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
        return str(value.value)


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
              "refusedWhen", windows=("sliding", "cumulate", "kstreams-sliding")),
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
              windows=("tumbling", "sliding", "cumulate")),
    TimeField("session_close_strict", "session_close_strict", "sessions join within the gap and close once the "
              "watermark is past last + gap, as Bytewax's", bool, "sessionCloseStrict", windows=("session",)),
    TimeField("session_lateness_on_merge", "session_lateness_on_merge", "sessions: judge lateness on the session "
              "an event merges into, and fire an emitted session it extends only when the watermark reaches the new "
              "end, as Flink's", bool, "sessionLatenessOnMerge", windows=("session",)),
    TimeField("session_merge_overlap_only", "session_merge_overlap_only", "sessions merge only when they overlap, "
              "not when one ends where the next starts, as Beam's", bool, "sessionMergeOverlapOnly",
              windows=("session",)),
    TimeField("session_state_kept", "session_state_kept", "sessions: a fired session is never dropped (no cleanup "
              "at end + allowed lateness), so an event whose own session has not expired merges into an overlapping "
              "one however old, and it fires again at once, as Beam's Python DirectRunner (Beam's Java runners and "
              "Dataflow drop it)", bool, "sessionStateKept", windows=("session",)),
    TimeField("forget_clock_when_empty", "forget_clock_when_empty", "per-key watermarks, tumbling and sliding: a "
              "key's watermark is forgotten once all its windows have fired, so its next event starts afresh, as "
              "Bytewax discards the key's state", bool, "forgetClockWhenEmpty",
              windows=("tumbling", "sliding", "cumulate")),
    TimeField("bytewax_live_wakeups", "bytewax_live_wakeups", "per-key event clock, tumbling and sliding: a key is "
              "woken to close windows only when processing time reaches the end of its first window holding a "
              "released item or the timestamp of its first held-back item, as a live Bytewax dataflow on the system "
              "clock (off: every due key is woken as its watermark reaches an end)", bool, "bytewaxLiveWakeups",
              windows=("tumbling", "sliding", "cumulate")),
    TimeField("windows_from_zero", "windows_from_zero", "sliding windows start at 0 or later: an event at t ≥ 0 "
              "is in no window that starts before 0, as Kafka Streams creates none", bool, "windowsFromZero",
              windows=("sliding",)),
    TimeField("late_kept_at_horizon", "late_kept_at_horizon", "a closed window still takes late events while the "
              "effective watermark is exactly at end + allowed lateness (even 0), and drops them once it is past, "
              "as Beam's", bool, "lateKeptAtHorizon"),
    TimeField("late_fires_per_element", "late_fires_per_element", "a window that takes an element after the "
              "watermark passed its end fires at once, once per element, not once when its batch commits, as "
              "Flink's EventTimeTrigger", bool, "lateFiresPerElement"),
    TimeField("source_idle_timeout", "source_idle_timeout", "Flink's withIdleness: a partition with no record "
              "for more than this, counted from the first periodic emit without one, leaves the partition-min/max "
              "merge at an emit until the emit after its next record (off: never)", yaml="sourceIdleTimeout",
              control="source_idle", optional=True, positive=True),
    TimeField("watermark_unit", "watermark_unit", "the watermark is kept in whole units of this: the event times "
              "that move it and the delay are truncated toward zero to it (Spark: 1ms; default 1us, exact)",
              yaml="watermarkUnit", positive=True),
    TimeField("emit", "emit", "on-close: a window is emitted when the watermark closes it; on-update: every record "
              "it takes emits its new result at once, and its close emits nothing (Kafka Streams with its record cache "
              "off); on-batch: those updates coalesced per batch, each window a batch changed emitted once at its "
              "commit with its result after it (Spark's update output mode; Kafka Streams' record cache per commit "
              "interval, its default)", Emit,
              "emit"),
    TimeField("panes", "panes", "what a window's later emissions carry: the whole window (accumulating) or only the "
              "events since its previous one (discarding, Beam's discardingFiredPanes)", Panes, "panes"),
    TimeField("commit_interval", "commit_interval", "with --emit on-batch: coalesce the updates per this much "
              "arrival time, flushed at each multiple of it, not per batch (Kafka Streams' record cache, flushed "
              "every commit.interval.ms, 30s by default; off: per batch)", yaml="commitInterval", optional=True,
              positive=True),
    TimeField("early_firings", "early_firings", "Beam's early firings (withEarlyFirings(AfterProcessingTime"
              ".pastFirstElementInPane().plusDelayOf(T))): a pane's first element arriving at processing time p fires "
              "an EARLY pane at p + T, until the watermark fires the window (off: none; tumbling, sliding and cumulate "
              "windows, emit on-close)", yaml="earlyFirings", optional=True, positive=True,
              windows=("tumbling", "sliding", "cumulate")),
    TimeField("early_aligned_to", "early_aligned_to", "Beam's aligned early firings (AfterProcessingTime"
              ".pastFirstElementInPane().alignedTo(T, O), T the --early-firings): a pane's first element at processing "
              "time p fires an EARLY pane at the first O + k·T after p (at p itself when p is one; by Java's "
              "arithmetic, from a p before O the second), every window at the same instants (off: plusDelayOf(T))",
              yaml="earlyAlignedTo", optional=True, windows=("tumbling", "sliding", "cumulate")),
    TimeField("continuous_event_time", "continuous_event_time", "Flink's ContinuousEventTimeTrigger.of(I): a window "
              "also fires, keeping its contents, at each multiple of I of event time its watermark passes, from the "
              "first after its first element's timestamp, whether or not elements arrived since, then at its end "
              "(off: EventTimeTrigger; tumbling, sliding and cumulate windows, emit on-close)",
              yaml="continuousEventTime", optional=True, positive=True, windows=("tumbling", "sliding", "cumulate")),
    TimeField("continuous_processing_time", "continuous_processing_time", "Flink's ContinuousProcessingTimeTrigger.of(I): "
              "a window fires, keeping its contents, at every I of processing (arrival) time from the first multiple "
              "after its first element's, whether or not elements arrived since, until maxTimestamp; never by the "
              "watermark, which only purges it at maxTimestamp + allowed lateness (off: EventTimeTrigger; tumbling, "
              "sliding and cumulate windows, emit on-close)",
              yaml="continuousProcessingTime", optional=True, positive=True, windows=("tumbling", "sliding", "cumulate")),
)
FIELD_BY_OPTION = {spec.option: spec for spec in TIME_FIELDS}


@dataclass(frozen=True)
class EngineWords:
    """An engine's own option for a field, in the words its users write: Spark's ``outputMode("update")`` is
    ``--output-mode update``, which sets ``--emit on-batch``. The field stays one (every engine's emission is
    ``emit``); this is another way to write it, for the CLI and compare's ``spark:output_mode=update``."""

    option: str
    field: str
    help: str
    words: dict[str, Any]

    def parse(self, value: Any) -> Any:
        try:
            return self.words[str(value).strip().lower()]
        except KeyError:
            raise InputError(f"--{self.option.replace('_', '-')} must be one of {', '.join(self.words)}, "
                             f"not {value!r}") from None


ENGINE_WORDS: dict[str, EngineWords] = {w.option: w for w in (
    EngineWords("output_mode", "emit", "Spark's outputMode: append (a window once, when the watermark passes its "
                "end: --emit on-close) or update (every micro-batch, each window it changed: --emit on-batch)",
                {"append": Emit.ON_CLOSE, "update": Emit.ON_BATCH}),
)}


def time_option(option: str, text: Any) -> tuple[str, Any]:
    """A named option's value as (TimeConfig field, value): ('strategy', 'max') → ('strategy', Strategy.MAX);
    an engine's own word too: ('output_mode', 'update') → ('emit', Emit.ON_BATCH)."""
    if option in ENGINE_WORDS:
        words = ENGINE_WORDS[option]
        return words.field, words.parse(text)
    spec = FIELD_BY_OPTION[option]
    return spec.name, spec.parse(text)
