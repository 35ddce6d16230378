"""When windows fire, compiled: by watermark, by idle timeout (idleness per key, on either clock), by the
event clock's passing time between batches, and when the input runs out. Also the pipeline heartbeat,
and the purge of windows past their allowed lateness; each decision leaves its record (``rows``).

Heaps hold (end, window) entries lazily: an entry counts only while its window is alive, unfired and still
ends there, exactly as in the reference engine.
"""

from __future__ import annotations

from numba import njit

from explorer.core.compiled import heaps
from explorer.core.compiled.layout import (KIND_HEARTBEAT, NONE, REASON_IDLE_TIMEOUT, REASON_LATE_UPDATE, REASON_UPDATE,
                                           REASON_WATERMARK, SC_CLOCK, SC_DUE_SIZE, SC_IDLE_SIZE, SC_NOW, TRACE_ALL_SOURCES)
from explorer.core.compiled.watermarks import effective, group_raw, source_raw
from explorer.core.compiled.rows import write_emission, write_trace
from explorer.core.compiled.windows import push_purge, remove, schedule_due, within_horizon
from explorer.core.compiled.state import State


@njit(cache=True)
def emit(st: State, w: int, reason: int, at: int, raw: int, record: int = -1) -> None:
    """Record an emission of window w. On-update only an UPDATE emits (``record``: the event it carries)."""
    m = st.m
    if st.on_update and reason != REASON_UPDATE:
        return
    m[st.win_revision + w] += 1
    write_emission(st, w, reason, at, raw, record, m[st.win_count + w])


@njit(cache=True)
def fire(st: State, w: int, reason: int, at: int, raw: int) -> None:
    """The reference's ``Engine.fire``: a window only late events filled fires as a LATE_UPDATE."""
    m = st.m
    if reason == REASON_WATERMARK and m[st.win_late_only + w]:
        reason = REASON_LATE_UPDATE
    m[st.win_fired + w] = 1
    emit(st, w, reason, at, raw)
    push_purge(st, w)
    if st.forget_when_empty:
        k = m[st.win_key + w]
        m[st.key_waiting + k] -= 1
        if m[st.key_waiting + k] == 0:  # Bytewax: the emptied key's state goes, clock included
            while m[st.key_head + k] >= 0:
                remove(st, m[st.key_head + k])
            m[st.src_raw + k] = NONE
            if st.live_wakeups:  # (its queue is all released by now)
                g = m[st.key_group + k]
                m[st.grp_flushed + g] = NONE
                m[st.grp_held_head + g] = -1
                m[st.grp_held_tail + g] = -1


@njit(cache=True, inline="always")
def _fire_top(st: State, g: int) -> tuple[int, int, bool]:
    """(end, window, whether the entry still counts) at the top of group g's fire heap."""
    m = st.m
    base = m[st.grp_fire_base + g]
    end, w = m[st.fire_keys + base], m[st.fire_values + base]
    return end, w, m[st.win_alive + w] == 1 and m[st.win_fired + w] == 0 and m[st.win_end + w] == end


@njit(cache=True, inline="always")
def _pop_fire(st: State, g: int) -> None:
    base = st.m[st.grp_fire_base + g]
    heaps.pop(st.m, st.fire_keys + base, st.fire_values + base, st.grp_fire_size + g)


@njit(cache=True)
def clean_fire_top(st: State, g: int) -> bool:
    """Drop stale entries from the top of group g's fire heap; True when a live one is left."""
    while st.m[st.grp_fire_size + g] > 0:
        if _fire_top(st, g)[2]:
            return True
        _pop_fire(st, g)
    return False


@njit(cache=True, inline="always")
def fire_ready(st: State, g: int, at: int) -> None:
    """Fire every window of group g whose end the effective watermark has reached."""
    if st.m[st.grp_fire_size + g] > 0:
        _fire_ready(st, g, at)


@njit(cache=True)
def _fire_ready(st: State, g: int, at: int) -> None:
    raw = group_raw(st, g)
    eff = effective(raw, st.delay)
    while st.m[st.grp_fire_size + g] > 0:
        end, w, valid = _fire_top(st, g)
        if end > eff:
            break
        _pop_fire(st, g)
        if valid:
            fire(st, w, REASON_WATERMARK, at, raw)


@njit(cache=True, inline="always")
def purge(st: State, g: int) -> None:
    """Drop fired windows whose end + allowed lateness the effective watermark has passed (none with
    ``sessions_kept``: the reference's ``Engine.purge``)."""
    if st.m[st.grp_purge_size + g] > 0 and not st.sessions_kept:
        _purge(st, g)


