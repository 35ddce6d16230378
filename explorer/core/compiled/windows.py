"""Window assigners and window state, compiled.

Fixed windows (tumbling, sliding, and Storm's (start, end]) have ids decided before the run
(``plan.fixed_windows``): the space of windows does not depend on time, so an event's windows are a row of
``window_of``. Sessions are allocated as events open them and merge when they overlap or touch.

A window's contents are a linked list of nodes (one per admission), so that a merge appends one list to
another in O(1); an emission records (head, count), the prefix the window held then.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from explorer.core.compiled import heaps
from explorer.core.compiled.layout import NONE, REASON_TOMBSTONE, SC_ALIVE, SC_DIRTY, SC_DUE_SIZE, SC_NODES, SC_WINDOWS
from explorer.core.compiled.rows import group_of_window, write_emission
from explorer.core.compiled.state import State


@njit(cache=True)
def schedule_due(st: State, g: int, due: int) -> None:
    """The event clock closes a window at the processing time its group's moving mark reaches the window's
    end. The due heap keeps, per group, one entry no later than that time (``grp_due_at``), so the passes
    between batches find the groups to wake without scanning every group."""
    m = st.m
    if not m[st.grp_due_listed + g] or due < m[st.grp_due_at + g]:
        m[st.grp_due_at + g] = due
        m[st.grp_due_listed + g] = 1
        heaps.push(m, st.due_keys, st.due_values, SC_DUE_SIZE, due, g)


@njit(cache=True)
def push_fire(st: State, w: int) -> None:
    m = st.m
    g = group_of_window(st, w)
    end = m[st.win_end + w]
    base = m[st.grp_fire_base + g]
    heaps.push(m, st.fire_keys + base, st.fire_values + base, st.grp_fire_size + g, end, w)
    raw = m[st.src_raw + g]  # the event clock's groups are its sources (a key, or the global one)
    if st.event_clock and not st.merged and raw != NONE:
        schedule_due(st, g, m[st.src_set_at + g] + (end + st.delay - raw))


@njit(cache=True)
def push_purge(st: State, w: int) -> None:
    m = st.m
    g = group_of_window(st, w)
    base = m[st.grp_purge_base + g]
    heaps.push(m, st.purge_keys + base, st.purge_values + base, st.grp_purge_size + g,
               m[st.win_end + w] + st.allowed, w)


@njit(cache=True)
def open_window(st: State, w: int) -> None:
    """Window w enters the state (empty, revision 0), last in its key's list, and waits to fire."""
    m = st.m
    k = m[st.win_key + w]
    m[st.win_alive + w] = 1
    m[st.win_fired + w] = 0
    m[st.win_dirty + w] = 0
    m[st.win_late_only + w] = 0
    m[st.win_revision + w] = 0
    m[st.win_head + w] = -1
    m[st.win_tail + w] = -1
    m[st.win_count + w] = 0
    m[st.win_next + w] = -1
    tail = m[st.key_tail + k]
    m[st.win_prev + w] = tail
    if tail >= 0:
        m[st.win_next + tail] = w
    else:
        m[st.key_head + k] = w
    m[st.key_tail + k] = w
    m[SC_ALIVE] += 1
    if st.forget_when_empty:
        m[st.key_waiting + k] += 1
    push_fire(st, w)


@njit(cache=True, inline="always")
def join(m: np.ndarray, prev_at: int, next_at: int, head_at: int, tail_at: int, left: int, right: int) -> None:
    """Make ``left`` and ``right`` neighbours in a doubly linked list of windows whose links are arena columns
    (``prev_at + w``, ``next_at + w``) and whose ends are the cells ``head_at`` and ``tail_at``; −1 is the list's end.
    Taking w out joins its neighbours; putting it between two joins it to each."""
    if left >= 0:
        m[next_at + left] = right
    else:
        m[head_at] = right
    if right >= 0:
        m[prev_at + right] = left
    else:
        m[tail_at] = left


