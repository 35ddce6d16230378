"""What the compiled kernel needs, prepared in numpy: the configuration as integers, the events as code
arrays, fixed windows' ids, and every table sized from a proven bound, so the kernel never allocates.

What depends only on the stream (codes, batches, window ids for a window spec) is cached on the Stream:
a slider step or a 41-point sweep prepares it once.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pandas as pd

from explorer.config import RunConfig, WindowKind
from explorer.core.compiled import layout as L
from explorer.core.compiled.state import TABLES, State
from explorer.core.kstreams_sliding import reach as kstreams_reach
from explorer.core.rules import as_ints, derive
from explorer.streams import Batches, Stream, batches_for

def kernel_config(config: RunConfig) -> dict[str, int]:
    """The configuration as the kernel's named ints: the rules every engine reads (``core.rules``)."""
    return as_ints(derive(config))


@dataclass(frozen=True)
class EventCodes:
    """The stream as the kernel reads it: times in µs and text columns as integer codes (sorted names)."""

    t: npt.NDArray[np.int64]  # event time, or arrival time under processing time
    arrival: npt.NDArray[np.int64]
    key: npt.NDArray[np.int64]
    key_names: npt.NDArray[np.object_]
    partition: npt.NDArray[np.int64]
    partition_names: npt.NDArray[np.object_]


def event_codes(stream: Stream, processing: bool) -> EventCodes:
    def make() -> EventCodes:
        ev = stream.events
        arrival = ev["arrival_time"].to_numpy(dtype=np.int64)
        t = arrival if processing else ev["event_time"].to_numpy(dtype=np.int64)
        key, key_names = stream.codes("key")
        partition, partition_names = stream.codes("partition")
        return EventCodes(np.ascontiguousarray(t), np.ascontiguousarray(arrival), key, key_names, partition,
                          partition_names)
    return stream.cached(("compiled-codes", processing), make)


@dataclass(frozen=True)
class FixedWindows:
    """Every (event, window) pair of tumbling, sliding or cumulate windows: ``window_of[event, j]`` is the id of the
    event's j-th window, latest start first (cumulate: earliest end first; as the reference engine visits them), or
    −1 past its last."""

    window_of: npt.NDArray[np.int64]
    key: npt.NDArray[np.int64]
    start: npt.NDArray[np.int64]
    end: npt.NDArray[np.int64]
    full: bool  # every event has all its windows (no −1): tumbling windows, and sliding ones a whole number of slides long


def fixed_windows(stream: Stream, config: RunConfig) -> FixedWindows:
    window, rules = config.window, derive(config)
    cumulate = window.kind is WindowKind.CUMULATE
    cache_key = ("compiled-windows", cumulate, window.size, window.slide, window.offset, rules.end_inclusive,
                 rules.from_zero, rules.processing)
    if cumulate:
        return stream.cached(cache_key, lambda: _cumulative_windows(event_codes(stream, rules.processing), window.size,
                                                                    window.slide, rules.end_inclusive, window.offset))
    return stream.cached(cache_key, lambda: _fixed_windows(event_codes(stream, rules.processing), window.size,
                                                            window.slide, rules.end_inclusive, rules.from_zero,
                                                            window.offset))