@njit(cache=True)
def _purge(st: State, g: int) -> None:
    m = st.m
    size = st.grp_purge_size + g
    eff = effective(group_raw(st, g), st.delay)
    base = m[st.grp_purge_base + g]
    keys, values = st.purge_keys + base, st.purge_values + base
    while m[size] > 0:
        w = m[values]
        # an entry counts while its window still ends there (a session that grew after firing has a newer one)
        held = m[st.win_alive + w] == 1 and m[st.win_fired + w] == 1 and m[st.win_end + w] + st.allowed == m[keys]
        if held and within_horizon(st, m[keys], eff):
            break
        heaps.pop(m, keys, values, size)
        if held:
            remove(st, w)


@njit(cache=True)
def touch_key(st: State, k: int, basis: int) -> None:
    """Idleness per key: the key's silence now counts from ``basis`` (its newest time on the idle clock)."""
    m = st.m
    last = max(basis, m[st.key_last + k])
    m[st.key_last + k] = last
    deadline = last + st.idle_timeout
    m[st.key_deadline + k] = deadline
    m[st.key_has_deadline + k] = 1
    heaps.push(m, st.idle_keys, st.idle_values, SC_IDLE_SIZE, deadline, k)


@njit(cache=True, inline="always")
def _clean_idle_top(st: State) -> bool:
    m = st.m
    while m[SC_IDLE_SIZE] > 0:
        k = m[st.idle_values]
        if m[st.key_has_deadline + k] and m[st.key_deadline + k] == m[st.idle_keys]:
            return True
        heaps.pop(m, st.idle_keys, st.idle_values, SC_IDLE_SIZE)
    return False


@njit(cache=True)
def check_idle(st: State, now: int, at: int) -> None:
    """Flush the windows of every key silent for the idle timeout by ``now``."""
    m = st.m
    while _clean_idle_top(st) and m[st.idle_keys] <= now:
        k = m[st.idle_values]
        heaps.pop(m, st.idle_keys, st.idle_values, SC_IDLE_SIZE)
        m[st.key_has_deadline + k] = 0
        raw = group_raw(st, m[st.key_group + k])
        w = m[st.key_head + k]
        while w >= 0:
            if m[st.win_fired + w] == 0:
                fire(st, w, REASON_IDLE_TIMEOUT, at, raw)
            w = m[st.win_next + w]


@njit(cache=True, inline="always")
def _next_deadline(st: State) -> tuple[bool, int]:
    """(found, the earliest processing time at which a heartbeat could change something)."""
    found = False
    best = NONE
    if st.idle_timeout >= 0 and st.idle_processing and _clean_idle_top(st):
        best = st.m[st.idle_keys]
        found = True
    if st.processing and clean_fire_top(st, 0):
        due = _fire_top(st, 0)[0] + st.delay
        if not found or due < best:
            best = due
        found = True
    return found, best


@njit(cache=True, inline="always")
def heartbeats_matter(st: State) -> bool:
    """Whether a heartbeat can change anything: idleness on the processing clock, or processing time."""
    return st.processing != 0 or (st.idle_timeout >= 0 and st.idle_processing != 0)


