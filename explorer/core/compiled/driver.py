"""The run, compiled: every arrival batch admitted and committed in order, then the end of input.

The same sequence as the reference engine's ``step`` and ``finish``, decision for decision; the named parts
it calls live in ``watermarks``, ``windows`` and ``firing``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from explorer.core.compiled import kstreams
from explorer.core.compiled.firing import (check_idle, emit, event_clock_passes, fire, fire_ready, heartbeats, heartbeats_matter,
                                           hold, purge, ran, record_trace, reschedule_due, touch_key)
from explorer.core.compiled.layout import (KIND_COMMIT, KIND_IDLE_CHECK, KIND_NO_DATA, NONE, NO_SCRIPTED, REASON_END_OF_STREAM,
                                           REASON_LATE_UPDATE, REASON_UPDATE, REASON_WATERMARK, SC_ALIVE, SC_BATCH,
                                           SC_CLOCK, SC_DIRTY, SC_GLOBAL_MAX, SC_KTAKEN, SC_MAX_OPEN, SC_NOW,
                                           SC_PENDING, SC_TOUCHED_GROUPS, SC_TOUCHED_SOURCES, SC_WINDOWS,
                                           STATUS_LATE_UPDATED,
                                           STATUS_ON_TIME, STATUS_REFUSED)
from explorer.core.compiled.watermarks import (advance, batch_candidate, check_partitions, effective, fast_forward,
                                               group_raw, next_silent_check, observe_element, observe_partition)
from explorer.core.compiled.rows import group_of_window
from explorer.core.compiled.windows import admit_fixed, admit_session
from explorer.core.compiled.state import Arena, State


@njit(cache=True, nogil=True)
def run(st: State) -> None:
    for b in range(st.n_batches):
        _step(st, b)
    _finish(st)


@njit(cache=True, inline="always")
def _touch(m: Arena, stamps: int, listed: int, count_slot: int, item: int, stamp: int) -> bool:
    """List ``item`` once per batch; True the first time."""
    if m[stamps + item] == stamp:
        return False
    m[stamps + item] = stamp
    m[listed + m[count_slot]] = item
    m[count_slot] += 1
    return True


@njit(cache=True, inline="always")
def _status(st: State, late: bool, refused: bool, taken: bool) -> int:
    """The reference's ``Lateness.status``: refused when a window refused it (with every-window: when none took
    it); else late-updated if a window took it late."""
    if refused and not (st.refuse_every and taken):
        return STATUS_REFUSED
    return STATUS_LATE_UPDATED if late else STATUS_ON_TIME


@njit(cache=True, inline="always")
def _step(st: State, b: int) -> None:
    m = st.m
    lo, hi = m[st.batch_start + b], m[st.batch_start + b + 1]
    if m[SC_BATCH] > 0:
        if heartbeats_matter(st):
            heartbeats(st, m[st.batch_open + b], True)
        if st.source_idle_every >= 0 and st.merged:
            _silent_checks(st, m[st.batch_open + b])
        if st.event_clock:
            event_clock_passes(st, m[st.batch_open + b])
    stamp = b + 1
    m[SC_BATCH] = stamp
    m[SC_TOUCHED_SOURCES] = 0
    m[SC_TOUCHED_GROUPS] = 0
    m[SC_DIRTY] = 0
    for i in range(lo, hi):
        t, s, g, k = m[st.ev_t + i], m[st.ev_source + i], m[st.ev_group + i], m[st.ev_key + i]
        _touch(m, st.grp_stamp, st.grp_touched, SC_TOUCHED_GROUPS, g, stamp)
        if st.source_idle_timeout >= 0 and st.merged:
            observe_partition(st, m[st.ev_partition + i])
        m[st.grp_max_seen + g] = max(m[st.grp_max_seen + g], t)
        if st.event_clock:
            m[SC_NOW] = m[st.ev_arrival + i]
        observe_element(st, s, t, _touch(m, st.src_stamp, st.src_touched, SC_TOUCHED_SOURCES, s, stamp))
        raw = group_raw(st, g)
        eff = effective(raw, st.delay)
        if st.sw_diff > 0:
            late, refused, taken = kstreams.admit(st, i, k, g, t, eff)
        elif st.session:
            late, refused = admit_session(st, i, k, t, eff, m[st.commit + b], raw)
            taken = not refused
        else:
            late, refused, taken = admit_fixed(st, i, t, eff)
        # the event clock moves before a late element fires its window, as the reference's on_admitted does: a
        # firing that empties the key (forget_when_empty) then forgets the moved clock too
        if st.event_clock and fast_forward(st, s, t, eff) and not st.merged:
            reschedule_due(st, s)
        if st.on_update and (taken or st.sw_diff > 0):  # (a Kafka sliding window made from a copy is forwarded too)
            _emit_updates(st, i, m[st.commit + b], raw)
        if st.late_at_once and taken:
            _fire_on_element(st, i, m[st.ev_arrival + i], raw, eff)
        if st.live_wakeups and taken:
            hold(st, g, i)
        m[st.ev_status + i] = _status(st, late, refused, taken)
        m[st.ev_seen_raw + i] = raw
        m[SC_GLOBAL_MAX] = max(m[SC_GLOBAL_MAX], t)
        if st.idle_timeout >= 0:
            touch_key(st, k, m[st.ev_arrival + i] if st.idle_processing else t)
    if st.scripted and m[st.batch_scripted + b] != NO_SCRIPTED:  # the one source moves at this commit
        _touch(m, st.src_stamp, st.src_touched, SC_TOUCHED_SOURCES, 0, stamp)
    _commit(st, b)


@njit(cache=True)
def _silent_checks(st: State, until: int) -> None:
    """The reference's ``Engine.silent_checks``: withIdleness's periodic emits in the silent intervals before the
    next batch, where a partition going idle moves the merge."""
    while True:
        tick = next_silent_check(st, until)
        if tick == NONE:
            return
        before = group_raw(st, 0)
        check_partitions(st, tick)
        if group_raw(st, 0) != before:
            record_trace(st, 0, tick, KIND_IDLE_CHECK)
        fire_ready(st, 0, tick)
        purge(st, 0)


@njit(cache=True)
def _emit_updates(st: State, i: int, at: int, raw: int) -> None:
    """Emit on-update: every window event i joined forwards its new result at once, carrying event i."""
    m = st.m
    if st.sw_diff > 0:
        kstreams.emit_updates(st, i, at, raw)
        return
    if st.session:
        emit(st, m[st.ev_session + i], REASON_UPDATE, at, raw, i)
        return
    for j in range(st.per_event):
        pair = i * st.per_event + j
        if m[st.pair_admitted + pair] == 1:
            emit(st, m[st.window_of + pair], REASON_UPDATE, at, raw, i)


@njit(cache=True)
def _fire_on_element(st: State, i: int, at: int, raw: int, eff: int) -> None:
    """The reference's ``Engine._fire_on_element`` (Flink's EventTimeTrigger.onElement): every window event i
    joined that the watermark has already passed fires at ``at``, its arrival, not at the commit."""
    m = st.m
    if st.sw_diff > 0:
        for n in range(m[SC_KTAKEN]):
            _fire_if_passed(st, m[st.taken + n], at, raw, eff)
        return
    if st.session:
        _fire_if_passed(st, m[st.ev_session + i], at, raw, eff)
        return
    for j in range(st.per_event):
        pair = i * st.per_event + j
        if m[st.pair_admitted + pair] == 1:
            _fire_if_passed(st, m[st.window_of + pair], at, raw, eff)


@njit(cache=True, inline="always")
def _fire_if_passed(st: State, w: int, at: int, raw: int, eff: int) -> None:
    m = st.m
    if m[st.win_dirty + w]:  # an emitted window re-fires (listed for the commit too, where it is now clean)
        m[st.win_dirty + w] = 0
        emit(st, w, REASON_LATE_UPDATE, at, raw)
    elif m[st.win_fired + w] == 0 and m[st.win_end + w] <= eff:
        fire(st, w, REASON_WATERMARK, at, raw)


@njit(cache=True)
def _advance_pending(st: State) -> None:
    m = st.m
    for i in range(m[SC_PENDING]):
        s = m[st.src_pending + i]
        advance(st, s, m[st.src_pending_value + s])


@njit(cache=True, inline="always")
def _candidate(st: State, s: int, b: int) -> int:
    """Where batch b's commit moves source s: its smallest/largest event time, or its scripted watermark."""
    return st.m[st.batch_scripted + b] if st.scripted else batch_candidate(st, s)


