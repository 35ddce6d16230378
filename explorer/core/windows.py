"""Where events go, in the reference engine: the window assigners (fixed windows, sessions that merge), the
lateness rule and late policy, and the windows held in state with their firing and purge queues. The
compiled evaluation has the same parts as functions (``core/compiled/windows.py``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from explorer.config import LatenessRule, LatePolicy, RefusedWhen, TimeConfig, WindowKind, WindowSpec
from explorer.core.result import Status

if TYPE_CHECKING:
    from explorer.core.kstreams_sliding import KafkaSlidingWindows


@dataclass(eq=False)
class Window:
    key: str
    start: int
    end: int
    ids: list[str] = field(default_factory=list)
    revision: int = 0
    fired: bool = False
    alive: bool = True
    late_dirty: bool = False  # a late admission to an emitted window: it re-emits at commit
    # every element it took came after the watermark had passed its end: its first firing is caused by a late
    # element (Beam: a LATE first pane; Flink: EventTimeTrigger.onElement), so it is a LATE_UPDATE, not WATERMARK
    late_only: bool = False
    slot: int = 0
    merged_into: "Window | None" = None
    min_t: int = 2**62  # its earliest event time (Bytewax's live wake-ups: open in the windower once it is released)
    # its updates carry its whole contents, not the record just taken: a Kafka Streams sliding window, whose
    # aggregate is copied from another window or overwritten (core/kstreams_sliding.py)
    whole: bool = False


class Lateness:
    """When is an event late for a window, does allowed lateness still take it, and when is an event refused
    (and where does it go)."""

    def __init__(self, time: TimeConfig):
        self.window_rule = time.lateness_rule is LatenessRule.WINDOW
        self.allowed = time.allowed_lateness
        self.end_inclusive = time.end_inclusive
        self.kept_at_horizon = time.late_kept_at_horizon
        self.refused = Status.SIDE_OUTPUT.value if time.late_policy is LatePolicy.SIDE_OUTPUT else Status.DROPPED.value
        self.every_window = time.refused_when is RefusedWhen.EVERY_WINDOW

    def is_late(self, end: int, t: int, eff: int, closed: bool) -> bool:
        """``window`` rule: its window has closed. ``timestamp`` rule: t is behind the effective watermark (and a
        Storm (start, end] window the watermark has reached was already evaluated)."""
        if self.window_rule:
            return closed
        return t < eff or (self.end_inclusive and end <= eff)

    def within_horizon(self, horizon: int, eff: int) -> bool:
        """The effective watermark has not yet reached a window's end + allowed lateness (Beam: not yet passed
        it): the window may still take late events, so it is kept."""
        return horizon >= eff if self.kept_at_horizon else horizon > eff

    def admits_late(self, end: int, eff: int) -> bool:
        """A closed window takes late events while within its horizon (with no allowed lateness, only Beam's)."""
        return (self.allowed > 0 or self.kept_at_horizon) and self.within_horizon(end + self.allowed, eff)

    def status(self, admission: "Admission") -> str:
        """Refused when a window refused it (with ``every-window``: when no window took it); otherwise late-updated
        if a window took it late, else on time."""
        if admission.refused and not (self.every_window and admission.admitted):
            return self.refused
        return Status.LATE_UPDATED.value if any(late for _, late in admission.admitted) else Status.ON_TIME.value


class WindowStore:
    """The windows held in state, per key, and two lazy heaps per group of windows that share a closing
    watermark: (end, window) to fire, (end + allowed lateness, window) to purge. An entry counts only while
    its window is alive, unfired (to fire) or fired (to purge), and still ends there."""

    def __init__(self, allowed: int, within_horizon: Callable[[int, int], bool], group_of: Callable[[str], str]):
        self.allowed = allowed
        self.within_horizon = within_horizon  # Lateness.within_horizon: a window is kept while it may take one
        self.group_of = group_of  # key → group
        self.by_key: dict[str, dict[int, Window]] = {}
        self.fire_heap: dict[str, list[tuple[int, int, Window]]] = {}  # (end, seq, window)
        self.purge_heap: dict[str, list[tuple[int, int, Window]]] = {}  # (end + allowed, seq, window)
        self.alive_count = 0
        self.counter = 0  # tie-breaker for heaps and session slots (a plain int: plain data in a snapshot)

    def next_seq(self) -> int:
        self.counter += 1
        return self.counter

    def open(self, key: str, start: int, end: int, slot: int) -> Window:
        w = Window(key, start, end, slot=slot)
        self.by_key.setdefault(key, {})[slot] = w
        self.alive_count += 1
        self.push_fire(w)
        return w

    def push_fire(self, w: Window) -> None:
        heapq.heappush(self.fire_heap.setdefault(self.group_of(w.key), []), (w.end, self.next_seq(), w))

    def push_purge(self, w: Window) -> None:
        heapq.heappush(self.purge_heap.setdefault(self.group_of(w.key), []), (w.end + self.allowed, self.next_seq(), w))

    def remove(self, w: Window) -> None:
        w.alive = False
        self.alive_count -= 1
        del self.by_key[w.key][w.slot]

    def ready(self, group: str, eff: int) -> Iterator[Window]:
        """Yield, one at a time, each window of the group whose end the effective watermark has reached. The
        caller fires it before the next is popped: a reopened window has two entries, and fires once."""
        heap = self.fire_heap.get(group)
        while heap and heap[0][0] <= eff:
            end, _, w = heapq.heappop(heap)
            if w.alive and not w.fired and w.end == end:
                yield w

    def first_due(self, group: str) -> int | None:
        """The smallest end among the group's windows waiting to fire (stale entries dropped on the way)."""
        heap = self.fire_heap.get(group, [])
        while heap and not (heap[0][2].alive and not heap[0][2].fired and heap[0][2].end == heap[0][0]):
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def purge(self, group: str, eff: int) -> None:
        """Drop fired windows whose end + allowed lateness the effective watermark has reached (Beam: passed). An
        entry counts only while its window still ends there: a session that grew after it fired has a newer one."""
        heap = self.purge_heap.get(group)
        while heap:
            horizon, _, w = heap[0]
            held = w.alive and w.fired and w.end + self.allowed == horizon
            if held and self.within_horizon(horizon, eff):
                break
            heapq.heappop(heap)
            if held:
                self.remove(w)

    def waiting(self) -> list[Window]:
        return [w for slots in self.by_key.values() for w in slots.values() if not w.fired]


@dataclass(frozen=True)
class Replaced:
    """A session as it was before an event grew it or merged it away (what a tombstone names)."""

    key: str
    start: int
    end: int
    revision: int


@dataclass
class Admission:
    """What admitting one event decided: the (window, late for it) pairs that took it, the (start, end)
    spans that refused it, the sessions it replaced (a session's span changed, or it was merged away), and the
    windows it made without joining them (Kafka Streams' sliding windows: a right window copied from another,
    forwarded whole)."""

    admitted: list[tuple[Window, bool]]
    refused: list[tuple[int, int]]
    replaced: list[Replaced] = field(default_factory=list)
    forwarded: list[Window] = field(default_factory=list)


def fixed_spans(t: int, size: int, slide: int, end_inclusive: bool = False,
                from_zero: bool = False, offset: int = 0) -> Iterator[tuple[int, int]]:
    """The (start, end) of every tumbling or sliding window starting at ``offset`` + k × slide that holds time
    ``t``, latest start first (Spark's TimeWindowing, Flink's and Beam's assigners agree on it, offset included:
    Flink's getWindowStartWithOffset). ``from_zero``: none starting before 0 when the time is ≥ 0, so every event
    keeps a window (Kafka Streams' TimeWindows.windowsFor starts at max(0, t − size + advance))."""
    placed = t - 1 if end_inclusive else t
    start = ((placed - offset) // slide) * slide + offset
    while start > placed - size and not (from_zero and start < 0 <= placed):
        yield start, start + size
        start -= slide


def cumulative_spans(t: int, size: int, step: int, end_inclusive: bool = False,
                     offset: int = 0) -> Iterator[tuple[int, int]]:
    """The (start, end) of every cumulate window that holds time ``t``, earliest end first: they share the start
    s = offset + n × size at or before t and end at each s + k × step past t up to s + size (Flink's
    CumulativeWindowAssigner.assignWindows)."""
    placed = t - 1 if end_inclusive else t
    start = ((placed - offset) // size) * size + offset
    end = ((placed - offset) // step) * step + offset + step
    while end <= start + size:
        yield start, end
        end += step


class FixedWindows:
    """Tumbling and sliding windows starting at offset + k × slide, and cumulate windows (named by their end, as
    several share a start); Storm's are (start, end], modelled as [start, end) one µs on."""

    def __init__(self, spec: WindowSpec, end_inclusive: bool, from_zero: bool, store: WindowStore,
                 lateness: Lateness):
        self.size, self.slide, self.end_inclusive, self.from_zero = spec.size, spec.slide, end_inclusive, from_zero
        self.offset = spec.offset
        self.cumulate = spec.kind is WindowKind.CUMULATE
        self.store, self.lateness = store, lateness

    def spans(self, t: int) -> Iterator[tuple[int, int]]:
        """The event's windows, latest start first (cumulate: earliest end first)."""
        if self.cumulate:
            return cumulative_spans(t, self.size, self.slide, self.end_inclusive, self.offset)
        return fixed_spans(t, self.size, self.slide, self.end_inclusive, self.from_zero, self.offset)

    def admit(self, t: int, key: str, event_id: str, eff: int) -> Admission:
        store, lateness = self.store, self.lateness
        admitted, refused = [], []
        for start, end in self.spans(t):
            slot = end if self.cumulate else start
            w = store.by_key.get(key, {}).get(slot)
            late = lateness.is_late(end, t, eff, end <= eff or (w is not None and w.fired))
            if late:
                if not lateness.admits_late(end, eff):
                    refused.append((start, end))
                    continue
            past = late and end <= eff  # the watermark had passed the window's end when it took the element
            if w is None:
                w = store.open(key, start, end, slot)
                w.late_only = past
            elif not past:
                w.late_only = False
            if w.fired and late:
                w.late_dirty = True
            elif w.fired:  # reopened after an idle flush (timestamp rule only)
                w.fired = False
                store.push_fire(w)
            w.ids.append(event_id)
            w.min_t = min(w.min_t, t)
            admitted.append((w, late))
        return Admission(admitted, refused)


class SessionWindows:
    """An event opens [t, t + gap) and merges with every session of its key it overlaps or touches (Spark), or
    only those it overlaps (``overlap_only``, Beam); with ``strict`` (Bytewax) it joins a session within the gap
    and closes once the watermark is past last + gap, modelled as [first, last + gap + 1 µs) joined only by
    overlap. Touching an emitted session
    counts as landing in a closed window."""

    def __init__(self, spec: WindowSpec, strict: bool, on_merge: bool, overlap_only: bool, store: WindowStore,
                 lateness: Lateness):
        self.gap, self.strict, self.on_merge = spec.gap, strict, on_merge
        self.overlap_only = strict or overlap_only  # Bytewax's modelled spans, Beam's own
        self.store, self.lateness = store, lateness

    def admit(self, t: int, key: str, event_id: str, eff: int) -> Admission:
        store, lateness = self.store, self.lateness
        proto_end = t + self.gap + (1 if self.strict else 0)
        slots = store.by_key.setdefault(key, {})
        if self.overlap_only:
            touching = [w for w in slots.values() if w.start < proto_end and t < w.end]
        else:
            touching = [w for w in slots.values() if w.start <= proto_end and t <= w.end]
        if self.on_merge:  # Flink: the session it would merge into decides
            judged_end = max([proto_end] + [w.end for w in touching])
            closed = judged_end <= eff
        else:
            judged_end = proto_end
            closed = proto_end <= eff or any(w.fired for w in touching)
        late = closed if lateness.window_rule else t < eff
        if late and not lateness.admits_late(judged_end, eff):
            return Admission([], [(t, proto_end)])
        unchanged = len(touching) == 1 and (touching[0].start, touching[0].end) == (t, proto_end)
        replaced = [] if unchanged else [Replaced(key, w.start, w.end, w.revision) for w in touching]
        late_only = all(w.late_only for w in touching)
        if not touching:
            target = store.open(key, t, proto_end, store.next_seq())
        elif len(touching) == 1:
            target = touching[0]  # grow in place: no copy of its events
        else:
            target = self._merge(touching)
        old_end = target.end
        target.start, target.end = min(target.start, t), max(target.end, proto_end)
        target.ids.append(event_id)
        grew = target.end != old_end or len(touching) > 1
        target.late_only = late_only and late and target.end <= eff
        if late and target.fired:  # a late event joined an emitted session: it re-fires as an update
            # (with on_merge, late means the merged session is still behind the watermark)
            target.late_dirty = True
            if grew:
                store.push_purge(target)
        elif target.fired:  # joining a session an idle timeout had flushed (on time by timestamp), or extending an
            # emitted session past the watermark (on_merge): it fires again when the watermark reaches its end
            target.fired = False
            store.push_fire(target)
        elif grew:
            store.push_fire(target)
        return Admission([(target, late)], [], replaced)

    def _merge(self, touching: list[Window]) -> Window:
        """The session holding most events (ties: the one opened first) absorbs the others."""
        touching.sort(key=lambda w: len(w.ids), reverse=True)
        target = touching[0]
        for w in touching[1:]:
            target.ids.extend(w.ids)
            target.start, target.end = min(target.start, w.start), max(target.end, w.end)
            target.revision = max(target.revision, w.revision)
            target.fired = target.fired or w.fired
            w.merged_into = target
            self.store.remove(w)
        return target


def assigner_for(spec: WindowSpec, time: TimeConfig, store: WindowStore,
                 lateness: Lateness) -> FixedWindows | SessionWindows | KafkaSlidingWindows:
    from explorer.core.kstreams_sliding import KafkaSlidingWindows  # (it builds on this module's parts)

    if spec.kind is WindowKind.KSTREAMS_SLIDING:
        return KafkaSlidingWindows(spec, time.bound + time.watermark_delay, store, lateness)
    if spec.kind is WindowKind.SESSION:
        return SessionWindows(spec, time.session_close_strict, time.session_lateness_on_merge,
                              time.session_merge_overlap_only, store, lateness)
    return FixedWindows(spec, time.end_inclusive, time.windows_from_zero, store, lateness)
