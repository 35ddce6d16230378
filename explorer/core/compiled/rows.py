"""The records the kernel leaves: emission rows and watermark trace rows, written where decisions are made
(firing, and a session's admission, which forwards Kafka Streams' tombstones before it changes a session)."""

from __future__ import annotations

from numba import njit

from explorer.core.compiled.layout import (EM_AT, EM_BATCH, EM_COUNT, EM_END, EM_FIELDS, EM_HEAD, EM_KEY, EM_MAX_SEEN,
                                           EM_RAW, EM_REASON, EM_REVISION, EM_ROW, EM_START, SC_BATCH, SC_EMISSIONS,
                                           SC_TRACE, TR_AT, TR_BATCH, TR_FIELDS, TR_KIND, TR_RAW, TR_SOURCE)
from explorer.core.compiled.state import State


@njit(cache=True, inline="always")
def group_of_window(st: State, w: int) -> int:
    g: int = st.m[st.key_group + st.m[st.win_key + w]]
    return g


@njit(cache=True, inline="always")
def _next_row(st: State, count_slot: int, capacity: int) -> tuple[bool, int]:
    """(whether it fits, index) of the next record. Records past the table's end are counted, not written:
    the caller runs again with tables of the counted size (``plan.run_kernel``)."""
    n = st.m[count_slot]
    st.m[count_slot] = n + 1
    return n < capacity, n


@njit(cache=True, inline="always")
def write_emission(st: State, w: int, reason: int, at: int, raw: int, record: int, count: int) -> None:
    """Window w as it is now, emitted for ``reason`` with ``count`` events (``record``: the event an UPDATE or
    a tombstone carries, else −1)."""
    fits, n = _next_row(st, SC_EMISSIONS, st.emissions_capacity)
    if not fits:
        return
    m = st.m
    row = st.emissions + n * EM_FIELDS
    m[row + EM_KEY] = m[st.win_key + w]
    m[row + EM_START] = m[st.win_start + w]
    m[row + EM_END] = m[st.win_end + w]
    m[row + EM_COUNT] = count
    m[row + EM_HEAD] = m[st.win_head + w]
    m[row + EM_BATCH] = m[SC_BATCH]
    m[row + EM_AT] = at
    m[row + EM_RAW] = raw
    m[row + EM_REASON] = reason
    m[row + EM_REVISION] = m[st.win_revision + w]
    m[row + EM_MAX_SEEN] = m[st.grp_max_seen + group_of_window(st, w)]
    m[row + EM_ROW] = record


@njit(cache=True, inline="always")
def write_trace(st: State, source: int, at: int, raw: int, kind: int) -> None:
    fits, n = _next_row(st, SC_TRACE, st.trace_capacity)
    if fits:
        m = st.m
        row = st.trace + n * TR_FIELDS
        m[row + TR_BATCH] = m[SC_BATCH]
        m[row + TR_AT] = at
        m[row + TR_SOURCE] = source
        m[row + TR_RAW] = raw
        m[row + TR_KIND] = kind
