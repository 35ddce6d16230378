"""Kafka Streams' SlidingWindows, compiled: the reference's ``core/kstreams_sliding.py`` over the arena.

Each key's windows are a list sorted by start (``key_sw_head``/``key_sw_tail``, ``win_sw_prev``/``win_sw_next``):
the record's range of starts is walked from the newest, as Kafka's backward fetch does. A window's contents are a
chain its newest node starts (``win_head``, each node pointing at the one before), so a window made from another's
aggregate takes that chain as it is, in O(1), and neither changes the other; an emission records the newest node
and the count, and ``gather_shared`` reads the chains back in order. Times are Kafka's milliseconds (``st.sw_diff``
is D in ms); a window's start and end are held in µs as the reference holds them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from explorer.core.compiled import heaps
from explorer.core.compiled.firing import emit
from explorer.core.compiled.layout import (KP_ADMITTED, KP_END, KP_EVENT, KP_FIELDS, KP_LATE, KP_START, NONE,
                                           REASON_UPDATE, SC_DIRTY, SC_KFORWARD, SC_KPAIRS, SC_KTAKEN, SC_NODES,
                                           SC_WINDOWS)
from explorer.core.compiled.state import State
from explorer.core.compiled.windows import admits_late, join, open_window, push_fire, remove

MS = 1000


@njit(cache=True, inline="always")
def _late(st: State, end: int, t: int, eff: int, closed: bool) -> bool:
    """The reference's ``Lateness.is_late``."""
    if st.rule_window:
        return closed
    return t < eff or (st.end_inclusive != 0 and end <= eff)


@njit(cache=True, inline="always")
def _hi(st: State, start: int) -> int:
    return (start + st.sw_diff + 1) * MS


@njit(cache=True)
def _refuses(st: State, end: int, t: int, eff: int, w: int) -> bool:
    """Kafka skips a closed window: the lateness rule refuses it; a window the state no longer holds is closed."""
    m = st.m
    if w >= 0 and m[st.win_alive + w] == 0:
        return True
    closed = end <= eff or (w >= 0 and m[st.win_fired + w] == 1)
    return _late(st, end, t, eff, closed) and not admits_late(st, end, eff)


@njit(cache=True)
def _pair(st: State, row: int, start: int, late: bool, admitted: bool) -> None:
    """One (event, window) decision, for the assignments table (written only while it fits; counted always)."""
    m = st.m
    n = m[SC_KPAIRS]
    m[SC_KPAIRS] = n + 1
    if n < st.kpairs_capacity:
        at = st.kpairs + n * KP_FIELDS
        m[at + KP_EVENT] = row
        m[at + KP_START] = start * MS
        m[at + KP_END] = _hi(st, start)
        m[at + KP_LATE] = late
        m[at + KP_ADMITTED] = admitted


@njit(cache=True)
def _find(st: State, k: int, start: int) -> int:
    """The key's window starting at ``start`` (ms), or −1."""
    m = st.m
    w = m[st.key_sw_tail + k]
    while w >= 0 and m[st.win_start + w] > start * MS:
        w = m[st.win_sw_prev + w]
    return w if w >= 0 and m[st.win_start + w] == start * MS else -1


@njit(cache=True)
def _insert(st: State, k: int, w: int) -> None:
    """Window w into its key's list, by start."""
    m = st.m
    after = m[st.key_sw_tail + k]
    while after >= 0 and m[st.win_start + after] > m[st.win_start + w]:
        after = m[st.win_sw_prev + after]
    before = m[st.key_sw_head + k] if after < 0 else m[st.win_sw_next + after]
    m[st.win_sw_prev + w], m[st.win_sw_next + w] = after, before
    join(m, st.win_sw_prev, st.win_sw_next, st.key_sw_head + k, st.key_sw_tail + k, after, w)
    join(m, st.win_sw_prev, st.win_sw_next, st.key_sw_head + k, st.key_sw_tail + k, w, before)


@njit(cache=True)
def _unlink(st: State, k: int, w: int) -> None:
    m = st.m
    join(m, st.win_sw_prev, st.win_sw_next, st.key_sw_head + k, st.key_sw_tail + k, m[st.win_sw_prev + w],
         m[st.win_sw_next + w])


