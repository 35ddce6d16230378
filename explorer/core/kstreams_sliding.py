"""Kafka Streams' SlidingWindows (``SlidingWindows.ofTimeDifferenceAndGrace(D, grace)``), in the reference engine.

No window exists until records make it: a record at t makes its left window [t − D, t], and its right window
[t + 1, t + 1 + D] once a later record falls within D of it; a record before D (t < D) goes to one window [0, D]
instead of a left window. Kafka builds a new window's aggregate by copying a neighbour's (a right window starts as
the aggregate of the window before it), so which windows exist and what they hold follows the order records came
in, and a window copied from one that expired misses what that one refused. This module is
``KStreamSlidingWindowAggregate`` (apache/kafka, read at 1eb7644349cb), line for line: ``processReverse`` (the
RocksDB and in-memory stores both iterate backwards) and ``processEarly``, with ``createWindows``.

Kafka's times are milliseconds, its windows' ends inclusive. The rules run on each record's millisecond (t // 1 ms,
as Kafka reads a µs timestamp), and a window [s, e] of Kafka's is [s, e + 1 ms) here, so that "end ≤ effective
watermark" refuses exactly what Kafka's "end < stream time − grace" skips (the grace a whole number of ms).

The window store is kept whole (Kafka keeps each window 2·D + grace, longer than any record it takes can reach
back; every window the rules read is there), apart from the windows the state (``WindowStore``) fires and purges:
an expired window is still read, for its aggregate and as existing, and never updated.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right, insort

import numpy as np
import numpy.typing as npt

from explorer.config import RunConfig, TimeSource, WindowKind, WindowSpec
from explorer.config.windows import MILLISECOND
from explorer.core.windows import Admission, Lateness, Window, WindowStore
from explorer.streams import Stream


def refusal(config: RunConfig) -> str | None:
    """Kafka Streams' sliding windows have no triggers: Beam's early firings and Flink's continuous triggers add or
    replace panes of windows that fire by the watermark, which these do not name (refused in one line)."""
    if config.window.kind is not WindowKind.KSTREAMS_SLIDING:
        return None
    t = config.time
    for option, value in (("--early-firings", t.early_firings), ("--continuous-event-time", t.continuous_event_time),
                          ("--continuous-processing-time", t.continuous_processing_time)):
        if value is not None:
            return (f"--window {config.window} (Kafka Streams' SlidingWindows) has no triggers: {option} is Beam's or "
                    "Flink's; Kafka Streams emits on-update, on-batch (its record cache) or on-close")
    return None


def reach(key: npt.NDArray[np.int64], t: npt.NDArray[np.int64], d: int) -> npt.NDArray[np.int64]:
    """Per record, how many records of its key (``key``: integer codes) lie within D + 1 ms of it (itself
    included), for times ``t`` in µs and D = ``d`` ms: a bound on the windows it can join (those starting in
    [t − D, t] belong to a record in [t − D − 1, t + D]). The kernel sizes its tables by it, the budget its run."""
    ms = t // MILLISECOND
    if len(ms) == 0:
        return ms
    low = int(ms.min())
    span = int(ms.max()) - low + 2 * d + 4
    placed = key * span + (ms - low + d + 2)  # one key's records never reach the next's
    ordered = np.sort(placed)
    return (np.searchsorted(ordered, placed + d + 1, side="right")
            - np.searchsorted(ordered, placed - d - 1, side="left")).astype(np.int64)


def joins(stream: Stream, config: RunConfig) -> int | None:
    """The (record, window) pairs a run can make at most under Kafka's sliding windows, which depend on how
    densely each key's records lie, not on the window alone; None for the other windows (``budget`` counts them
    from the window). Cached per D and clock on the stream, so a sweep's delays share it."""
    if config.window.kind is not WindowKind.KSTREAMS_SLIDING:
        return None
    processing = config.time.time_source is TimeSource.PROCESSING
    d = config.window.size // MILLISECOND

    def count() -> int:
        times = stream.events["arrival_time" if processing else "event_time"].to_numpy(dtype=np.int64)
        return int(reach(stream.codes("key")[0], times, d).sum())

    return int(stream.cached(("kstreams-joins", d, processing), count))


