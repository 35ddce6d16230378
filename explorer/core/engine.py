"""The reference engine: one pass over the micro-batches, exactly as the rules are written.

Per batch:
  1. pipeline heartbeats that fall before the batch (the processing clock moves, idle keys flush);
  2. each event is checked against the effective watermark *before* the batch (BOUNDED moves it per
     element first, as 003's code does), then admitted to its window(s) or refused;
  3. at commit MIN/MAX move the raw watermark to the batch's smallest/largest event time (never back);
  4. late updates re-emit their window, windows whose end ≤ effective watermark fire, idle keys flush,
     windows past end + allowed lateness leave the state.
After the last batch the stream falls silent: heartbeats keep the processing clock going until nothing
more can fire; whatever is still open is reported as END_OF_STREAM.

The engine is deliberately a plain loop: it is the specification that faster runners (the vectorised
curve, Spark) are tested against. It is driven one batch at a time (:meth:`Engine.step`, then
:meth:`Engine.finish`) and holds no reference to the stream, so its whole state pickles: the Spark runner
keeps it in Spark's state store between micro-batches.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from explorer.config import LatenessRule, LatePolicy, RunConfig, Schedule, Scope, Strategy, TimeSource, WindowKind
from explorer.core.result import Reason, Status

NONE = -(2**62)  # "no watermark yet": below every real time, so comparisons need no special case
GLOBAL = "*"


def effective_watermark(raw: int, delay: int) -> int:
    """raw − delayWindowClose; the delay never pulls it below time 0 (000's scenario 2 shows 0 s
    for 2 s − 5 s, and Spark floors its watermark at 0 too)."""
    if raw == NONE:
        return NONE
    return max(raw - delay, 0) if raw >= 0 else raw - delay


@dataclass(eq=False)
class _Window:
    key: str
    start: int
    end: int
    ids: list[str] = field(default_factory=list)
    revision: int = 0
    fired: bool = False
    alive: bool = True
    late_dirty: bool = False
    slot: int = 0
    merged_into: "_Window | None" = None

    def final(self) -> "_Window":
        """Sessions merge; an event's window is wherever its session ended up."""
        w = self
        while w.merged_into is not None:
            w = w.merged_into
        return w


@dataclass
class BatchRows:
    """One arrival batch, in arrival order. ``rows`` are the events' row numbers in the whole stream."""

    number: int
    commit: int
    rows: np.ndarray
    ids: list[str]
    keys: list[str]
    partitions: list[str]
    event_time: np.ndarray
    arrival_time: np.ndarray


@dataclass
class StepOutput:
    """What one step added. Session assignments carry start = end = None: a session's final span is only
    known later, and :func:`explorer.core.assemble.resolve_sessions` reads it off the emissions."""

    events: list[tuple] = field(default_factory=list)  # (row, status, raw watermark seen)
    assignments: list[tuple] = field(default_factory=list)  # (row, start, end, late, admitted)
    emissions: list[tuple] = field(default_factory=list)  # WINDOW_COLUMNS
    trace: list[tuple] = field(default_factory=list)  # WATERMARK_COLUMNS
    open_windows: int | None = None  # windows in state after the batch (for "most windows open")


def separable_by_key(config: RunConfig) -> bool:
    """Whether keys never influence each other, so each key's state can live (and run) apart: one
    watermark per key on event time, no idle timeout (its heap and heartbeats span keys) and the live
    schedule (a backlog applies every key's pending watermark at every batch, touched or not)."""
    time = config.time
    return (time.scope is Scope.KEY and time.time_source is TimeSource.EVENT and time.idle_timeout is None
            and time.schedule is Schedule.LIVE and time.strategy is not Strategy.EVENT_CLOCK
            and time.source_idle_timeout is None)


