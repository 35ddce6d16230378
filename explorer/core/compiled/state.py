"""The compiled kernel's state: one int64 arena and the ints that say where each of its tables starts.

It is a module of its own so that every kernel module can name the state's type (``st: State``) and a
reader can find a field: ``State`` lists each by name, in the order the kernel's tuple holds them, where
it used to be a namedtuple built from lists of names no tool could follow. ``plan.prepare`` fills it;
``tests/test_kernel_state.py`` fails when a rule or a table is added to one list and not to ``State``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from explorer.core.compiled.layout import NONE

Arena = npt.NDArray[np.int64]  # the one int64 array every table lives in (``State.m``)

# The state's tables in the arena: (name, dimension, initial value). Each name becomes a State field
# holding where the table starts; the dimension names a size computed in ``plan.prepare``.
TABLES: tuple[tuple[str, str, int | None], ...] = (
    # per event, in arrival order
    ("ev_t", "events", None), ("ev_arrival", "events", None), ("ev_key", "events", None),
    ("ev_partition", "events", None), ("ev_source", "events", None), ("ev_group", "events", None),
    ("ev_status", "events", 0), ("ev_seen_raw", "events", 0),
    ("ev_held_next", "events", -1),
    # sessions: the session each event joined (−1: refused), whether it was late, its own [t, t + gap) end
    ("ev_session", "session_events", -1), ("ev_session_late", "session_events", 0),
    ("ev_session_end", "session_events", 0),
    # batches: first event of each (and the end), commit times, first arrival, scripted watermark (or NO_SCRIPTED)
    ("batch_start", "batch_starts", None), ("commit", "batches", None), ("batch_open", "batches", None),
    ("batch_scripted", "batches", None),
    # fixed windows: each (event, j) pair's window id, whether it was late for it and admitted to it
    ("window_of", "pairs", None), ("pair_late", "pairs", 0), ("pair_admitted", "pairs", 0),
    # per watermark source (a key, a partition, or the one global source)
    ("src_raw", "sources", NONE), ("src_set_at", "sources", 0), ("src_batch_min", "sources", 0),
    ("src_batch_max", "sources", 0), ("src_stamp", "sources", 0), ("src_touched", "sources", 0),
    ("src_trace", "sources", 0), ("src_pending", "sources", 0), ("src_pending_value", "sources", 0),
    # per partition (Flink's withIdleness): a record since the last periodic emit, its inactivity clock's start (or
    # NONE), idle; the partitions with a record since the last emit and those waiting for a clock (lists); the
    # heap of clocks, by start
    ("part_active", "partitions", 0), ("part_quiet_from", "partitions", NONE), ("part_idle", "partitions", 0),
    ("part_listed", "partitions", 0), ("part_reset", "partitions", None),
    ("part_heap_keys", "part_heap", 0), ("part_heap_values", "part_heap", 0),
    # the partition merge's tournament tree (root at 1, leaves from merge_leaves; watermarks.merge_changed)
    ("merge_tree", "merge_tree", None),
    # per group of windows that share a closing watermark
    ("grp_max_seen", "groups", NONE), ("grp_stamp", "groups", 0), ("grp_touched", "groups", 0),
    ("grp_fire_base", "groups", None), ("grp_fire_size", "groups", 0), ("grp_purge_base", "groups", None),
    ("grp_purge_size", "groups", 0), ("grp_due_at", "groups", 0), ("grp_due_listed", "groups", 0),
    # per key
    ("key_group", "keys", None), ("key_last", "keys", NONE), ("key_deadline", "keys", 0),
    ("key_has_deadline", "keys", 0), ("key_head", "keys", -1), ("key_tail", "keys", -1),
    ("key_waiting", "keys", 0),  # windows alive and not fired, kept only with forget_empty (fixed windows)
    # Bytewax's live wake-ups (core/wakeups.py), per key (its group): the effective watermark at its last run and
    # its queue of taken items in arrival order (linked through ev_held_next); each window's earliest item below
    ("grp_flushed", "groups", NONE), ("grp_held_head", "groups", -1), ("grp_held_tail", "groups", -1),
    # per window
    ("win_key", "windows", None), ("win_start", "windows", None), ("win_end", "windows", None),
    ("win_alive", "windows", 0), ("win_fired", "windows", 0), ("win_dirty", "windows", 0),
    ("win_late_only", "windows", 0),  # the reference's Window.late_only
    ("win_revision", "windows", 0), ("win_head", "windows", -1), ("win_tail", "windows", -1),
    ("win_count", "windows", 0), ("win_into", "windows", -1), ("win_prev", "windows", -1),
    ("win_next", "windows", -1), ("win_min_t", "windows", 0),
    # window contents: one node per admission
    ("node_row", "nodes", 0), ("node_next", "nodes", 0),
    # heaps (keys, values): fire and purge in blocks per group, idle (per key) and due (event clock)
    ("fire_keys", "fire", 0), ("fire_values", "fire", 0), ("purge_keys", "purge", 0),
    ("purge_values", "purge", 0), ("idle_keys", "idle", 0), ("idle_values", "idle", 0),
    ("due_keys", "due", 0), ("due_values", "due", 0),
    # scratch: windows to re-emit at commit, sessions an event touches
    ("dirty", "dirty", 0), ("touching", "touching", 0),
    # the records
    ("emissions", "emission_slots", 0), ("trace", "trace_slots", 0),
    # Kafka Streams' sliding windows (compiled/kstreams.py; empty for other kinds): each window's aggregate
    # timestamp (ms) and its place in its key's list by start; per group, the store's newest start and its heap of
    # starts to expire; the windows a record took; every (event, window) decision
    ("win_stamp", "sw_windows", 0), ("win_sw_prev", "sw_windows", -1), ("win_sw_next", "sw_windows", -1),
    ("key_sw_head", "sw_keys", -1), ("key_sw_tail", "sw_keys", -1),
    ("grp_store_time", "sw_groups", NONE), ("grp_exp_base", "sw_groups", None), ("grp_exp_size", "sw_groups", 0),
    ("exp_keys", "expiry", 0), ("exp_values", "expiry", 0), ("taken", "taken", 0), ("kpairs", "kpair_slots", 0),
)
SIZE_FIELDS = ("n_events", "n_batches", "per_event", "n_sources", "n_groups", "n_windows", "emissions_capacity",
               "trace_capacity", "merge_leaves", "sw_diff", "sw_retention", "kpairs_capacity")


class State(NamedTuple):
    """What every kernel function reads: ``m``, the rules (``core.rules.RULE_NAMES``), the sizes
    (``SIZE_FIELDS``), then each table's start (``TABLES``), in that order. numba reads it as a tuple of one
    array and ints, and compiles each field access to a constant offset."""

    m: Arena  # the arena: the run's scalars (layout.SC_*), then every table
    # the rules (core.rules.RULE_NAMES, as_ints: bools as 0/1, off as OFF)
    processing: int
    one_watermark: int
    strategy_min: int
    per_batch: int
    bounded: int
    event_clock: int
    scripted: int
    bound: int
    watermark_unit: int
    delay: int
    per_key: int
    merged: int
    pick_min: int
    per_partition: int
    backlog: int
    source_idle_timeout: int
    source_idle_every: int
    session: int
    gap: int
    end_inclusive: int
    from_zero: int
    strict: int
    on_merge: int
    overlap_only: int
    sessions_kept: int
    forget_when_empty: int
    live_wakeups: int
    allowed: int
    rule_window: int
    refuse_every: int
    kept_at_horizon: int
    idle_timeout: int
    idle_processing: int
    heartbeat: int
    on_update: int
    late_at_once: int
    # sizes
    n_events: int
    n_batches: int
    per_event: int
    n_sources: int
    n_groups: int
    n_windows: int
    emissions_capacity: int
    trace_capacity: int
    merge_leaves: int
    sw_diff: int  # Kafka Streams' sliding windows: D in ms (0: another kind)
    sw_retention: int  # ... the window store's retention, 2·D + grace, in ms
    kpairs_capacity: int
    # where each table starts in the arena (TABLES)
    ev_t: int
    ev_arrival: int
    ev_key: int
    ev_partition: int
    ev_source: int
    ev_group: int
    ev_status: int
    ev_seen_raw: int
    ev_held_next: int
    ev_session: int
    ev_session_late: int
    ev_session_end: int
    batch_start: int
    commit: int
    batch_open: int
    batch_scripted: int
    window_of: int
    pair_late: int
    pair_admitted: int
    src_raw: int
    src_set_at: int
    src_batch_min: int
    src_batch_max: int
    src_stamp: int
    src_touched: int
    src_trace: int
    src_pending: int
    src_pending_value: int
    part_active: int
    part_quiet_from: int
    part_idle: int
    part_listed: int
    part_reset: int
    part_heap_keys: int
    part_heap_values: int
    merge_tree: int
    grp_max_seen: int
    grp_stamp: int
    grp_touched: int
    grp_fire_base: int
    grp_fire_size: int
    grp_purge_base: int
    grp_purge_size: int
    grp_due_at: int
    grp_due_listed: int
    key_group: int
    key_last: int
    key_deadline: int
    key_has_deadline: int
    key_head: int
    key_tail: int
    key_waiting: int
    grp_flushed: int
    grp_held_head: int
    grp_held_tail: int
    win_key: int
    win_start: int
    win_end: int
    win_alive: int
    win_fired: int
    win_dirty: int
    win_late_only: int
    win_revision: int
    win_head: int
    win_tail: int
    win_count: int
    win_into: int
    win_prev: int
    win_next: int
    win_min_t: int
    node_row: int
    node_next: int
    fire_keys: int
    fire_values: int
    purge_keys: int
    purge_values: int
    idle_keys: int
    idle_values: int
    due_keys: int
    due_values: int
    dirty: int
    touching: int
    emissions: int
    trace: int
    win_stamp: int
    win_sw_prev: int
    win_sw_next: int
    key_sw_head: int
    key_sw_tail: int
    grp_store_time: int
    grp_exp_base: int
    grp_exp_size: int
    exp_keys: int
    exp_values: int
    taken: int
    kpairs: int
