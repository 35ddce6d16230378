"""Where an event goes: the window kinds and their spec, read from what users type (``tumbling:1m+30s``).

Split from the model's package so each of the two has one job; ``explorer.config.WindowSpec`` is still its name
everywhere (the package imports it back), and a saved engine state names it by this module (``core.snapshot``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from explorer.errors import InputError
from explorer.timeutil import format_duration, parse_duration

MAX_DURATION = 100 * 365 * 86_400 * 1_000_000  # a century: past any real setting, far from int64's limit
MAX_WINDOWS_PER_EVENT = 1_000
MILLISECOND = 1_000  # Kafka Streams' time unit, in µs  # sliding size / slide: each event is held once per window it falls in


class WindowKind(str, Enum):
    TUMBLING = "tumbling"
    SLIDING = "sliding"
    SESSION = "session"
    # Flink SQL's CUMULATE(TABLE t, DESCRIPTOR(ts), step, size [, offset]): windows [s, s + k × step), k = 1 …
    # size / step, that share the start s = offset + n × size; ``slide`` holds the step
    CUMULATE = "cumulate"
    # Kafka Streams' SlidingWindows.ofTimeDifferenceAndGrace(D, grace): windows made by records' time differences
    # (a record's [t − D, t], and [t + 1, t + 1 + D] once a later one falls within D), in Kafka's milliseconds: a
    # window [s, e] of Kafka's (both ends inclusive) is [s, e + 1 ms) here. ``size`` holds D (core/kstreams_sliding.py)
    KSTREAMS_SLIDING = "kstreams-sliding"


@dataclass(frozen=True)
class WindowSpec:
    """Where an event goes: tumbling(size), sliding(size, slide), session(gap), cumulate(size, step) or Kafka Streams'
    record-driven sliding windows (kstreams-sliding(D), ``size`` = ``slide`` = D, no offset). Tumbling and
    sliding windows start at ``offset`` + k × slide (Flink's window offset, Spark's startTime, Beam's withOffset): 0
    aligns them to the epoch (or the stream's zero), 1h aligns daily windows to 01:00 UTC. Cumulate windows start at
    ``offset`` + k × size and end at ``offset`` + m × step (the step is kept in ``slide``)."""

    kind: WindowKind
    size: int = 0
    slide: int = 0
    gap: int = 0
    # in [0, slide) (cumulate: [0, size)): an offset of a whole period or more, or a negative one, names the same
    # windows
    offset: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.kind, WindowKind):
            raise InputError(f"window kind must be one of {', '.join(k.value for k in WindowKind)}, not {self.kind!r}")
        spans = [self.gap] if self.kind is WindowKind.SESSION else [self.size, self.slide]
        if any(isinstance(v, bool) or not isinstance(v, int) or not 0 < v <= MAX_DURATION for v in spans):
            raise InputError(f"window {self.kind.value}: sizes, slides and gaps must be positive durations up to 100 "
                             f"years (got {', '.join(map(str, spans))} µs)")
        if self.kind in (WindowKind.TUMBLING, WindowKind.KSTREAMS_SLIDING) and self.slide != self.size:
            raise InputError(f"a {self.kind.value} window has no slide of its own (its slide is its size)")
        if self.kind is WindowKind.KSTREAMS_SLIDING and (self.size % MILLISECOND or self.offset):
            raise InputError(f"window kstreams-sliding:{format_duration(self.size)}: Kafka Streams' time difference is "
                             "a whole number of milliseconds, with no offset")
        if self.kind is WindowKind.CUMULATE and self.size % self.slide:
            raise InputError(f"window cumulate: the size ({format_duration(self.size)}) must be a whole number of "
                             f"steps ({format_duration(self.slide)}), as Flink's CUMULATE requires")
        if self.kind in (WindowKind.SLIDING, WindowKind.CUMULATE) and -(-self.size // self.slide) > MAX_WINDOWS_PER_EVENT:
            raise InputError(f"window {self.kind.value}:{format_duration(self.size)}:{format_duration(self.slide)} puts every "
                             f"event in {-(-self.size // self.slide):,} windows; at most {MAX_WINDOWS_PER_EVENT:,} "
                             "are allowed (use a longer slide)")
        if isinstance(self.offset, bool) or not isinstance(self.offset, int):
            raise InputError(f"a window offset is a duration, not {self.offset!r}")
        if self.kind in (WindowKind.SESSION, WindowKind.KSTREAMS_SLIDING) and self.offset:
            raise InputError("a session window has no offset: it starts at its first event")
        period = self.size if self.kind is WindowKind.CUMULATE else self.slide
        if self.kind not in (WindowKind.SESSION, WindowKind.KSTREAMS_SLIDING) and not 0 <= self.offset < period:
            object.__setattr__(self, "offset", self.offset % period)  # the same windows, named one way

    @staticmethod
    def parse(text: str) -> "WindowSpec":
        """Read ``tumbling:10``, ``sliding:20:10``, ``session:30``, ``cumulate:1h:15m`` (size, then step) or
        ``kstreams-sliding:5m`` (Kafka Streams' time difference; durations as in --delay), and an offset after ``+``
        but for sessions and kstreams-sliding: ``tumbling:1d+1h``, ``sliding:1h:15m+5m``."""
        body, plus, offset_text = str(text).partition("+")
        parts = body.split(":")
        try:
            kind = WindowKind(parts[0].strip().lower())
        except ValueError:
            raise InputError(f"unknown window {text!r}: use tumbling:SIZE, sliding:SIZE:SLIDE, session:GAP, "
                             "cumulate:SIZE:STEP or kstreams-sliding:D (an offset after +: tumbling:1d+1h)") from None
        expected = {WindowKind.TUMBLING: 2, WindowKind.SLIDING: 3, WindowKind.SESSION: 2, WindowKind.CUMULATE: 3,
                    WindowKind.KSTREAMS_SLIDING: 2}[kind]
        if len(parts) != expected:
            raise InputError(f"window {text!r} needs {expected - 1} duration(s) after '{kind.value}:'")
        values = [parse_duration(p) for p in parts[1:]]
        offset = 0
        if plus:
            if kind is WindowKind.SESSION:
                raise InputError(f"window {text!r}: a session window has no offset (it starts at its first event)")
            if kind is WindowKind.KSTREAMS_SLIDING:
                raise InputError(f"window {text!r}: Kafka Streams' sliding windows have no offset (records make them)")
            offset = parse_duration(offset_text)
        if kind in (WindowKind.TUMBLING, WindowKind.KSTREAMS_SLIDING):
            return WindowSpec(kind, size=values[0], slide=values[0], offset=offset)
        if kind in (WindowKind.SLIDING, WindowKind.CUMULATE):
            return WindowSpec(kind, size=values[0], slide=values[1], offset=offset)
        return WindowSpec(kind, gap=values[0])

    def __str__(self) -> str:
        at = f"+{format_duration(self.offset)}" if self.offset else ""
        if self.kind is WindowKind.TUMBLING:
            return f"tumbling:{format_duration(self.size)}{at}"
        if self.kind is WindowKind.KSTREAMS_SLIDING:
            return f"kstreams-sliding:{format_duration(self.size)}"
        if self.kind in (WindowKind.SLIDING, WindowKind.CUMULATE):
            return f"{self.kind.value}:{format_duration(self.size)}:{format_duration(self.slide)}{at}"
        return f"session:{format_duration(self.gap)}"