@njit(cache=True)
def heartbeats(st: State, before: int, bounded: bool) -> None:
    """Run the pipeline heartbeats that tick (on multiples of the interval) before ``before`` (or all of
    them, when not ``bounded``: the input has run out)."""
    m = st.m
    every = st.heartbeat
    while True:
        found, deadline = _next_deadline(st)
        if not found:
            return
        tick = -((-deadline) // every) * every
        if m[SC_CLOCK] != NONE:
            tick = max(tick, (m[SC_CLOCK] // every + 1) * every)
        if bounded and tick >= before:
            return
        m[SC_CLOCK] = tick
        if st.processing:
            fire_ready(st, 0, tick)
            m[st.src_trace] = 0
            record_trace(st, 1, tick, KIND_HEARTBEAT)
        if st.idle_processing:
            check_idle(st, tick, tick)
        if st.processing:
            purge(st, 0)


@njit(cache=True)
def _due(st: State, g: int) -> tuple[bool, int]:
    """(found, when group g's moving event-clock mark reaches its earliest waiting window's end); with live
    wake-ups, when the key next runs (the reference's ``LiveWakeups.next_run``)."""
    raw = st.m[st.src_raw + g]
    if st.live_wakeups:
        return _next_run(st, g, raw)
    if raw == NONE or not clean_fire_top(st, g):
        return False, NONE
    return True, st.m[st.src_set_at + g] + (_fire_top(st, g)[0] + st.delay - raw)


@njit(cache=True)
def _next_run(st: State, g: int, raw: int) -> tuple[bool, int]:
    """Bytewax on the system clock: the key runs at the earlier of its first open window's end (one holding an item
    at or below the watermark of its last run) and its first held-back item's time, or, once that has passed, when
    its watermark reaches the next end or that item."""
    m = st.m
    flushed = m[st.grp_flushed + g]
    if raw == NONE or flushed == NONE:
        return False, NONE
    h = m[st.grp_held_head + g]
    while h >= 0 and m[st.ev_t + h] <= flushed:  # released (in order: the watermark never goes back)
        h = m[st.ev_held_next + h]
    m[st.grp_held_head + g] = h
    if h < 0:
        m[st.grp_held_tail + g] = -1
    never = -NONE
    notify = change = m[st.ev_t + h] if h >= 0 else never
    base = m[st.grp_fire_base + g]
    for i in range(m[st.grp_fire_size + g]):  # every window waiting to fire has an entry that counts
        end, w = m[st.fire_keys + base + i], m[st.fire_values + base + i]
        if m[st.win_alive + w] == 1 and m[st.win_fired + w] == 0 and m[st.win_end + w] == end:
            change = min(change, end)
            if m[st.win_min_t + w] <= flushed:
                notify = min(notify, end)
    if notify == never:
        return False, NONE
    return True, max(notify, m[st.src_set_at + g] + (change + st.delay - raw))


@njit(cache=True)
def ran(st: State, g: int) -> None:
    """The key's logic ran: its items up to the effective watermark are released; when it runs next may change."""
    raw = st.m[st.src_raw + g]
    if raw != NONE:  # (not when it has just been forgotten)
        st.m[st.grp_flushed + g] = effective(group_raw(st, g), st.delay)
        reschedule_due(st, g)


@njit(cache=True)
def hold(st: State, g: int, row: int) -> None:
    """An event joined the key's windows: last in its queue."""
    m = st.m
    tail = m[st.grp_held_tail + g]
    if tail >= 0:
        m[st.ev_held_next + tail] = row
    else:
        m[st.grp_held_head + g] = row
    m[st.grp_held_tail + g] = row


@njit(cache=True)
def event_clock_passes(st: State, until: int) -> None:
    """Between batches an event clock keeps advancing: each window closes at the exact processing time its
    watermark reaches the end (Bytewax wakes the operator then), stamped with the batch before. Groups are
    independent, so each is taken in the order of its own due times."""
    m = st.m
    if not st.merged:
        while m[SC_DUE_SIZE] > 0 and m[st.due_keys] < until:  # (engine.event_clock_passes: strictly before)
            listed, g = m[st.due_keys], m[st.due_values]
            heaps.pop(m, st.due_keys, st.due_values, SC_DUE_SIZE)
            if not m[st.grp_due_listed + g] or m[st.grp_due_at + g] != listed:
                continue  # superseded by an earlier entry
            m[st.grp_due_listed + g] = 0
            found, at = _due(st, g)
            if found and at <= listed:
                m[SC_NOW] = at
                fire_ready(st, g, at)
                if st.live_wakeups and m[st.src_raw + g] != NONE:  # (a forgotten key has no watermark to run with)
                    m[st.grp_flushed + g] = effective(group_raw(st, g), st.delay)
                found, at = _due(st, g)
            if found:
                schedule_due(st, g, at)
    m[SC_NOW] = until


@njit(cache=True)
def reschedule_due(st: State, g: int) -> None:
    """The event clock's mark of group g was fast-forwarded: its windows are due earlier."""
    found, at = _due(st, g)
    if found:
        schedule_due(st, g, at)


@njit(cache=True, inline="always")
def record_trace(st: State, n_sources: int, at: int, kind: int) -> None:
    """One trace row per source listed at ``src_trace`` (sorted here, in place), then the merged row."""
    m = st.m
    listed = m[st.src_trace:st.src_trace + n_sources]
    if n_sources > 1:
        listed.sort()
    for i in range(n_sources):
        s = listed[i]
        raw = m[SC_CLOCK] if st.processing else source_raw(st, s)
        write_trace(st, s, at, raw, kind)
    if st.merged:
        write_trace(st, TRACE_ALL_SOURCES, at, group_raw(st, 0), kind)