@njit(cache=True)
def _put(st: State, k: int, g: int, start: int, head: int, count: int, stamp: int, late: bool, eff: int) -> int:
    """``windowStore.put``: a new window holding the chain ``head`` (``count`` records), or at a start the key
    holds, that window's aggregate overwritten."""
    m = st.m
    w: int = _find(st, k, start)
    if w < 0:
        w = m[SC_WINDOWS]
        m[SC_WINDOWS] = w + 1
        m[st.win_key + w] = k
        m[st.win_start + w] = start * MS
        m[st.win_end + w] = _hi(st, start)
        open_window(st, w)
        m[st.win_late_only + w] = late and _hi(st, start) <= eff
        m[st.win_min_t + w] = 2**62  # (the reference's Window.min_t: no record sets it here)
        _insert(st, k, w)
        base = m[st.grp_exp_base + g]
        heaps.push(m, st.exp_keys + base, st.exp_values + base, st.grp_exp_size + g, start, w)
        if m[st.grp_store_time + g] == NONE or start > m[st.grp_store_time + g]:
            m[st.grp_store_time + g] = start
    m[st.win_head + w] = head
    m[st.win_count + w] = count
    m[st.win_stamp + w] = stamp
    return w


@njit(cache=True)
def _expire(st: State, g: int) -> None:
    """The reference's ``expire``: windows whose start left the store's retention are no longer read, and one not
    yet emitted never is."""
    m = st.m
    base = m[st.grp_exp_base + g]
    while m[st.grp_exp_size + g] > 0 and m[st.exp_keys + base] <= m[st.grp_store_time + g] - st.sw_retention:
        w = m[st.exp_values + base]
        heaps.pop(m, st.exp_keys + base, st.exp_values + base, st.grp_exp_size + g)
        _unlink(st, m[st.win_key + w], w)
        if m[st.win_alive + w] == 1 and m[st.win_fired + w] == 0:
            if st.forget_when_empty:  # (no longer waiting to fire)
                m[st.key_waiting + m[st.win_key + w]] -= 1
            remove(st, w)


@njit(cache=True, inline="always")
def _out_of_retention(st: State, g: int, start: int) -> bool:
    """The reference's ``out_of_retention``: a start the store no longer keeps (its put is skipped)."""
    m = st.m
    return bool(m[st.grp_store_time + g] != NONE and start <= m[st.grp_store_time + g] - st.sw_retention)


@njit(cache=True)
def _refire(st: State, w: int, late: bool) -> None:
    m = st.m
    if late:
        m[st.win_dirty + w] = 1
    else:
        m[st.win_fired + w] = 0
        if st.forget_when_empty:
            m[st.key_waiting + m[st.win_key + w]] += 1
        push_fire(st, w)


