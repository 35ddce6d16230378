"""Watermark generators, compiled: where the raw watermark of a source and of a group of windows comes from.

- per-batch MIN/MAX (VoltSP): a source's candidate is its batch's smallest or largest event time, applied
  at commit (or one micro-batch later on Spark's backlog schedule);
- bounded out-of-orderness (003, Flink): max seen − L, per element;
- the event clock (Bytewax): a timely item fast-forwards to t − L, and the mark then moves with processing
  time;
- the processing clock: the watermark is the clock itself;
- a partition merge (min or max over partitions), optionally wrapped by Flink's ``withIdleness``, which
  leaves idle partitions out of the merge (the highest mark when all are idle) and never lets the merged mark go
  back; idleness is decided at the periodic emits only (the reference's ``WithIdleness`` says why).

The merge is read for every element, so it must not cost a pass over the partitions (10k partitions made a
run events × partitions): the partitions' marks sit in a tournament tree whose root is the merged mark, and
a partition's leaf is updated wherever its mark or its idleness changes. Idle partitions are found from a heap
of inactivity clocks, and an emit visits only the partitions a record reached since the one before, not every
partition at every commit.

Each function mirrors one method of the reference engine (``explorer/core/engine.py``) and is called where
that method is called, so that the merged floor, the one stateful read, sees the same values.
"""

from __future__ import annotations

from numba import njit, vectorize

from explorer.core.compiled import heaps
from explorer.core.rules import effective_watermark, first_idle_check, idle_at_check
from explorer.core.compiled.layout import (ABSENT_FROM_MAX, ABSENT_FROM_MIN, NONE, NO_MARK_YET, SC_CLOCK, SC_FLOOR,
                                           SC_HIGHEST, SC_LAST_CHECK, SC_NOW, SC_PART_ACTIVE, SC_PART_HEAP_SIZE,
                                           SC_PART_RESET)
from explorer.core.compiled.state import State


# raw − delayWindowClose, compiled from the one definition (core.rules): for one value in the kernel, and
# for a whole column when the tables are read back
effective = njit(cache=True, inline="always")(effective_watermark)
effective_column = vectorize(["int64(int64, int64)"], cache=True)(  # type: ignore[no-untyped-call]  # numba has no annotations
    effective_watermark)
# withIdleness's timer, compiled from the same definitions
_idle_at_check = njit(cache=True, inline="always")(idle_at_check)
_first_idle_check = njit(cache=True, inline="always")(first_idle_check)


@njit(cache=True, inline="always")
def in_unit(t: int, unit: int) -> int:
    """An event time as the watermark reads it, in whole units toward zero (Spark's ms: t / 1000)."""
    if unit == 1:
        return t
    whole = (t if t >= 0 else -t) // unit * unit
    return whole if t >= 0 else -whole


@njit(cache=True, inline="always")
def source_raw(st: State, s: int) -> int:
    """A source's raw watermark now; the event clock's keeps moving with processing time."""
    m = st.m
    raw: int = m[st.src_raw + s]
    if raw != NONE and st.event_clock:
        moved: int = m[SC_NOW] - m[st.src_set_at + s]
        return raw + moved
    return raw


@njit(cache=True, inline="always")
def group_raw(st: State, g: int) -> int:
    """The raw watermark that closes group g's windows (the reference's ``Engine.group_raw``)."""
    m = st.m
    if st.processing:
        clock: int = m[SC_CLOCK]
        return clock
    if not st.merged:
        return source_raw(st, g)
    root = m[st.merge_tree + 1]
    found = root != (ABSENT_FROM_MIN if st.pick_min else ABSENT_FROM_MAX)  # not every partition idle
    best = NONE
    if found and root != NO_MARK_YET:
        best = root + m[SC_NOW] if st.event_clock else root
    if st.source_idle_timeout < 0:
        return best
    if not found and m[SC_HIGHEST] != NO_MARK_YET:  # every partition idle: the highest any reached
        best = m[SC_HIGHEST] + m[SC_NOW] if st.event_clock else m[SC_HIGHEST]
    if best > m[SC_FLOOR]:  # idle partitions left out; what was merged is never taken back
        m[SC_FLOOR] = best
    floor: int = m[SC_FLOOR]
    return floor


@njit(cache=True, inline="always")
def _mark_leaf(st: State, p: int) -> int:
    """Partition p's raw mark as the merge tree holds it: the event clock's less the time it was set, so that
    every leaf moves with the clock alike."""
    m = st.m
    raw: int = m[st.src_raw + p]
    if raw == NONE:
        return NO_MARK_YET
    return raw - m[st.src_set_at + p] if st.event_clock else raw


@njit(cache=True)
def merge_changed(st: State, p: int) -> None:
    """Partition p's mark or idleness changed: update its leaf (a value the merge never picks while p is idle)
    and the path to the root, up to the first node that keeps its value; note the highest mark."""
    m = st.m
    tree = st.merge_tree
    pos = st.merge_leaves + p
    leaf = _mark_leaf(st, p)
    m[SC_HIGHEST] = max(m[SC_HIGHEST], leaf)
    if m[st.part_idle + p]:
        leaf = ABSENT_FROM_MIN if st.pick_min else ABSENT_FROM_MAX
    m[tree + pos] = leaf
    while pos > 1:
        pos >>= 1
        left, right = m[tree + 2 * pos], m[tree + 2 * pos + 1]
        pick = (left if left < right else right) if st.pick_min else (left if left > right else right)
        if m[tree + pos] == pick:
            return
        m[tree + pos] = pick