class Engine:
    """The semantic state of one run (or of one key, when :func:`separable_by_key`)."""

    def __init__(self, config: RunConfig, partitions: list[str]):
        self.config = config
        self.time = config.time
        self.spec = config.window
        self.processing = self.time.time_source is TimeSource.PROCESSING
        scope = self.time.scope
        self.merged = scope in (Scope.PARTITION_MIN, Scope.PARTITION_MAX) and not self.processing
        self.all_partitions = sorted(partitions) if self.merged else []
        self.per_key_groups = scope is Scope.KEY and not self.processing
        self.raw: dict[str, int] = {}  # raw watermark per source (key, partition or GLOBAL)
        self.event_clock = self.time.strategy is Strategy.EVENT_CLOCK and not self.processing
        self.raw_set_at: dict[str, int] = {}  # event clock: processing time when each source's raw was set
        self.now = NONE  # event clock: the processing time the watermark is read at
        self.idle_partitions: set[str] = set()  # withIdleness: partitions left out of the merge
        self.partition_seen: dict[str, int] = {}  # withIdleness: last arrival per partition
        self.merged_floor = NONE  # withIdleness: the merged watermark so far (it never goes back)
        self.started = NONE  # first arrival: when silent partitions start counting
        self.max_seen: dict[str, int] = {}  # per group, for 003's event-time latency
        self.clock = NONE  # processing clock: last commit or heartbeat
        self.global_max_et = NONE
        self.key_windows: dict[str, dict[int, _Window]] = {}
        self.fire_heap: dict[str, list] = {}  # group -> heap of (end, seq, window)
        self.purge_heap: dict[str, list] = {}  # group -> heap of (end + allowed lateness, seq, window)
        self.idle_heap: list = []  # (deadline, key)
        self.idle_deadline: dict[str, int] = {}
        self.key_last_et: dict[str, int] = {}
        self.counter = 0  # tie-breaker for heaps and session slots (a plain int pickles everywhere)
        self.alive_count = 0
        self.pending: dict[str, int] = {}  # backlog: the last batch's candidates, applied one batch later
        self.out = StepOutput()
        self.batch_no = 0

    def next_seq(self) -> int:
        self.counter += 1
        return self.counter

    def source_of(self, key: str, partition: str) -> str:
        if self.processing or self.time.scope is Scope.GLOBAL:
            return GLOBAL
        return partition if self.merged else key

    # --- watermarks -------------------------------------------------------------------------------
    def group_of(self, key: str) -> str:
        return key if self.per_key_groups else GLOBAL

    def raw_of_group(self, group: str) -> int:
        if self.processing:
            return self.clock
        if self.merged:
            marks = [self.source_raw(p) for p in self.all_partitions if p not in self.idle_partitions]
            if self.time.source_idle_timeout is None:
                return min(marks) if self.time.scope is Scope.PARTITION_MIN else max(marks)
            if marks:  # idle partitions are left out, and what was merged is never taken back
                merged = min(marks) if self.time.scope is Scope.PARTITION_MIN else max(marks)
                self.merged_floor = max(self.merged_floor, merged)
            return self.merged_floor
        return self.source_raw(group)

    def mark_idle_partitions(self, now: int) -> None:
        """withIdleness: partitions whose last record (or the start, if none yet) is older than the timeout."""
        timeout = self.time.source_idle_timeout
        if timeout is None or not self.merged:
            return
        self.idle_partitions = {p for p in self.all_partitions
                                if self.partition_seen.get(p, self.started) + timeout <= now}

    def source_raw(self, source: str) -> int:
        """A source's raw watermark now; the event clock's keeps moving with processing time."""
        raw = self.raw.get(source, NONE)
        if self.event_clock and raw != NONE:
            return raw + (self.now - self.raw_set_at[source])
        return raw

    def effective(self, raw: int) -> int:
        return effective_watermark(raw, self.time.delay)

    def advance(self, candidates: dict[str, int]) -> None:
        """Move raw watermarks forward to the candidates (never back)."""
        for source, value in candidates.items():
            if value > self.raw.get(source, NONE):
                self.raw[source] = value

    # --- windows ----------------------------------------------------------------------------------
    def new_window(self, key: str, start: int, end: int, slot: int) -> _Window:
        w = _Window(key, start, end, slot=slot)
        self.key_windows.setdefault(key, {})[slot] = w
        self.alive_count += 1
        self.push_fire(w)
        return w

    def push_fire(self, w: _Window) -> None:
        heapq.heappush(self.fire_heap.setdefault(self.group_of(w.key), []), (w.end, self.next_seq(), w))

    def remove(self, w: _Window) -> None:
        w.alive = False
        self.alive_count -= 1
        del self.key_windows[w.key][w.slot]

    def emit(self, w: _Window, reason: Reason, at: int, group_raw: int) -> None:
        w.revision += 1
        max_seen = self.max_seen.get(self.group_of(w.key), NONE)
        self.out.emissions.append((w.key, w.start, w.end, len(w.ids), tuple(w.ids), self.batch_no, at,
                               group_raw, self.effective(group_raw), reason.value, w.revision,
                               max_seen - w.end if max_seen != NONE else None, at - w.end))

    def fire(self, w: _Window, reason: Reason, at: int, group_raw: int) -> None:
        w.fired = True
        self.emit(w, reason, at, group_raw)
        self.push_purge(w)

    def push_purge(self, w: _Window) -> None:
        heap = self.purge_heap.setdefault(self.group_of(w.key), [])
        heapq.heappush(heap, (w.end + self.time.allowed_lateness, self.next_seq(), w))

    # --- one event --------------------------------------------------------------------------------
    def admit(self, t: int, key: str, event_id: str, eff: int) -> tuple[list[tuple[_Window, bool]],
                                                                        list[tuple[int, int]], bool]:
        """Returns ((window admitted to, was late for it) pairs, windows refused, was late for any window)."""
        rule_window = self.time.lateness_rule is LatenessRule.WINDOW
        allowed = self.time.allowed_lateness
        ts_late = t < eff
        admitted, refused, late_any = [], [], False
        if self.spec.kind is WindowKind.SESSION:
            return self.admit_session(t, key, event_id, eff)
        slots = self.key_windows.get(key, {})
        end_inclusive = self.time.end_inclusive
        placed = t - 1 if end_inclusive else t  # (start, end] as [start, end) one µs on
        start = (placed // self.spec.slide) * self.spec.slide
        while start > placed - self.spec.size:
            end = start + self.spec.size
            w = slots.get(start)
            closed = end <= eff or (w is not None and w.fired)
            # (end − length, end] windows: a tuple exactly at the watermark is not behind it, yet its window
            # has been evaluated; Storm never evaluates that window again, so it is refused, not lost
            late = closed if rule_window else (ts_late or (end_inclusive and end <= eff))
            if not late:
                if w is None:
                    w = self.new_window(key, start, end, start)
                    slots = self.key_windows[key]
                elif w.fired:  # reopened after an idle flush (timestamp rule only)
                    w.fired = False
                    self.push_fire(w)
                w.ids.append(event_id)
                admitted.append((w, False))
            else:
                late_any = True
                if allowed > 0 and end + allowed > eff:
                    if w is None:
                        w = self.new_window(key, start, end, start)
                        slots = self.key_windows[key]
                    elif w.fired:
                        w.late_dirty = True
                    w.ids.append(event_id)
                    admitted.append((w, True))
                else:
                    refused.append((start, end))
            start -= self.spec.slide
        return admitted, refused, late_any

    def admit_session(self, t: int, key: str, event_id: str, eff: int) -> tuple[list[tuple[_Window, bool]],
                                                                         list[tuple[int, int]], bool]:
        """An event opens the session [t, t + gap) and merges with every session it overlaps or touches.
        Touching an emitted (closed) session counts as landing in a closed window, like tumbling windows."""
        gap, allowed = self.spec.gap, self.time.allowed_lateness
        strict = self.time.session_close_strict
        proto_end = t + gap + (1 if strict else 0)
        slots = self.key_windows.setdefault(key, {})
        if strict:  # Bytewax: within gap of the session (its end here is last + gap + 1 µs)
            touching = [w for w in slots.values() if w.start < proto_end and t < w.end]
        else:
            touching = [w for w in slots.values() if w.start <= proto_end and t <= w.end]
        closed = proto_end <= eff or any(w.fired for w in touching)
        late = closed if self.time.lateness_rule is LatenessRule.WINDOW else t < eff
        if late and not (allowed > 0 and proto_end + allowed > eff):
            return [], [(t, proto_end)], True
        if not touching:
            target = self.new_window(key, t, proto_end, self.next_seq())
        elif len(touching) == 1:
            target = touching[0]  # grow in place: no copy of its events
        else:
            touching.sort(key=lambda w: len(w.ids), reverse=True)
            target = touching[0]
            for w in touching[1:]:
                target.ids.extend(w.ids)
                target.start, target.end = min(target.start, w.start), max(target.end, w.end)
                target.revision = max(target.revision, w.revision)
                target.fired = target.fired or w.fired
                w.merged_into = target
                self.remove(w)
        old_end = target.end
        target.start, target.end = min(target.start, t), max(target.end, proto_end)
        target.ids.append(event_id)
        if late and target.fired:  # a late event joined an emitted session: it re-fires as an update
            target.late_dirty = True
            if target.end != old_end or len(touching) > 1:
                self.push_purge(target)
        elif target.fired:  # on time by timestamp, joining a session an idle timeout had flushed: reopen it
            target.fired = False
            self.push_fire(target)
        elif target.end != old_end or len(touching) > 1:
            self.push_fire(target)
        return [(target, late)], [], late

    # --- time passing -----------------------------------------------------------------------------
    def fire_ready(self, at: int, groups) -> None:
        for group in groups:
            heap = self.fire_heap.get(group)
            if not heap:
                continue
            raw = self.raw_of_group(group)
            eff = self.effective(raw)
            while heap and heap[0][0] <= eff:
                end, _, w = heapq.heappop(heap)
                if w.alive and not w.fired and w.end == end:
                    self.fire(w, Reason.WATERMARK, at, raw)

    def purge(self, groups) -> None:
        """Drop fired windows whose end + allowed lateness the effective watermark has passed."""
        for group in groups:
            heap = self.purge_heap.get(group)
            if not heap:
                continue
            eff = self.effective(self.raw_of_group(group))
            while heap:
                horizon, _, w = heap[0]
                if w.alive and w.fired and horizon > eff:
                    break
                heapq.heappop(heap)
                if w.alive and w.fired:
                    self.remove(w)

    def check_idle(self, now: int, at: int) -> None:
        while self.idle_heap and self.idle_heap[0][0] <= now:
            deadline, key = heapq.heappop(self.idle_heap)
            if self.idle_deadline.get(key) != deadline:
                continue
            del self.idle_deadline[key]
            raw = self.raw_of_group(self.group_of(key))
            for w in sorted(self.key_windows.get(key, {}).values(), key=lambda w: (w.start, w.end)):
                if not w.fired:
                    self.fire(w, Reason.IDLE_TIMEOUT, at, raw)

    def event_clock_passes(self, until: int) -> None:
        """Between batches an event clock keeps advancing: each window closes at the exact processing time
        its watermark reaches the end (Bytewax wakes the operator then), stamped with the batch before."""
        due = []
        for group, heap in self.fire_heap.items():
            raw, set_at = self.raw.get(group, NONE), self.raw_set_at.get(group)
            if raw == NONE or self.merged:
                continue
            for end, _, w in heap:
                if w.alive and not w.fired and w.end == end:
                    at = set_at + (end + self.time.delay - raw)  # when raw − delay reaches end
                    if at <= until:  # Bytewax is woken before it takes the next item
                        due.append((at, w.key, w.start, w))
        for at, _, _, w in sorted(due, key=lambda d: d[:3]):
            self.now = at
            self.fire_ready(at, [self.group_of(w.key)])
        self.now = until

    def next_deadline(self) -> int | None:
        """The earliest processing time at which a heartbeat could change something."""
        candidates = []
        if self.time.idle_timeout is not None and self.time.idle_clock is TimeSource.PROCESSING:
            while self.idle_heap and self.idle_deadline.get(self.idle_heap[0][1]) != self.idle_heap[0][0]:
                heapq.heappop(self.idle_heap)
            if self.idle_heap:
                candidates.append(self.idle_heap[0][0])
        if self.processing:
            heap = self.fire_heap.get(GLOBAL, [])
            while heap and not (heap[0][2].alive and not heap[0][2].fired and heap[0][2].end == heap[0][0]):
                heapq.heappop(heap)
            if heap:
                candidates.append(heap[0][0] + self.time.delay)
        return min(candidates) if candidates else None

    def heartbeats(self, before: int | None) -> None:
        """Run the pipeline heartbeats that tick (on multiples of the interval) before ``before``."""
        hb = self.time.heartbeat
        while True:
            deadline = self.next_deadline()
            if deadline is None:
                return
            tick = max(math.ceil(deadline / hb) * hb, (self.clock // hb + 1) * hb if self.clock != NONE else NONE)
            if before is not None and tick >= before:
                return
            self.clock = tick
            if self.processing:
                self.fire_ready(tick, [GLOBAL])
                self.record_trace([GLOBAL], tick, "heartbeat")
            if self.time.idle_clock is TimeSource.PROCESSING:
                self.check_idle(tick, tick)
            self.purge([GLOBAL] if self.processing else [])

    def record_trace(self, sources, at: int, kind: str) -> None:
        for source in sorted(sources):
            raw = self.clock if self.processing else self.source_raw(source)
            self.out.trace.append((self.batch_no, at, source, raw, self.effective(raw), kind))
        if self.merged:
            raw = self.raw_of_group(GLOBAL)
            self.out.trace.append((self.batch_no, at, GLOBAL, raw, self.effective(raw), kind))

    # --- the run, one batch at a time -------------------------------------------------------------
    def drain(self) -> StepOutput:
        out, self.out = self.out, StepOutput()
        return out

    def step(self, batch: BatchRows) -> StepOutput:
        """Admit one arrival batch and commit it; returns what it decided."""
        strategy = self.time.strategy
        bounded = strategy is Strategy.BOUNDED and not self.processing
        late_status = Status.SIDE_OUTPUT.value if self.time.late_policy is LatePolicy.SIDE_OUTPUT else Status.DROPPED.value
        idle = self.time.idle_timeout
        backlog = self.time.schedule is Schedule.BACKLOG and not self.processing
        commit = int(batch.commit)
        if self.batch_no > 0:
            self.heartbeats(before=int(batch.arrival_time[0]))
            if self.event_clock:
                self.event_clock_passes(until=int(batch.arrival_time[0]))
        self.batch_no = batch.number
        batch_min: dict[str, int] = {}
        batch_max: dict[str, int] = {}
        touched_groups = set()
        dirty: list[_Window] = []
        times = batch.arrival_time if self.processing else batch.event_time
        events, assignments = self.out.events, self.out.assignments
        session = self.spec.kind is WindowKind.SESSION
        for j in range(len(batch.rows)):
            row, t, key = int(batch.rows[j]), int(times[j]), batch.keys[j]
            source = self.source_of(key, batch.partitions[j])
            group = self.group_of(key)
            touched_groups.add(group)
            if self.time.source_idle_timeout is not None and self.merged:
                arrival = int(batch.arrival_time[j])
                self.started = arrival if self.started == NONE else self.started
                self.partition_seen[batch.partitions[j]] = arrival
                self.idle_partitions.discard(batch.partitions[j])  # a record makes its partition active
            if t > self.max_seen.get(group, NONE):
                self.max_seen[group] = t
            if bounded and t - self.time.bound > self.raw.get(source, NONE):
                self.raw[source] = t - self.time.bound
            if self.event_clock:
                self.now = int(batch.arrival_time[j])
            if source not in batch_min or t < batch_min[source]:
                batch_min[source] = t
            if source not in batch_max or t > batch_max[source]:
                batch_max[source] = t
            raw = self.raw_of_group(group)
            admitted, refused, late = self.admit(t, key, batch.ids[j], self.effective(raw))
            if self.event_clock and t >= self.effective(raw) and t - self.time.bound > self.source_raw(source):
                self.raw[source] = t - self.time.bound  # a timely item fast-forwards the clock
                self.raw_set_at[source] = self.now
            if not late:
                status = Status.ON_TIME.value
            elif refused:
                status = late_status
            else:
                status = Status.LATE_UPDATED.value
            events.append((row, status, raw))
            spans = {(None, None) if session else (w.start, w.end): was_late for w, was_late in admitted}
            assignments.extend((row, start, end, was_late, True) for (start, end), was_late in sorted(spans.items()))
            assignments.extend((row, start, end, True, False) for start, end in sorted(refused))
            dirty.extend(w for w, _ in admitted if w.late_dirty)
            if t > self.global_max_et:
                self.global_max_et = t
            if idle is not None:
                basis = int(batch.arrival_time[j]) if self.time.idle_clock is TimeSource.PROCESSING else t
                last = max(basis, self.key_last_et.get(key, NONE))
                self.key_last_et[key] = last
                self.idle_deadline[key] = last + idle
                heapq.heappush(self.idle_heap, (last + idle, key))
        # commit
        self.clock = max(self.clock, commit)
        if self.event_clock:
            self.now = commit
        if not self.processing:
            if strategy in (Strategy.MIN, Strategy.MAX):
                candidates = batch_min if strategy is Strategy.MIN else batch_max
            else:
                candidates = {}
            if backlog:  # this batch's watermark takes effect one micro-batch later
                candidates, self.pending = self.pending, candidates
            self.advance(candidates)
        for w in dirty:
            if w.late_dirty and w.alive:
                w.late_dirty = False
                self.emit(w, Reason.LATE_UPDATE, commit, self.raw_of_group(self.group_of(w.key)))
        self.mark_idle_partitions(commit)  # checked on the periodic emit, as Flink's idleness timer
        groups = list(self.fire_heap) if (self.merged or self.processing) else touched_groups
        self.fire_ready(commit, groups)
        if idle is not None:
            now = commit if self.time.idle_clock is TimeSource.PROCESSING else self.global_max_et
            self.check_idle(now, commit)
        self.purge(groups)
        self.record_trace(set(batch_min) if not self.processing else {GLOBAL}, commit, "commit")
        self.out.open_windows = self.alive_count
        return self.drain()

    def finish(self, last_batch: int, clock: int) -> StepOutput:
        """The input ran out after batch ``last_batch``, committed at ``clock``: the backlog's no-data
        micro-batch, then heartbeats until nothing more can fire, then END_OF_STREAM for what is left.
        (A per-key state may not have seen the last batches; the two arguments bring it up to date.)"""
        self.batch_no = max(self.batch_no, last_batch)
        self.clock = max(self.clock, clock)
        if self.time.schedule is Schedule.BACKLOG and not self.processing and self.pending:
            self.batch_no += 1
            pending, self.pending = self.pending, {}
            self.advance(pending)
            groups = list(self.fire_heap)
            self.fire_ready(self.clock, groups)
            self.purge(groups)
            self.record_trace(set(pending), self.clock, "no-data batch")
        self.heartbeats(before=None)
        leftovers = [w for slots in self.key_windows.values() for w in slots.values() if not w.fired]
        for w in sorted(leftovers, key=lambda w: (w.key, w.start, w.end)):
            self.fire(w, Reason.END_OF_STREAM, self.clock, self.raw_of_group(self.group_of(w.key)))
        return self.drain()