@njit(cache=True)
def _take(st: State, w: int, row: int, late: bool) -> None:
    """Window w took event ``row``: listed for the record's updates (and its re-emission at commit when dirty)."""
    m = st.m
    m[st.taken + m[SC_KTAKEN]] = w
    m[SC_KTAKEN] += 1
    _pair(st, row, m[st.win_start + w] // MS, late, True)
    if m[st.win_dirty + w]:
        m[st.dirty + m[SC_DIRTY]] = w
        m[SC_DIRTY] += 1


@njit(cache=True, inline="always")
def _node(st: State, row: int, before: int) -> int:
    m = st.m
    node: int = m[SC_NODES]
    m[SC_NODES] = node + 1
    m[st.node_row + node] = row
    m[st.node_next + node] = before
    return node


@njit(cache=True)
def _update(st: State, row: int, w: int, t: int, ms: int, eff: int) -> None:
    m = st.m
    end = m[st.win_end + w]
    if _refuses(st, end, t, eff, w):
        _pair(st, row, m[st.win_start + w] // MS, True, False)
        return
    late = _late(st, end, t, eff, end <= eff or m[st.win_fired + w] == 1)
    if m[st.win_fired + w]:
        _refire(st, w, late)
    if not (late and end <= eff):
        m[st.win_late_only + w] = 0
    m[st.win_head + w] = _node(st, row, m[st.win_head + w])
    m[st.win_count + w] += 1
    m[st.win_stamp + w] = max(m[st.win_stamp + w], ms)
    _take(st, w, row, late)


@njit(cache=True)
def _create(st: State, row: int, k: int, g: int, start: int, head: int, count: int, t: int, ms: int,
            eff: int) -> None:
    """A window holding the chain ``head`` and the record, unless it has closed (overwriting one at that start)."""
    m = st.m
    held = _find(st, k, start)
    end = _hi(st, start)
    if _refuses(st, end, t, eff, held) or (held < 0 and _out_of_retention(st, g, start)):
        _pair(st, row, start, True, False)
        return
    late = _late(st, end, t, eff, end <= eff or (held >= 0 and m[st.win_fired + held] == 1))
    if held >= 0 and m[st.win_fired + held]:
        _refire(st, held, late)
    w = _put(st, k, g, start, _node(st, row, head), count + 1, ms, late, eff)
    _take(st, w, row, late)


@njit(cache=True)
def admit(st: State, row: int, k: int, g: int, t: int, eff: int) -> tuple[bool, bool, bool]:
    """One record (``KStreamSlidingWindowAggregate.process``). Returns (taken late by a window, refused by a
    window, taken by a window); the windows it took are ``st.taken[:SC_KTAKEN]``, the one it made from another's
    aggregate ``SC_KFORWARD`` (−1: none)."""
    m = st.m
    m[SC_KTAKEN] = 0
    m[SC_KFORWARD] = -1
    d = st.sw_diff
    ms = t // MS
    if t < 0:
        _pair(st, row, max(ms - d, 0), True, False)
        return False, True, False
    first_pair = m[SC_KPAIRS]
    if _refuses(st, _hi(st, ms), t, eff, -1):
        _pair(st, row, ms, True, False)
    elif ms < d:
        _process_early(st, row, k, g, t, ms, eff)
    else:
        _process_reverse(st, row, k, g, t, ms, eff)
    _expire(st, g)
    late = refused = False
    for n in range(first_pair, min(m[SC_KPAIRS], st.kpairs_capacity)):
        at = st.kpairs + n * KP_FIELDS
        if m[at + KP_ADMITTED]:
            late = late or m[at + KP_LATE] == 1
        else:
            refused = True
    return late, refused, m[SC_KTAKEN] > 0


@njit(cache=True)
def _create_right(st: State, k: int, g: int, ms: int, head: int, count: int, stamp: int, eff: int) -> None:
    """createCurrentRecordRightWindow: [t + 1, t + 1 + D] holding the aggregate found, not the record."""
    if _out_of_retention(st, g, ms + 1):
        return
    st.m[SC_KFORWARD] = _put(st, k, g, ms + 1, head, count, stamp, False, eff)


@njit(cache=True)
def _process_reverse(st: State, row: int, k: int, g: int, t: int, ms: int, eff: int) -> None:
    m = st.m
    d = st.sw_diff
    low = max(0, ms - 2 * d)
    left_head = left_count = -1
    right_head = right_count = right_stamp = -1
    has_left_agg = has_right_agg = False
    left_made = right_made = False
    previous = NONE
    w = m[st.key_sw_tail + k]
    while w >= 0 and m[st.win_start + w] > (ms + 1) * MS:
        w = m[st.win_sw_prev + w]
    while w >= 0 and m[st.win_start + w] >= low * MS:
        start = m[st.win_start + w] // MS
        end = start + d
        stamp = m[st.win_stamp + w]
        before = m[st.win_sw_prev + w]
        if start == ms + 1:
            right_made = True
        elif end > ms:
            if not has_right_agg:
                has_right_agg = True
                right_head, right_count, right_stamp = m[st.win_head + w], m[st.win_count + w], stamp
            _update(st, row, w, t, ms, eff)
        elif end == ms:
            left_made = True
            _update(st, row, w, t, ms, eff)
            if stamp < ms:
                previous = stamp
            else:
                return
        else:
            has_left_agg = True
            left_head, left_count = m[st.win_head + w], m[st.win_count + w]
            previous = stamp
            break
        w = before
    # createWindows
    if previous != NONE and _find(st, k, previous + 1) < 0 and previous + 1 + d >= ms:
        _create(st, row, k, g, previous + 1, -1, 0, t, ms, eff)
    if not left_made:
        if previous != NONE and ms - d <= previous and has_left_agg:
            _create(st, row, k, g, ms - d, left_head, left_count, t, ms, eff)
        else:
            _create(st, row, k, g, ms - d, -1, 0, t, ms, eff)
    if not right_made and has_right_agg and right_stamp > ms:
        _create_right(st, k, g, ms, right_head, right_count, right_stamp, eff)


@njit(cache=True)
def _process_early(st: State, row: int, k: int, g: int, t: int, ms: int, eff: int) -> None:
    m = st.m
    combined = -1
    combined_head = combined_count = combined_stamp = -1
    right_head = right_count = right_stamp = -1
    has_right_agg = right_made = False
    previous = NONE
    w = m[st.key_sw_head + k]
    while w >= 0 and m[st.win_start + w] <= (ms + 1) * MS:
        start = m[st.win_start + w] // MS
        stamp = m[st.win_stamp + w]
        if start == 0:
            combined = w
            combined_head, combined_count, combined_stamp = m[st.win_head + w], m[st.win_count + w], stamp
            if stamp < ms:
                previous = stamp
        elif start <= ms:
            has_right_agg = True
            right_head, right_count, right_stamp = m[st.win_head + w], m[st.win_count + w], stamp
            _update(st, row, w, t, ms, eff)
        else:
            right_made = True
        w = m[st.win_sw_next + w]
    if not has_right_agg and combined >= 0 and combined_stamp > ms:
        has_right_agg = True
        right_head, right_count, right_stamp = combined_head, combined_count, combined_stamp
    if not right_made and has_right_agg and right_stamp > ms:
        _create_right(st, k, g, ms, right_head, right_count, right_stamp, eff)
    if previous != NONE and _find(st, k, previous + 1) < 0:
        _create(st, row, k, g, previous + 1, -1, 0, t, ms, eff)
    if combined < 0:
        _create(st, row, k, g, 0, -1, 0, t, ms, eff)
    else:
        _update(st, row, combined, t, ms, eff)


@njit(cache=True)
def emit_updates(st: State, row: int, at: int, raw: int) -> None:
    """Emit on-update: each window the record took, then the one it made from another's aggregate, forwarded
    whole (as the reference engine emits them after the record)."""
    m = st.m
    for n in range(m[SC_KTAKEN]):
        emit(st, m[st.taken + n], REASON_UPDATE, at, raw, row)
    if m[SC_KFORWARD] >= 0:
        emit(st, m[SC_KFORWARD], REASON_UPDATE, at, raw, row)


@njit(cache=True, nogil=True)
def gather_shared(m: npt.NDArray[np.int64], node_row: int, node_next: int, heads: npt.NDArray[np.int64],
                  counts: npt.NDArray[np.int64], order: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64],
                                                                                      npt.NDArray[np.int64]]:
    """Each emission's records in the order its window took them, as ``pool[start[i]:start[i] + counts[i]]``.

    Every update of a window lists the whole window, so read one by one the listings of a window of n records
    hold n²/2 ids (227M for 50,000 records at D = 2 min, 1.8 GB). But a window's chain only grows at its newest
    end, so an earlier emission's chain is the tail of a later one's, and its listing (read back to front) a
    prefix of the later listing. ``order`` puts each window's emissions together, the largest count first: an
    emission whose head lies ``counts`` fewer steps down the chain than the last one read shares its listing;
    one that does not (a window made again from another's aggregate) is read whole. The walk goes down each
    chain once, so the work and the pool are about the records each window took, not its updates."""
    n = len(heads)
    root_of = np.full(n, -1, dtype=np.int64)  # per emission, the emission whose listing it is a prefix of
    size = 0
    root, walker, walked = -1, -1, 0  # the listing being shared, and the node and count the walk is at
    for k in range(n):
        i = order[k]
        if counts[i] == 0:
            continue
        shared = False
        if root >= 0 and counts[i] <= walked:
            node = walker
            for _ in range(walked - counts[i]):
                node = m[node_next + node]
            shared = node == heads[i]
        if shared:
            root_of[i], walker, walked = root, heads[i], counts[i]
        else:  # the first of its window, or not a prefix of the last listing read
            root_of[i], root, walker, walked = i, i, heads[i], counts[i]
            size += counts[i]
    pool = np.empty(size, dtype=np.int64)
    start = np.zeros(n, dtype=np.int64)
    at = 0
    for k in range(n):
        i = order[k]
        if root_of[i] == i:
            node = heads[i]
            for j in range(counts[i] - 1, -1, -1):
                pool[at + j] = m[node_row + node]
                node = m[node_next + node]
            start[i] = at
            at += counts[i]
        elif root_of[i] >= 0:
            start[i] = start[root_of[i]]
    return pool, start
