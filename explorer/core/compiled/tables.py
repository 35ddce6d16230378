"""The kernel's records as the Result every runner returns (the same tables as ``core/assemble.py``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from explorer.config import LatePolicy, RunConfig, WindowKind
from explorer.core.compiled import layout as L
from explorer.core.compiled import listings
from explorer.core.compiled.plan import Prepared
from explorer.core.compiled.state import TABLES
from explorer.core.compiled.watermarks import effective_column
from explorer.core.event_ids import slices
from explorer.core.result import (ASSIGNMENT_COLUMNS, EVENT_COLUMNS, REASON_ORDER, WATERMARK_COLUMNS, WINDOW_COLUMNS,
                                  Metrics, Reason, Result, Status, emission_order)
from explorer.core.compiled.kstreams import gather_shared
from explorer.core.panes import discarding, shape_panes, window_codes
from explorer.core.summary import summarize
from explorer.streams import Stream, batches_for
from explorer.streams.stream import ids_for_listing

REASONS = np.array([Reason.WATERMARK.value, Reason.IDLE_TIMEOUT.value, Reason.LATE_UPDATE.value,
                    Reason.END_OF_STREAM.value, Reason.UPDATE.value, Reason.TOMBSTONE.value],
                   dtype=object)  # by layout.REASON_*
REASON_RANK = np.array([REASON_ORDER[reason] for reason in REASONS])
TRACE_KINDS = np.array(["commit", "heartbeat", "no-data batch", "idle check"], dtype=object)


def _optional(values: npt.NDArray[np.int64], missing: npt.NDArray[np.bool_] | None = None,
              copy: bool = True) -> pd.arrays.IntegerArray:
    """int64 → nullable Int64; "no watermark yet" (or ``missing``) becomes <NA>. ``copy=False`` for values that
    are a fresh array already (not a view of the kernel's arena)."""
    values = np.asarray(values, dtype=np.int64)
    return pd.arrays.IntegerArray(values.copy() if copy else values,
                                  values < L.NONE // 2 if missing is None else missing)


def _objects(values: npt.NDArray[np.object_]) -> pd.Series:
    """An object column handed to pandas as a Series of that dtype, so it does not look for dates in every cell:
    the keys, reasons and ids of 6M emissions took 0.75 s to make into a table, now 0.03 s."""
    return pd.Series(values, dtype=object, copy=False)


def _records(prepared: Prepared, name: str, count_slot: int, width: int) -> npt.NDArray[np.int64]:
    n = int(prepared.state.m[count_slot])
    return prepared.table(name, n * width).reshape(n, width)


# what the Result is read from; the rest of the arena is let go before the first table is built
READ_BACK = {"emissions", "node_row", "node_next", "ev_status", "ev_seen_raw", "ev_session", "ev_session_late",
             "ev_session_end", "win_into", "win_start", "win_end", "window_of", "pair_late", "pair_admitted", "trace",
             "kpairs"}


def result(stream: Stream, config: RunConfig, prepared: Prepared) -> Result:
    """The tables one after another, each part of the arena released once the last table that reads it is
    built (no table holds a view of the arena), so the arena and the Result are not held whole at once: at
    10M events each is about 2 GB."""
    prepared.release(name for name, _, _ in TABLES if name not in READ_BACK)
    windows = emissions(stream, config, prepared, detail=True)
    prepared.release(("emissions", "node_row", "node_next"))
    metrics = _metrics(config, prepared, windows)
    events = event_table(stream, config, prepared)
    assignments = assignment_table(config, prepared)
    prepared.release(READ_BACK - {"trace"})
    return Result(events, assignments, windows, trace_table(config, prepared, last=True), metrics, config,
                  stream.name, stream.time_unit, absolute=stream.absolute)


def metrics(stream: Stream, config: RunConfig, prepared: Prepared) -> Metrics:
    """Only the metrics: no per-event tables, no window contents (what a sweep needs)."""
    return _metrics(config, prepared, emissions(stream, config, prepared, detail=False))


def _metrics(config: RunConfig, prepared: Prepared, windows: pd.DataFrame) -> Metrics:
    codes = np.bincount(prepared.table("ev_status"), minlength=3)
    names = _status_names(config)
    counts = {names[i]: int(c) for i, c in enumerate(codes) if c}
    partly = 0  # a session takes an event whole or refuses it
    if config.window.kind is WindowKind.KSTREAMS_SLIDING:
        pairs = _kafka_pairs(prepared)
        admitted = int(pairs["admitted"].sum())
        refused = len(pairs) - admitted
        refused_by_some = np.unique(pairs.loc[~pairs["admitted"], "event"].to_numpy())
        partly = int((prepared.table("ev_status")[refused_by_some] != L.STATUS_REFUSED).sum())
    elif config.window.kind is WindowKind.SESSION:
        refused = int((prepared.table("ev_session") < 0).sum())
        admitted = prepared.state.n_events - refused
    else:
        taken = prepared.table("pair_admitted") == 1
        assigned = prepared.table("window_of") >= 0
        admitted = int(taken.sum())
        refused = int(assigned.sum()) - admitted
        refused_by_some = (assigned & ~taken).reshape(-1, prepared.state.per_event).any(axis=1)
        partly = int((prepared.table("ev_status")[refused_by_some] != L.STATUS_REFUSED).sum())
    return summarize(counts, admitted, refused, windows, int(prepared.state.m[L.SC_MAX_OPEN]), partly)


def _status_names(config: RunConfig) -> list[str]:
    refused = Status.SIDE_OUTPUT if config.time.late_policy is LatePolicy.SIDE_OUTPUT else Status.DROPPED
    return [Status.ON_TIME.value, Status.LATE_UPDATED.value, refused.value]


def event_table(stream: Stream, config: RunConfig, prepared: Prepared) -> pd.DataFrame:
    """The events: the stream's own columns (its ids as it holds them, no copy), and the run's, each arena table
    released as soon as its column is made (the last to read them)."""
    ev = stream.events
    status = np.array(_status_names(config), dtype=object)[prepared.table("ev_status")]
    prepared.release(("ev_status",))
    seen = np.array(prepared.table("ev_seen_raw"))  # (a copy, and the table let go before the next column)
    prepared.release(("ev_seen_raw",))
    watermark = _optional(seen, copy=False)
    effective = _optional(effective_column(seen, config.time.watermark_delay), seen < L.NONE // 2, copy=False)
    return pd.DataFrame({
        "id": ev["id"].array, "key": _objects(ev["key"].to_numpy()), "partition": _objects(ev["partition"].to_numpy()),
        "event_time": prepared.codes.t, "arrival_time": prepared.codes.arrival,
        "batch": batches_for(stream, config).number, "status": _objects(status), "watermark": watermark,
        "effective_watermark": effective,
    }, columns=EVENT_COLUMNS, copy=False)


def _kafka_pairs(prepared: Prepared) -> pd.DataFrame:
    """Kafka Streams' sliding windows: every (event, window) decision the kernel recorded, as the reference lists
    them (an event taken twice by one window, made and then overwritten, once; refusals as they came), in order."""
    pairs = pd.DataFrame(_records(prepared, "kpairs", L.SC_KPAIRS, L.KP_FIELDS),
                         columns=["event", "start", "end", "late", "admitted"]).astype(
        {"late": bool, "admitted": bool})
    taken = pairs[pairs["admitted"]].drop_duplicates(["event", "start", "end"], keep="last")  # (its last late flag)
    pairs = pd.concat([taken, pairs[~pairs["admitted"]]])
    order = np.lexsort((pairs["end"].to_numpy(), pairs["start"].to_numpy(), ~pairs["admitted"].to_numpy(),
                        pairs["event"].to_numpy()))
    return pairs.iloc[order].reset_index(drop=True)


def assignment_table(config: RunConfig, prepared: Prepared) -> pd.DataFrame:
    """The (event, window) pairs; for fixed windows the pair tables are released once read (the last to read
    them), before the windows' bounds are gathered."""
    if config.window.kind is WindowKind.KSTREAMS_SLIDING:
        return _kafka_pairs(prepared)[ASSIGNMENT_COLUMNS]
    if config.window.kind is WindowKind.SESSION:
        session = prepared.table("ev_session")
        rows = np.arange(len(session))
        admitted = session >= 0
        final = session.copy()
        into = prepared.table("win_into")
        while True:  # a session's events belong, in the end, to the session it was merged into
            moved_to = into[final[admitted]]
            moved = moved_to >= 0
            if not moved.any():
                break
            final[np.flatnonzero(admitted)[moved]] = moved_to[moved]
        final = np.maximum(final, 0)
        start = np.where(admitted, prepared.table("win_start")[final], prepared.codes.t)
        end = np.where(admitted, prepared.table("win_end")[final], prepared.table("ev_session_end"))
        late = np.where(admitted, prepared.table("ev_session_late") == 1, True)
        order = np.lexsort((end, start, ~admitted, rows))
        event, start, end, late, admitted = rows[order], start[order], end[order], late[order], admitted[order]
    else:
        windows = prepared.windows
        assert windows is not None  # fixed windows are laid out before the run (plan.fixed_windows)
        window_of = prepared.table("window_of")
        valid = window_of >= 0
        late, admitted = prepared.table("pair_late") == 1, prepared.table("pair_admitted") == 1
        prepared.release(("pair_late", "pair_admitted"))
        per_event = prepared.state.per_event
        whole = bool(valid.all())  # (tumbling windows: every event has its one window)
        wid = window_of if whole else window_of[valid]
        if not whole:
            late, admitted = late[valid], admitted[valid]
        start, end = windows.start[wid], windows.end[wid]
        prepared.release(("window_of",))  # (before the events' column is made: 80 MB at 10M)
        rows = np.arange(len(valid)) if whole else np.flatnonzero(valid)
        event = rows // per_event if per_event > 1 else rows
        if per_event > 1:
            order = np.lexsort((end, start, ~admitted, event))
            event, start, end, late, admitted = event[order], start[order], end[order], late[order], admitted[order]
    return pd.DataFrame({"event": event, "start": start, "end": end, "late": late, "admitted": admitted},
                        columns=ASSIGNMENT_COLUMNS, copy=False)


def emissions(stream: Stream, config: RunConfig, prepared: Prepared, detail: bool) -> pd.DataFrame:
    """The windows table, in the canonical order: the records are sorted as integers (key codes are ranks:
    the stream's key names are sorted) before any text column exists."""
    table = _records(prepared, "emissions", L.SC_EMISSIONS, L.EM_FIELDS)
    table = table[emission_order(table[:, L.EM_BATCH], table[:, L.EM_AT], REASON_RANK[table[:, L.EM_REASON]],
                                 table[:, L.EM_KEY], table[:, L.EM_START], table[:, L.EM_END],
                                 table[:, L.EM_REVISION])]
    if detail:  # (a copy in order now: the records are not read again, and the ids need room; 150 MB at 10M)
        prepared.release(("emissions",))
    end, at, raw, max_seen = table[:, L.EM_END], table[:, L.EM_AT], table[:, L.EM_RAW], table[:, L.EM_MAX_SEEN]
    latency = max_seen - end
    frame = pd.DataFrame({
        "key": _objects(prepared.codes.key_names[table[:, L.EM_KEY]]), "start": table[:, L.EM_START], "end": end,
        "count": table[:, L.EM_COUNT], "ids": _objects(np.full(len(table), None)), "emit_batch": table[:, L.EM_BATCH],
        "emit_time": at,
        "watermark": _optional(raw),
        "effective_watermark": _optional(effective_column(raw, config.time.watermark_delay), raw < L.NONE // 2,
                                         copy=False),
        "reason": _objects(REASONS[table[:, L.EM_REASON]]), "revision": table[:, L.EM_REVISION],
        "latency_event": _optional(latency, (max_seen == L.NONE) | (latency < L.NONE // 2)),
        "latency_processing": at - end,
    }, columns=WINDOW_COLUMNS, copy=False)
    if detail:
        _carry(stream, config, prepared, table, frame)
    return frame


def _carry(stream: Stream, config: RunConfig, prepared: Prepared, table: npt.NDArray[np.int64], frame: pd.DataFrame) -> None:
    """Fill each emission's event ids: slices of one array (``listings``, ``event_ids``), so a window that
    re-fires a thousand times holds its ids once; discarding panes are cut on row numbers first. The window lists
    are let go once read, before the ids' objects are made."""
    kafka = config.window.kind is WindowKind.KSTREAMS_SLIDING
    if kafka:  # every emission lists its whole window (gather_shared)
        counts = table[:, L.EM_COUNT].copy()
        state = prepared.state
        window = np.lexsort((-counts, table[:, L.EM_END], table[:, L.EM_START], table[:, L.EM_KEY]))
        pool, start = gather_shared(state.m, state.node_row, state.node_next, table[:, L.EM_HEAD].copy(), counts,
                                    window)
    else:
        update = table[:, L.EM_REASON] == L.REASON_UPDATE
        counts = np.where(update, 0, table[:, L.EM_COUNT])
        heads, records = table[:, L.EM_HEAD], table[:, L.EM_ROW]
        session = config.window.kind is WindowKind.SESSION
        if discarding(config):
            listed = listings.discarded(prepared, heads, counts, update, records, window_codes(frame, config),
                                        session)
            frame["count"] = np.where(update, frame["count"].to_numpy(), listed.count)
        else:
            listed = listings.accumulated(prepared, heads, counts, update, records, session)
        pool, start, counts = listed.pool, listed.start, listed.count
    prepared.release(("node_row", "node_next"))  # (read into the listings: 150 MB at 10M not held beside the ids)
    frame["ids"] = slices(ids_for_listing(stream.events["id"]), pool, start, counts)
    if kafka and discarding(config):  # (Kafka's panes are cut from the whole listings)
        whole = shape_panes(frame, config)
        frame["ids"], frame["count"] = whole["ids"].to_numpy(), whole["count"].to_numpy()


def trace_table(config: RunConfig, prepared: Prepared, last: bool = False) -> pd.DataFrame:
    """One column at a time out of the records (a row per batch and scope: 10M at one batch per event), each a
    contiguous array of its own, and no copy into pandas' blocks, which doubled the table for a moment. ``last``:
    nothing reads the arena after this table, so the records are given back a block of rows at a time as they
    are copied, and the records and their columns are never held whole together (400 MB at 10M events)."""
    table = _records(prepared, "trace", L.SC_TRACE, L.TR_FIELDS)
    n = len(table)
    fields = {"batch": L.TR_BATCH, "time": L.TR_AT, "source": L.TR_SOURCE, "kind": L.TR_KIND, "raw": L.TR_RAW}
    copied = {name: np.empty(n, dtype=np.int64) for name in fields}
    for low in range(0, n, TRACE_BLOCK):
        high = min(low + TRACE_BLOCK, n)
        for name, field in fields.items():
            copied[name][low:high] = table[low:high, field]
        if last:
            prepared.release_head("trace", high * L.TR_FIELDS)
    if last:
        prepared.release(("trace",))
    names = np.append(prepared.source_names, "*")  # index −1: the merged row
    raw = copied.pop("raw")
    return pd.DataFrame({
        "batch": copied.pop("batch"), "time": copied.pop("time"), "scope": _objects(names[copied.pop("source")]),
        "at": _objects(TRACE_KINDS[copied.pop("kind")]), "watermark": _optional(raw, copy=False),
        "effective": _optional(effective_column(raw, config.time.watermark_delay), raw < L.NONE // 2, copy=False),
    }, columns=WATERMARK_COLUMNS, copy=False)


TRACE_BLOCK = 1 << 20  # rows of the trace copied before their pages are given back (40 MB of records)