@njit(cache=True, inline="always")
def _commit(st: State, b: int) -> None:
    m = st.m
    commit = m[st.commit + b]
    m[SC_CLOCK] = max(m[SC_CLOCK], commit)
    if st.event_clock:
        m[SC_NOW] = commit
    n_touched = m[SC_TOUCHED_SOURCES]
    if not st.processing:
        if st.backlog:  # this batch's watermark takes effect one micro-batch later
            _advance_pending(st)
            m[SC_PENDING] = 0
            if st.per_batch or (st.scripted and m[st.batch_scripted + b] != NO_SCRIPTED):
                for i in range(n_touched):
                    s = m[st.src_touched + i]
                    m[st.src_pending + i] = s
                    m[st.src_pending_value + s] = _candidate(st, s, b)
                m[SC_PENDING] = n_touched
        elif st.per_batch or (st.scripted and m[st.batch_scripted + b] != NO_SCRIPTED):
            for i in range(n_touched):
                s = m[st.src_touched + i]
                advance(st, s, _candidate(st, s, b))
    if st.source_idle_timeout >= 0 and st.merged:  # withIdleness: the periodic emit, before the merge is read
        check_partitions(st, commit)
    for d in range(m[SC_DIRTY]):
        w = m[st.dirty + d]
        if m[st.win_dirty + w] and m[st.win_alive + w]:
            m[st.win_dirty + w] = 0
            emit(st, w, REASON_LATE_UPDATE, commit, group_raw(st, group_of_window(st, w)))
    n_groups = 1 if st.merged or st.one_watermark else m[SC_TOUCHED_GROUPS]  # (the one global group)
    for i in range(n_groups):
        fire_ready(st, m[st.grp_touched + i], commit)
    if st.live_wakeups:
        for i in range(n_groups):
            ran(st, m[st.grp_touched + i])
    if st.idle_timeout >= 0:
        check_idle(st, commit if st.idle_processing else m[SC_GLOBAL_MAX], commit)
    for i in range(n_groups):
        purge(st, m[st.grp_touched + i])
    if st.processing:
        m[st.src_trace] = 0
        record_trace(st, 1, commit, KIND_COMMIT)
    else:
        for i in range(n_touched):
            m[st.src_trace + i] = m[st.src_touched + i]
        record_trace(st, n_touched, commit, KIND_COMMIT)
    m[SC_MAX_OPEN] = max(m[SC_MAX_OPEN], m[SC_ALIVE])