class KafkaSlidingWindows:
    """The assigner: per key, every window the rules made (by start, in ms) with its aggregate's timestamp (the
    largest record time it holds, Kafka's ``ValueAndTimestamp``), alive in the state or not."""

    def __init__(self, spec: WindowSpec, grace: int, store: WindowStore, lateness: Lateness):
        self.d = spec.size // MILLISECOND
        self.retention = 2 * self.d + grace // MILLISECOND  # the window store's default: 2·D + grace, in ms
        self.store, self.lateness = store, lateness
        self.expiry: dict[str, list[tuple[int, str]]] = {}  # per group (task): (start, key) of every window held
        self.store_time: dict[str, int] = {}  # per group: the newest window start put (the store's stream time)
        self.starts: dict[str, list[int]] = {}  # per key, the window starts (ms), sorted
        self.made: dict[str, dict[int, tuple[Window, int]]] = {}  # per key: start (ms) → (window, its timestamp)

    def span(self, start: int) -> tuple[int, int]:
        """Kafka's window [start, start + D] (ms) as the explorer holds it: [start, start + D + 1) in µs."""
        return start * MILLISECOND, (start + self.d + 1) * MILLISECOND

    def admit(self, t: int, key: str, event_id: str, eff: int) -> Admission:
        ms = t // MILLISECOND
        admission = Admission([], [])
        if t < 0:  # Kafka's timestamp extractor drops a negative timestamp before any window
            admission.refused.append(self.span(max(ms - self.d, 0)))
            return admission
        # KStreamSlidingWindowAggregate.process: "windowEnd < windowCloseTime": every window the record could be
        # in, [t, t + D] the latest, has closed
        if self._refuses(self.span(ms)[1], t, eff, None):
            admission.refused.append(self.span(ms))
            return admission
        step = _Step(self, key, event_id, ms, t, eff, admission)
        if ms < self.d:
            step.process_early()
        else:
            step.process_reverse()
        self.expire(key)
        return admission

    def _refuses(self, end: int, t: int, eff: int, w: Window | None) -> bool:
        """Kafka skips a window whose end is behind stream time − grace (``updateWindowAndForward``): here, the
        lateness rule refuses it (late and past any allowed lateness). A window the state no longer holds is closed."""
        if w is not None and not w.alive:
            return True
        closed = end <= eff or (w is not None and w.fired)
        late = self.lateness.is_late(end, t, eff, closed)
        return late and not self.lateness.admits_late(end, eff)

    def window(self, key: str, start: int) -> tuple[Window, int]:
        return self.made[key][start]

    def fetch(self, key: str, low: int, high: int) -> list[int]:
        """The key's window starts in [low, high], ascending (``windowStore.fetch(key, key, low, high)``)."""
        starts = self.starts.get(key, [])
        return starts[bisect_left(starts, low):bisect_right(starts, high)]

    def put(self, key: str, start: int, ids: list[str], stamp: int, late: bool, eff: int) -> Window:
        """``windowStore.put``: a new window with its aggregate's records and timestamp, or, at a start the key
        holds, the window's aggregate overwritten (a record's left window where its previous record's right window
        was just made)."""
        made = self.made.setdefault(key, {})
        if start in made:
            w = made[start][0]
            w.ids = ids
        else:
            lo, hi = self.span(start)
            w = self.store.open(key, lo, hi, lo)
            w.ids, w.whole = ids, True
            w.late_only = late and hi <= eff
            insort(self.starts.setdefault(key, []), start)
            group = self.store.group_of(key)
            heapq.heappush(self.expiry.setdefault(group, []), (start, key))
            self.store_time[group] = max(self.store_time.get(group, start), start)
        made[start] = (w, stamp)
        return w

    def out_of_retention(self, key: str, start: int) -> bool:
        """A start the store no longer keeps (the in-memory store skips such a put): only a what-if's allowed
        lateness reaches one, as Kafka creates no window that has closed."""
        group = self.store.group_of(key)
        return group in self.store_time and start <= self.store_time[group] - self.retention

    def expire(self, key: str) -> None:
        """The window store keeps a window while its start is within the retention of the newest start put in it
        (per task: the key's partition); an older one is no longer read, and one not yet emitted never is (Kafka's
        store drops it before stream time closes it, when stream time jumps by more than 2·D at once)."""
        group = self.store.group_of(key)
        heap = self.expiry.get(group, [])
        while heap and heap[0][0] <= self.store_time[group] - self.retention:
            start, owner = heapq.heappop(heap)
            w = self.made[owner].pop(start)[0]
            starts = self.starts[owner]
            del starts[bisect_left(starts, start)]
            if w.alive and not w.fired:
                self.store.remove(w)