@njit(cache=True)
def remove(st: State, w: int) -> None:
    m = st.m
    k = m[st.win_key + w]
    m[st.win_alive + w] = 0
    m[SC_ALIVE] -= 1
    join(m, st.win_prev, st.win_next, st.key_head + k, st.key_tail + k, m[st.win_prev + w], m[st.win_next + w])


@njit(cache=True, inline="always")
def add_event(st: State, w: int, row: int) -> None:
    """Append event ``row`` to window w's contents; a window with pending late admissions is listed for its
    re-emission (LATE_UPDATE) at commit."""
    m = st.m
    node = m[SC_NODES]
    m[SC_NODES] = node + 1
    m[st.node_row + node] = row
    m[st.node_next + node] = -1
    if st.live_wakeups and (m[st.win_count + w] == 0 or m[st.ev_t + row] < m[st.win_min_t + w]):
        m[st.win_min_t + w] = m[st.ev_t + row]  # (the reference's Window.min_t)
    if m[st.win_head + w] < 0:
        m[st.win_head + w] = node
    else:
        m[st.node_next + m[st.win_tail + w]] = node
    m[st.win_tail + w] = node
    m[st.win_count + w] += 1
    if m[st.win_dirty + w]:
        m[st.dirty + m[SC_DIRTY]] = w
        m[SC_DIRTY] += 1


@njit(cache=True, inline="always")
def within_horizon(st: State, horizon: int, eff: int) -> bool:
    """The reference's ``Lateness.within_horizon``: effective < end + allowed (Beam: ≤), so the window is kept."""
    return horizon >= eff if st.kept_at_horizon else horizon > eff


@njit(cache=True, inline="always")
def admits_late(st: State, end: int, eff: int) -> bool:
    """Allowed lateness: a closed window still takes a late event while within its horizon."""
    return (st.allowed > 0 or st.kept_at_horizon != 0) and within_horizon(st, end + st.allowed, eff)


@njit(cache=True, inline="always")
def admit_fixed(st: State, row: int, t: int, eff: int) -> tuple[bool, bool, bool]:
    """Tumbling/sliding windows. Returns (taken late by a window, refused by a window, taken by a window) and
    notes each pair's (late, admitted)."""
    m = st.m
    ts_late = t < eff
    taken_late = False
    refused_any = False
    taken = False
    for j in range(st.per_event):
        pair = row * st.per_event + j
        w = m[st.window_of + pair]
        if w < 0:
            continue
        end = m[st.win_end + w]
        exists = m[st.win_alive + w] == 1
        fired = exists and m[st.win_fired + w] == 1
        if st.rule_window:
            late = end <= eff or fired
        else:  # (end − length, end] windows: a tuple at the watermark is not behind it, yet its window was evaluated
            late = ts_late or (st.end_inclusive and end <= eff)
        m[st.pair_late + pair] = late
        if not late:
            m[st.win_late_only + w] = 0
            if not exists:
                open_window(st, w)
            elif fired:  # reopened after an idle flush (timestamp rule only)
                m[st.win_fired + w] = 0
                if st.forget_when_empty:
                    m[st.key_waiting + m[st.win_key + w]] += 1
                push_fire(st, w)
        else:
            if not admits_late(st, end, eff):
                refused_any = True
                continue
            taken_late = True
            past = end <= eff  # the watermark had passed the window's end when it took the event
            if not exists:
                open_window(st, w)
                m[st.win_late_only + w] = past
            elif not past:
                m[st.win_late_only + w] = 0
            if fired:
                m[st.win_dirty + w] = 1
        taken = True
        m[st.pair_admitted + pair] = 1
        add_event(st, w, row)
    return taken_late, refused_any, taken