@njit(cache=True)
def _finish(st: State) -> None:
    """The input ran out: the backlog's no-data micro-batch (when the watermark moves), then heartbeats until nothing more
    can fire,
    then END_OF_STREAM for whatever is still open."""
    m = st.m
    m[SC_BATCH] = max(m[SC_BATCH], st.n_batches)
    m[SC_CLOCK] = max(m[SC_CLOCK], m[st.commit + st.n_batches - 1])
    n_pending = m[SC_PENDING]
    if st.backlog and not st.processing and n_pending > 0:
        closing = 1 if st.merged else n_pending  # the groups the pending sources close: the merge, or each
        before = np.empty(closing, np.int64)
        for i in range(closing):
            before[i] = effective(group_raw(st, 0 if st.merged else m[st.src_pending + i]), st.delay)
        _advance_pending(st)
        moved = False
        for i in range(closing):
            after = effective(group_raw(st, 0 if st.merged else m[st.src_pending + i]), st.delay)
            moved = moved or (after != NONE and after > (0 if before[i] == NONE else before[i]))
        if moved:  # Spark runs the no-data micro-batch only when the watermark moves (reference: ``advances``)
            m[SC_BATCH] += 1
            for g in range(st.n_groups):
                fire_ready(st, g, m[SC_CLOCK])
            for g in range(st.n_groups):
                purge(st, g)
            for i in range(n_pending):
                m[st.src_trace + i] = m[st.src_pending + i]
            record_trace(st, n_pending, m[SC_CLOCK], KIND_NO_DATA)
        m[SC_PENDING] = 0
    heartbeats(st, 0, False)
    for w in range(m[SC_WINDOWS] if st.session else st.n_windows):
        if m[st.win_alive + w] and not m[st.win_fired + w]:
            fire(st, w, REASON_END_OF_STREAM, m[SC_CLOCK], group_raw(st, group_of_window(st, w)))


@njit(cache=True)
def gather_ids(m: Arena, node_row: int, node_next: int, heads: Arena, counts: Arena) -> Arena:
    """The rows of every emission's events, emission after emission (each a prefix of its window's list)."""
    out = np.empty(counts.sum(), np.int64)
    pos = 0
    for e in range(heads.shape[0]):
        at = heads[e]
        for _ in range(counts[e]):
            out[pos] = m[node_row + at]
            at = m[node_next + at]
            pos += 1
    return out