def _fixed_windows(codes: EventCodes, size: int, slide: int, end_inclusive: bool, from_zero: bool,
                   offset: int) -> FixedWindows:
    """Every event's windows (as ``windows.fixed_spans`` lists them), on whole columns; a window is named by its
    slot k (start = offset + k × slide)."""
    placed = codes.t - 1 if end_inclusive else codes.t  # (start, end] as [start, end) one µs on
    per_event = -(-size // slide)
    latest = (placed - offset if offset else placed) // slide  # the slot of the event's latest window
    slots = latest[:, None] - np.arange(per_event, dtype=np.int64)[None, :] if per_event > 1 else latest[:, None]
    # a window a whole number of slides long always holds each of its per_event candidates (the latest starts
    # after placed − slide): then no mask is made or copied through (tumbling windows, 10M events: 0.4 s)
    every = size % slide == 0 and not from_zero
    if not every:
        starts = slots * slide + offset
        valid = starts > (placed - size)[:, None]
        if from_zero:
            valid &= (starts >= 0) | (placed < 0)[:, None]
        del starts
        every = bool(valid.all())
    window_of, w_key, w_slot = _name_windows(codes.key, len(codes.key_names), slots, None if every else valid)
    w_start = w_slot * slide + offset
    return FixedWindows(window_of, w_key, w_start, w_start + size, every)


def _cumulative_windows(codes: EventCodes, size: int, step: int, end_inclusive: bool, offset: int) -> FixedWindows:
    """Every event's cumulate windows (as ``windows.cumulative_spans`` lists them, earliest end first), on whole
    columns. Several share a start, so a window is named by its end's slot m (end = offset + m × step); its start
    is the last multiple of the size before that end."""
    placed = codes.t - 1 if end_inclusive else codes.t
    steps = size // step
    first = (placed - offset) // step + 1  # the slot of the event's first end
    last = ((placed - offset) // size + 1) * steps  # ... and of its last, the start's + size
    slots = first[:, None] + np.arange(steps, dtype=np.int64)[None, :]
    valid = None if steps == 1 else slots <= last[:, None]
    window_of, w_key, w_slot = _name_windows(codes.key, len(codes.key_names), slots, valid)
    w_end = w_slot * step + offset
    w_start = (w_slot - 1) // steps * size + offset
    return FixedWindows(window_of, w_key, w_start, w_end, steps == 1)


def _name_windows(key: npt.NDArray[np.int64], n_keys: int, slots: npt.NDArray[np.int64],
                  valid: npt.NDArray[np.bool_] | None) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64],
                                                                npt.NDArray[np.int64]]:
    """Number the (key, slot) pairs of the ``valid`` candidates (None: all) in order of first appearance: the
    ``window_of`` table (−1 where not valid), and each window's key and slot."""
    slot = slots.ravel() if valid is None else slots[valid]
    keys = np.broadcast_to(key[:, None], slots.shape)
    keys = keys.ravel() if valid is None else keys[valid]
    low = int(slot.min())
    span = int(slot.max()) - low + 1
    if span * (n_keys + 1) < 2**62:
        ids, uniques = pd.factorize(keys * span + (slot - low))
        w_key, w_slot = uniques // span, uniques % span + low
    else:  # too wide for one int64 code: factorize the pairs
        pairs, ids = np.unique(np.stack([keys, slot], axis=1), axis=0, return_inverse=True)
        w_key, w_slot = pairs[:, 0], pairs[:, 1]
    if valid is None:
        window_of = np.asarray(ids, dtype=np.int64).reshape(slots.shape)
    else:
        window_of = np.full(slots.shape, -1, dtype=np.int64)
        window_of[valid] = ids
    return window_of, np.asarray(w_key, dtype=np.int64), np.asarray(w_slot, dtype=np.int64)