@njit(cache=True)
def admit_session(st: State, row: int, k: int, t: int, eff: int, at: int, raw: int) -> tuple[bool, bool]:
    """An event opens [t, t + gap) and merges with every session of its key it overlaps or touches (Beam: only
    overlaps), in the order the sessions were opened; the one holding most events absorbs the others. Touching
    an emitted session counts as landing in a closed window. Emitting on-update, each session it replaces
    (grows or merges away) is first forwarded as a tombstone at ``at``. Returns (late, refused)."""
    m = st.m
    proto_end = t + st.gap + (1 if st.strict else 0)
    n_touching = 0
    any_fired = False
    late_only = True  # every session it touches took only late events (the reference's Window.late_only)
    w = m[st.key_head + k]
    while w >= 0:
        if st.strict or st.overlap_only:  # Bytewax (its end here is last + gap + 1 µs), Beam: overlap only
            touches = m[st.win_start + w] < proto_end and t < m[st.win_end + w]
        else:
            touches = m[st.win_start + w] <= proto_end and t <= m[st.win_end + w]
        if touches:
            m[st.touching + n_touching] = w
            n_touching += 1
            any_fired = any_fired or m[st.win_fired + w] == 1
            late_only = late_only and m[st.win_late_only + w] == 1
        w = m[st.win_next + w]
    judged_end = proto_end
    if st.on_merge:  # Flink: the session it would merge into decides
        for i in range(n_touching):
            judged_end = max(judged_end, m[st.win_end + m[st.touching + i]])
        closed = judged_end <= eff
    else:
        closed = proto_end <= eff or any_fired
    late = closed if st.rule_window else t < eff
    m[st.ev_session_end + row] = proto_end
    if late and not admits_late(st, judged_end, eff):
        return True, True
    if st.on_update:
        first = m[st.touching]
        unchanged = n_touching == 1 and m[st.win_start + first] == t and m[st.win_end + first] == proto_end
        for i in range(0 if unchanged else n_touching):
            w = m[st.touching + i]
            write_emission(st, w, REASON_TOMBSTONE, at, raw, row, 0)
    if n_touching == 0:
        target = m[SC_WINDOWS]
        m[SC_WINDOWS] = target + 1
        m[st.win_key + target] = k
        m[st.win_start + target] = t
        m[st.win_end + target] = proto_end
        open_window(st, target)
    elif n_touching == 1:
        target = m[st.touching]
    else:
        target = _merge(st, n_touching)
    old_end = m[st.win_end + target]
    m[st.win_start + target] = min(m[st.win_start + target], t)
    m[st.win_end + target] = max(old_end, proto_end)
    grew = m[st.win_end + target] != old_end or n_touching > 1
    m[st.win_late_only + target] = late_only and late and m[st.win_end + target] <= eff
    if late and m[st.win_fired + target]:  # a late event joined an emitted session: it re-fires as an update
        m[st.win_dirty + target] = 1
        if grew:
            push_purge(st, target)
    elif m[st.win_fired + target]:  # after an idle flush (timestamp rule), or extended past the watermark (on_merge)
        m[st.win_fired + target] = 0
        push_fire(st, target)
    elif grew:
        push_fire(st, target)
    add_event(st, target, row)
    m[st.ev_session + row] = target
    m[st.ev_session_late + row] = late
    return late, False


@njit(cache=True)
def _merge(st: State, n: int) -> int:
    """Merge the touching sessions into the one holding most events (ties: the one opened first)."""
    m = st.m
    touching = st.touching
    for i in range(1, n):  # stable insertion sort by count, descending
        w = m[touching + i]
        j = i - 1
        while j >= 0 and m[st.win_count + m[touching + j]] < m[st.win_count + w]:
            m[touching + j + 1] = m[touching + j]
            j -= 1
        m[touching + j + 1] = w
    target: int = m[touching]
    for i in range(1, n):
        w = m[touching + i]
        if m[st.win_count + w] > 0:
            if m[st.win_head + target] < 0:
                m[st.win_head + target] = m[st.win_head + w]
            else:
                m[st.node_next + m[st.win_tail + target]] = m[st.win_head + w]
            m[st.win_tail + target] = m[st.win_tail + w]
            m[st.win_count + target] += m[st.win_count + w]
        m[st.win_start + target] = min(m[st.win_start + target], m[st.win_start + w])
        m[st.win_end + target] = max(m[st.win_end + target], m[st.win_end + w])
        m[st.win_revision + target] = max(m[st.win_revision + target], m[st.win_revision + w])
        if m[st.win_fired + w]:
            m[st.win_fired + target] = 1
        m[st.win_into + w] = target
        remove(st, w)
    return target