class _Step:
    """One record's processing: the windows it updates or creates, written into ``admission``."""

    def __init__(self, windows: KafkaSlidingWindows, key: str, event_id: str, ms: int, t: int, eff: int,
                 admission: Admission):
        self.w, self.key, self.event_id, self.ms, self.t, self.eff = windows, key, event_id, ms, t, eff
        self.admission = admission
        self.start_times: set[int] = set()

    # --- updateWindowAndForward -----------------------------------------------------------------------
    def update(self, start: int) -> None:
        """Add the record to an existing window, unless the window has closed."""
        w, stamp = self.w.window(self.key, start)
        if self._refused(start, w):
            return
        late = self._late(w.end, w)
        if w.fired:
            self._refire(w, late)
        if not (late and w.end <= self.eff):
            w.late_only = False
        w.ids.append(self.event_id)
        self.w.made[self.key][start] = (w, max(stamp, self.ms))
        self.admission.admitted.append((w, late))

    def create(self, start: int, base: list[str]) -> None:
        """A window holding ``base`` (a copied aggregate, or nothing) and the record, unless it has closed; at a
        start the key holds, Kafka's put overwrites that window's aggregate."""
        held = self.w.made.get(self.key, {}).get(start)
        w = held[0] if held else None
        if self._refused(start, w) or (w is None and self._dropped_by_store(start)):
            return
        late = self._late(self.w.span(start)[1], w)
        if w is not None and w.fired:
            self._refire(w, late)
        w = self.w.put(self.key, start, [*base, self.event_id], self.ms, late, self.eff)
        self.admission.admitted.append((w, late))

    def _refire(self, w: Window, late: bool) -> None:
        """A closed window a record still changes (allowed lateness) re-emits at commit; one an idle flush closed
        (timestamp rule) waits for the watermark again."""
        if late:
            w.late_dirty = True
        else:
            w.fired = False
            self.w.store.push_fire(w)

    def _dropped_by_store(self, start: int) -> bool:
        if self.w.out_of_retention(self.key, start):
            self.admission.refused.append(self.w.span(start))
            return True
        return False

    def _refused(self, start: int, w: Window | None) -> bool:
        if self.w._refuses(self.w.span(start)[1], self.t, self.eff, w):
            self.admission.refused.append(self.w.span(start))
            return True
        return False

    def _late(self, end: int, w: Window | None) -> bool:
        return self.w.lateness.is_late(end, self.t, self.eff, end <= self.eff or (w is not None and w.fired))

    def create_right(self, aggregate: tuple[list[str], int]) -> None:
        """createCurrentRecordRightWindow: [t + 1, t + 1 + D] holding the aggregate found (not the record), put
        without a close check (it ends after the record's own latest window, which is open)."""
        ids, stamp = aggregate
        if self.w.out_of_retention(self.key, self.ms + 1):
            return
        w = self.w.put(self.key, self.ms + 1, list(ids), stamp, False, self.eff)
        self.admission.forwarded.append(w)

    def aggregate(self, start: int) -> tuple[list[str], int]:
        """A window's value as read before this record changes it (Kafka holds the old ValueAndTimestamp)."""
        w, stamp = self.w.window(self.key, start)
        return list(w.ids), stamp

    # --- processReverse ------------------------------------------------------------------------------
    def process_reverse(self) -> None:
        d, ms = self.w.d, self.ms
        left_agg: tuple[list[str], int] | None = None
        right_agg: tuple[list[str], int] | None = None
        left_made = right_made = False
        previous: int | None = None
        for start in reversed(self.w.fetch(self.key, max(0, ms - 2 * d), ms + 1)):
            self.start_times.add(start)
            end = start + d
            stamp = self.w.window(self.key, start)[1]
            if start == ms + 1:
                right_made = True
            elif end > ms:
                if right_agg is None:
                    right_agg = self.aggregate(start)
                self.update(start)
            elif end == ms:
                left_made = True
                self.update(start)
                if stamp < ms:
                    previous = stamp
                else:
                    return
            else:
                left_agg = self.aggregate(start)
                previous = stamp
                break
        self.create_windows(left_agg, right_agg, left_made, right_made, previous)

    def create_windows(self, left_agg: tuple[list[str], int] | None, right_agg: tuple[list[str], int] | None,
                       left_made: bool, right_made: bool, previous: int | None) -> None:
        d, ms = self.w.d, self.ms
        if previous is not None and previous + 1 not in self.start_times and previous + 1 + d >= ms:
            self.create(previous + 1, [])  # createPreviousRecordRightWindow
        if not left_made:
            not_empty = previous is not None and ms - d <= previous and left_agg is not None
            self.create(ms - d, left_agg[0] if not_empty and left_agg is not None else [])
        if not right_made and right_agg is not None and right_agg[1] > ms:
            self.create_right(right_agg)

    # --- processEarly: a record before D ------------------------------------------------------------------
    def process_early(self) -> None:
        ms = self.ms
        combined: tuple[list[str], int] | None = None  # [0, D], which holds every early record
        right_agg: tuple[list[str], int] | None = None
        right_made = False
        previous: int | None = None
        for start in self.w.fetch(self.key, 0, ms + 1):
            self.start_times.add(start)
            stamp = self.w.window(self.key, start)[1]
            if start == 0:
                combined = self.aggregate(start)
                if stamp < ms:
                    previous = stamp
            elif start <= ms:
                right_agg = self.aggregate(start)
                self.update(start)
            else:  # start == ms + 1
                right_made = True
        if right_agg is None and combined is not None and combined[1] > ms:
            right_agg = combined
        if not right_made and right_agg is not None and right_agg[1] > ms:
            self.create_right(right_agg)
        if previous is not None and previous + 1 not in self.start_times:
            self.create(previous + 1, [])
        if combined is None:
            self.create(0, [])
        else:
            self.update(0)
