"""Watermark generators, compiled: where the raw watermark of a source and of a group of windows comes from.

- per-batch MIN/MAX (VoltSP): a source's candidate is its batch's smallest or largest event time, applied
  at commit (or one micro-batch later on Spark's backlog schedule);
- bounded out-of-orderness (003, Flink): max seen − L, per element;
- the event clock (Bytewax): a timely item fast-forwards to t − L, and the mark then moves with processing
  time;
- the processing clock: the watermark is the clock itself;
- a partition merge (min or max over partitions), optionally wrapped by Flink's ``withIdleness``, which
  leaves silent partitions out of the merge and never lets the merged mark go back.

Each function mirrors one method of the reference engine (``explorer/core/engine.py``) and is called where
that method is called, so that the merged floor, the one stateful read, sees the same values.
"""

from numba import njit

from explorer.core.compiled.layout import NONE, SC_CLOCK, SC_FLOOR, SC_NOW, SC_STARTED


@njit(cache=True, inline="always")
def effective(raw, delay):
    """raw − delayWindowClose, never pulled below 0 by the delay (000's scenario 2)."""
    if raw == NONE:
        return NONE
    if raw >= 0:
        value = raw - delay
        return value if value > 0 else 0
    return raw - delay


@njit(cache=True, inline="always")
def source_raw(st, s):
    """A source's raw watermark now; the event clock's keeps moving with processing time."""
    m = st.m
    raw = m[st.src_raw + s]
    if raw != NONE and st.event_clock:
        return raw + (m[SC_NOW] - m[st.src_set_at + s])
    return raw


@njit(cache=True, inline="always")
def group_raw(st, g):
    """The raw watermark that closes group g's windows (the reference's ``raw_of_group``)."""
    m = st.m
    if st.processing:
        return m[SC_CLOCK]
    if not st.merged:
        return source_raw(st, g)
    found = False
    best = NONE
    for p in range(st.n_sources):
        if m[st.part_idle + p]:
            continue
        value = source_raw(st, p)
        if not found or (value < best if st.pick_min else value > best):
            best = value
            found = True
    if st.source_idle < 0:
        return best
    if found and best > m[SC_FLOOR]:  # idle partitions left out; what was merged is never taken back
        m[SC_FLOOR] = best
    return m[SC_FLOOR]


@njit(cache=True)
def observe_partition(st, p, arrival):
    """withIdleness: a record makes its partition active again and dates its silence."""
    m = st.m
    if m[SC_STARTED] == NONE:
        m[SC_STARTED] = arrival
    m[st.part_seen + p] = arrival
    m[st.part_has_seen + p] = 1
    m[st.part_idle + p] = 0


@njit(cache=True)
def mark_idle_partitions(st, now):
    """withIdleness: partitions whose last record (or the start, if none yet) is older than the timeout."""
    m = st.m
    for p in range(st.n_sources):
        last = m[st.part_seen + p] if m[st.part_has_seen + p] else m[SC_STARTED]
        m[st.part_idle + p] = 1 if last + st.source_idle <= now else 0


@njit(cache=True)
def fast_forward(st, s, t, eff):
    """The event clock: a timely item (t ≥ the effective watermark it met) whose t − L is ahead of the moving
    mark resets it there, from now on. Returns whether it did."""
    candidate = t - st.bound
    if t >= eff and candidate > source_raw(st, s):
        st.m[st.src_raw + s] = candidate
        st.m[st.src_set_at + s] = st.m[SC_NOW]
        return True
    return False


@njit(cache=True, inline="always")
def observe_element(st, s, t, first_in_batch):
    """What one element tells its source's generator: bounded out-of-orderness moves to max seen − L at once;
    per-batch MIN/MAX note the batch's smallest and largest event time."""
    m = st.m
    if st.bounded and t - st.bound > m[st.src_raw + s]:
        m[st.src_raw + s] = t - st.bound
    low, high = st.src_batch_min + s, st.src_batch_max + s
    if first_in_batch:
        m[low] = t
        m[high] = t
    else:
        m[low] = min(m[low], t)
        m[high] = max(m[high], t)


@njit(cache=True, inline="always")
def batch_candidate(st, s):
    return st.m[st.src_batch_min + s] if st.strategy_min else st.m[st.src_batch_max + s]


@njit(cache=True, inline="always")
def advance(st, s, value):
    """A raw watermark never moves back."""
    if value > st.m[st.src_raw + s]:
        st.m[st.src_raw + s] = value