@dataclass
class Prepared:
    """The state for one run, and what is needed to read it back."""

    state: State
    codes: EventCodes
    source_names: npt.NDArray[np.object_]
    windows: FixedWindows | None
    sizes: dict[str, int]  # each table's length, by its State name
    memory: mmap.mmap  # the arena's pages (``release``)
    released: set[str] = field(default_factory=set)

    def table(self, name: str, size: int | None = None) -> npt.NDArray[np.int64]:
        """A table of the arena by its State name (a view)."""
        assert name not in self.released, f"{name} was released"
        start = getattr(self.state, name)
        return self.state.m[start:start + (self.sizes[name] if size is None else size)]

    def release(self, names: Iterable[str]) -> None:
        """Hand the pages of tables that will not be read again back to the system. The Result is read out of
        the arena table by table (``tables.result``), so the arena (~250 B an event) shrinks as the Result grows
        rather than staying whole beside it; a released table reads as zeros, so ``table`` refuses it."""
        for name in names:
            if name in self.released:
                continue
            self.released.add(name)
            self.release_head(name, self.sizes[name])

    def release_head(self, name: str, slots: int) -> None:
        """Hand back the whole pages of a table's first ``slots`` slots: a table copied out a block of rows at a
        time (the trace: 400 MB at 10M events) is given back as it goes, not after its last row."""
        begin = getattr(self.state, name) * 8
        first = -(-begin // mmap.PAGESIZE) * mmap.PAGESIZE
        last = (begin + slots * 8) // mmap.PAGESIZE * mmap.PAGESIZE
        if last > first and hasattr(mmap, "MADV_DONTNEED"):  # (Linux and macOS; elsewhere it stays)
            self.memory.madvise(mmap.MADV_DONTNEED, first, last - first)


def _merge_tree(n_partitions: int, leaves: int, pick_min: bool) -> npt.NDArray[np.int64]:
    """The merge tree before the first record: no partition has a mark yet; padding leaves never win."""
    absent = L.ABSENT_FROM_MIN if pick_min else L.ABSENT_FROM_MAX
    tree = np.full(2 * leaves, absent, dtype=np.int64)
    tree[leaves:leaves + n_partitions] = L.NO_MARK_YET
    pick = np.minimum if pick_min else np.maximum
    for pos in range(leaves - 1, 0, -1):
        tree[pos] = pick(tree[2 * pos], tree[2 * pos + 1])
    return tree


MS = 1000  # Kafka Streams' millisecond


def _blocks(bound_per_group: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    return np.concatenate([[0], np.cumsum(bound_per_group)[:-1]]).astype(np.int64)


def _touched(batches: Batches, source: npt.NDArray[np.int64], n_sources: int, largest: int) -> int:
    """How many (batch, source) pairs have an event: a trace row each. Counted without hashing every event when
    each batch holds at most one (``largest``: the default, a batch per event) or there is one source."""
    if n_sources == 1 or largest <= 1:
        return int(np.count_nonzero(np.diff(batches.starts)))
    return len(pd.unique(batches.number * n_sources + source))


def prepare(stream: Stream, config: RunConfig, emissions: int | None = None, trace: int | None = None) -> Prepared:
    settings = kernel_config(config)
    processing = bool(settings["processing"])
    codes = event_codes(stream, processing)
    batches = batches_for(stream, config)
    n, n_keys, n_parts = len(codes.t), len(codes.key_names), len(codes.partition_names)
    if settings["per_key"]:
        source, source_names = codes.key, codes.key_names
    elif settings["merged"] or settings["per_partition"]:
        source, source_names = codes.partition, codes.partition_names
    else:
        source, source_names = np.zeros(n, dtype=np.int64), np.array(["*"], dtype=object)
    key_group: npt.NDArray[np.int64] | int  # a table, or 0 for the one global group
    if settings["per_key"]:
        group, n_groups, key_group = codes.key, n_keys, np.arange(n_keys)
    elif settings["per_partition"]:  # a group per partition, which is also its source; each key in one
        group, n_groups = codes.partition, n_parts
        key_group = np.zeros(n_keys, dtype=np.int64)
        key_group[codes.key] = codes.partition
    else:
        group, n_groups, key_group = np.zeros(n, dtype=np.int64), 1, 0
    events_per_group = np.bincount(group, minlength=n_groups).astype(np.int64)
    record_windows = config.window.kind is WindowKind.KSTREAMS_SLIDING
    window_key: npt.NDArray[np.int64] | int = 0  # (sessions and Kafka's sliding windows: allocated as they open)
    window_start: npt.NDArray[np.int64] | int = 0
    window_end: npt.NDArray[np.int64] | int = 0
    reach = (kstreams_reach(codes.key, codes.t, config.window.size // MS) + 4 if record_windows
             else np.zeros(0, dtype=np.int64))
    if record_windows:  # Kafka Streams' sliding windows, allocated as records make them (compiled/kstreams.py)
        windows = None
        window_of = np.zeros(0, dtype=np.int64)
        per_event, n_windows = 1, 3 * n + 1  # a record makes at most three
        fire_bound = 3 * events_per_group + np.bincount(group, weights=reach, minlength=n_groups).astype(np.int64)
        purge_bound = fire_bound  # a fire follows a push
        nodes = int(reach.sum())  # a node per window a record joins; a copied aggregate shares its chain
    elif settings["session"]:
        windows = None
        window_of = np.zeros(0, dtype=np.int64)
        per_event, n_windows = 1, n
        fire_bound = events_per_group  # each event pushes its session at most once
        purge_bound = 2 * events_per_group  # each fire, and each late growth of an emitted session
        nodes = n
    else:
        windows = fixed_windows(stream, config)
        per_event, n_windows = windows.window_of.shape[1], len(windows.key)
        window_of = windows.window_of.ravel()
        if windows.full:
            fire_bound = events_per_group * per_event  # admissions
        else:
            pairs = (windows.window_of >= 0).sum(axis=1)
            fire_bound = np.bincount(group, weights=pairs, minlength=n_groups).astype(np.int64)
        purge_bound = fire_bound  # a fire follows a push
        nodes = int(fire_bound.sum())
        window_key, window_start, window_end = windows.key, windows.start, windows.end
    n_batches = len(batches.commit_time)
    largest_batch = int(np.diff(batches.starts).max(initial=0))
    # a trace row per source touched by each batch (and the merged row), plus room for heartbeats and the
    # no-data batch; emissions: about one per window. run_kernel runs again with the counted sizes when a
    # guess falls short.
    touched = stream.cached(("compiled-touched", config.batches, settings["per_key"], settings["merged"],
                             settings["per_partition"]), lambda: _touched(batches, source, len(source_names), largest_batch))
    trace = trace if trace is not None else (touched + (n_batches if settings["merged"] else 0)
                                             + len(source_names) + 256)
    if emissions is None:  # on-update: an emission per (event, window) taken; a session's tombstones, ≤ 2 per event
        emissions = ((int(reach.sum()) + n if record_windows else n * per_event + (2 * n if settings["session"] else 0))
                     if settings["on_update"] else
                     (n // 8 if settings["session"] else n_windows) + n // 16) + 256
        if settings["late_at_once"] and settings["allowed"] > 0:  # Flink: a re-firing per late element
            emissions += n // 4
    total_fire = int(fire_bound.sum())
    merged = bool(settings["merged"])
    partition_idleness = merged and settings["source_idle_timeout"] >= 0
    merge_leaves = 1 << max(len(source_names) - 1, 0).bit_length() if merged else 0
    sizes = {
        "events": n, "session_events": n if settings["session"] else 0, "batch_starts": n_batches + 1,
        "batches": n_batches, "pairs": 0 if settings["session"] or record_windows else n * per_event,
        "sources": len(source_names),
        "partitions": n_parts, "groups": n_groups, "keys": n_keys, "windows": n_windows, "nodes": nodes,
        "fire": total_fire, "purge": int(purge_bound.sum()),
        "idle": n if settings["idle_timeout"] >= 0 else 0,  # one push per event
        # per push, fast-forward, group; with live wake-ups a reschedule per event's commit as well
        "due": total_fire + n * (2 if settings["live_wakeups"] else 1) + n_groups if settings["event_clock"] else 0,
        "dirty": largest_batch * (int(reach.max(initial=0)) if record_windows else per_event),
        "touching": int((events_per_group if group is codes.key else np.bincount(codes.key, minlength=n_keys)).max()),
        "emission_slots": emissions * L.EM_FIELDS, "trace_slots": trace * L.TR_FIELDS,
        # a clock started per (partition, periodic emit after one with its record), and one each at the start
        "part_heap": n + n_parts if partition_idleness else 0,
        "merge_tree": 2 * merge_leaves,
        "sw_windows": n_windows if record_windows else 0, "sw_keys": n_keys if record_windows else 0,
        "sw_groups": n_groups if record_windows else 0, "expiry": 3 * n + n_groups if record_windows else 0,
        "taken": int(reach.max(initial=0)), "kpair_slots": int(2 * reach.sum() + n) * L.KP_FIELDS,
    }
    initial: dict[str, npt.NDArray[np.int64] | int] = {
        "ev_t": codes.t, "ev_arrival": codes.arrival, "ev_key": codes.key, "ev_partition": codes.partition,
        "ev_source": source, "ev_group": group, "batch_start": batches.starts, "commit": batches.commit_time,
        "batch_open": batches.opens, "batch_scripted": batches.scripted,
        "window_of": window_of, "grp_fire_base": _blocks(fire_bound), "grp_purge_base": _blocks(purge_bound),
        "key_group": key_group,
        "win_key": window_key, "win_start": window_start, "win_end": window_end,
        "merge_tree": _merge_tree(len(source_names), merge_leaves, bool(settings["pick_min"])) if merged else 0,
        "part_reset": np.arange(n_parts, dtype=np.int64) if partition_idleness else 0,  # no clock before the first emit
        "grp_exp_base": _blocks(3 * events_per_group + 1) if record_windows else 0,
    }
    unread = _unread(settings)
    table_sizes = {name: sizes[dimension] for name, dimension, _ in TABLES}
    shared = _shared(initial, table_sizes, unread)
    starts: dict[str, int] = {}
    at = L.SC_SLOTS
    for name, dimension, _ in TABLES:
        if name in shared:
            starts[name] = starts[shared[name]]
            continue
        starts[name] = at
        at += sizes[dimension]
    # zeros, and a page takes memory only once written; private, so a page ``release`` drops is freed
    memory = mmap.mmap(-1, at * 8, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    m = np.frombuffer(memory, dtype=np.int64)
    m[[L.SC_CLOCK, L.SC_NOW, L.SC_FLOOR, L.SC_GLOBAL_MAX, L.SC_LAST_CHECK]] = L.NONE
    m[L.SC_HIGHEST] = L.NO_MARK_YET
    m[L.SC_PART_RESET] = n_parts if partition_idleness else 0
    for name, dimension, fill in TABLES:
        value = initial[name] if fill is None else fill
        if sizes[dimension] and not (isinstance(value, int) and value == 0) and name not in unread | shared.keys():
            m[starts[name]:starts[name] + sizes[dimension]] = value
    state = State(m=m, **settings, n_events=n, n_batches=n_batches, per_event=per_event,
                  n_sources=len(source_names), n_groups=n_groups, n_windows=n_windows,
                  emissions_capacity=emissions, trace_capacity=trace, merge_leaves=merge_leaves,
                  sw_diff=config.window.size // MS if record_windows else 0,
                  sw_retention=2 * config.window.size // MS + (config.time.bound + config.time.watermark_delay) // MS,
                  kpairs_capacity=int(2 * reach.sum() + n), **starts)
    return Prepared(state, codes, source_names, windows, table_sizes, memory)


# the tables the kernel only reads, in TABLES' order
INPUTS = ("ev_t", "ev_arrival", "ev_key", "ev_partition", "ev_source", "ev_group", "batch_start", "commit",
          "batch_open", "batch_scripted")


def _shared(initial: dict[str, npt.NDArray[np.int64] | int], sizes: dict[str, int],
            unread: set[str]) -> dict[str, str]:
    """Inputs that are one array share one table: per key, the key is also the watermark source and the group;
    under processing time the event time is the arrival; at a batch per event a batch opens and commits at its
    event's arrival (``streams/batching.py``). The kernel never writes its inputs, and each copy is 80 MB at 10M
    events. Maps a table to the earlier one whose place it takes."""
    shared: dict[str, str] = {}
    laid: list[str] = []
    for name in (name for name in INPUTS if name not in unread):
        same = next((other for other in laid
                     if initial[other] is initial[name] and sizes[other] == sizes[name]), None)
        if same is None:
            laid.append(name)
        else:
            shared[name] = same
    return shared


def _unread(settings: dict[str, int]) -> set[str]:
    """Tables the kernel reads only under some rules (``driver.py``), left unwritten under the others: 80 MB
    each at 10M events that no page fault need bring in (they stay zeros, which nothing reads). Bytewax's queue
    of held items (``ev_held_next``, −1 when written) is read and written only with live wake-ups."""
    unread = set()
    partition_idleness = settings["source_idle_timeout"] >= 0 and settings["merged"]
    if not partition_idleness:
        unread.add("ev_partition")
    if not (settings["event_clock"] or settings["late_at_once"]
            or (settings["idle_timeout"] >= 0 and settings["idle_processing"])):
        unread.add("ev_arrival")
    if not settings["scripted"]:
        unread.add("batch_scripted")
    if not settings["live_wakeups"]:
        unread.add("ev_held_next")
    return unread


def run_kernel(stream: Stream, config: RunConfig) -> Prepared:
    """Prepare and run; if the emission or trace tables were too small, run again with the sizes counted."""
    from explorer.core.compiled.driver import run

    prepared = prepare(stream, config)
    run(prepared.state)
    m, state = prepared.state.m, prepared.state
    assert m[L.SC_KPAIRS] <= state.kpairs_capacity  # (a proven bound: kstreams_sliding.reach)
    if m[L.SC_EMISSIONS] > state.emissions_capacity or m[L.SC_TRACE] > state.trace_capacity:
        prepared = prepare(stream, config, emissions=int(m[L.SC_EMISSIONS]), trace=int(m[L.SC_TRACE]))
        run(prepared.state)
    return prepared