@njit(cache=True)
def observe_partition(st: State, p: int) -> None:
    """withIdleness: a record from partition p (``IdlenessTimer.activity``), noted for the next periodic emit."""
    m = st.m
    if not m[st.part_active + p]:
        m[st.part_active + p] = 1
        m[st.part_listed + m[SC_PART_ACTIVE]] = p
        m[SC_PART_ACTIVE] += 1


@njit(cache=True)
def check_partitions(st: State, now: int) -> None:
    """withIdleness's periodic emit at ``now`` (the reference's ``WithIdleness.check``): clocks start for the
    partitions without one that sent nothing since the emit before; a record since then stops a partition's clock
    and brings it back into the merge; a clock past the timeout makes its partition idle. Then the merge."""
    m = st.m
    for i in range(m[SC_PART_RESET]):
        p = m[st.part_reset + i]
        if not m[st.part_active + p]:
            m[st.part_quiet_from + p] = now
            heaps.push(m, st.part_heap_keys, st.part_heap_values, SC_PART_HEAP_SIZE, now, p)
    n = m[SC_PART_ACTIVE]
    for i in range(n):
        p = m[st.part_listed + i]
        m[st.part_active + p] = 0
        m[st.part_quiet_from + p] = NONE
        m[st.part_reset + i] = p
        if m[st.part_idle + p]:
            m[st.part_idle + p] = 0
            merge_changed(st, p)
    m[SC_PART_RESET] = n
    m[SC_PART_ACTIVE] = 0
    while _clean_clock_top(st) and _idle_at_check(m[st.part_heap_keys], st.source_idle_timeout, now):
        p = m[st.part_heap_values]
        heaps.pop(m, st.part_heap_keys, st.part_heap_values, SC_PART_HEAP_SIZE)
        m[st.part_idle + p] = 1
        merge_changed(st, p)
    m[SC_LAST_CHECK] = now
    group_raw(st, 0)  # the multiplexer merges at every periodic emit


@njit(cache=True, inline="always")
def _clean_clock_top(st: State) -> bool:
    """Drop the heap's stale tops (a clock a record stopped or restarted, a partition already idle); True when a
    running clock is left."""
    m = st.m
    while m[SC_PART_HEAP_SIZE] > 0:
        p = m[st.part_heap_values]
        if m[st.part_quiet_from + p] == m[st.part_heap_keys] and not m[st.part_idle + p]:
            return True
        heaps.pop(m, st.part_heap_keys, st.part_heap_values, SC_PART_HEAP_SIZE)
    return False


@njit(cache=True)
def next_silent_check(st: State, until: int) -> int:
    """The next periodic emit between commits, up to ``until``, that changes something (the reference's
    ``WithIdleness.next_silent_check``), or NONE."""
    m = st.m
    tick: int = m[SC_LAST_CHECK] + st.source_idle_every
    if m[SC_PART_RESET] == 0:
        if not _clean_clock_top(st):
            return NONE
        tick = max(tick, _first_idle_check(m[st.part_heap_keys], st.source_idle_timeout, st.source_idle_every))
    return tick if tick <= until else NONE


@njit(cache=True)
def fast_forward(st: State, s: int, t: int, eff: int) -> bool:
    """The event clock: a timely item (t ≥ the effective watermark it met) whose t − L is ahead of the moving
    mark resets it there, from now on. Returns whether it did."""
    candidate = in_unit(t, st.watermark_unit) - st.bound
    if t >= eff and candidate > source_raw(st, s):
        st.m[st.src_raw + s] = candidate
        st.m[st.src_set_at + s] = st.m[SC_NOW]
        if st.merged:
            merge_changed(st, s)
        return True
    return False


@njit(cache=True, inline="always")
def observe_element(st: State, s: int, t: int, first_in_batch: bool) -> None:
    """What one element tells its source's generator: bounded out-of-orderness moves to max seen − L at once;
    per-batch MIN/MAX note the batch's smallest and largest event time (each in watermark units)."""
    m = st.m
    t = in_unit(t, st.watermark_unit)
    if st.bounded and t - st.bound > m[st.src_raw + s]:
        m[st.src_raw + s] = t - st.bound
        if st.merged:
            merge_changed(st, s)
    low, high = st.src_batch_min + s, st.src_batch_max + s
    if first_in_batch:
        m[low] = t
        m[high] = t
    else:
        m[low] = min(m[low], t)
        m[high] = max(m[high], t)


@njit(cache=True, inline="always")
def batch_candidate(st: State, s: int) -> int:
    candidate: int = st.m[st.src_batch_min + s] if st.strategy_min else st.m[st.src_batch_max + s]
    return candidate


@njit(cache=True, inline="always")
def advance(st: State, s: int, value: int) -> None:
    """A raw watermark never moves back."""
    if value > st.m[st.src_raw + s]:
        st.m[st.src_raw + s] = value
        if st.merged:
            merge_changed(st, s)
