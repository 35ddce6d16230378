"""Updates coalesced per batch (``--emit on-batch``): Spark's update output mode, Kafka Streams' record cache.

Spark's ``outputMode("update")`` writes, at the end of every micro-batch, each window whose aggregate the batch
changed, with its value then; a window the watermark only closes writes nothing more, and the watermark drops
late rows and evicts state exactly as in append mode. Kafka Streams with its record cache on does the same per
commit interval: a key's updates are coalesced in the cache and its latest result is forwarded at the commit.

So the decisions are emit on-update's (``rules.on_update`` is on for on-batch), and only the emitted rows differ:
every runner produces the on-update table and :func:`coalesce` cuts it here, once, for all of them (the reference
engine, the compiled kernel, the Spark runner), as ``panes.py`` cuts discarding panes. Spark's own query already
emits coalesced rows and is not cut again.

A coalesced row is an UPDATE: its window, emitted at the batch's commit, ``count`` its events after the batch and
``ids`` all of them (discarding panes: those since its previous emission); ``revision`` counts its emissions. Its
watermark and event-time latency are those of the commit, as for a window the watermark fires there. Sessions
emit their span after the batch; a session a record merged away in that batch emits nothing (Spark's update mode
retracts nothing, and Kafka's cache forwards the merged session only).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from explorer.config import Emit, Panes, RunConfig, WindowKind
from explorer.core.panes import first_listings, regroup
from explorer.core.result import WINDOW_COLUMNS, Reason, Result, canonical_order
from explorer.core.rules import derive
from explorer.core.summary import summarize
from explorer.core.watermarks import GLOBAL


def coalesced(config: RunConfig) -> bool:
    return config.time.emit is Emit.ON_BATCH


def coalesce(result: Result) -> Result:
    """``result`` (an on-update run of an on-batch config) with its updates coalesced per batch, and the metrics
    of the new table; any other result as it is."""
    config = result.config
    if not coalesced(config):
        return result
    windows = _coalesced_windows(result)
    m = result.metrics
    counts = {str(status): int(n) for status, n in result.events["status"].value_counts().items()}
    admitted = int(result.assignments["admitted"].sum())
    metrics = summarize(counts, admitted, len(result.assignments) - admitted, windows, m.max_open_windows,
                        m.partly_dropped)
    return replace(result, windows=windows, metrics=metrics)


def _coalesced_windows(result: Result) -> pd.DataFrame:
    config = result.config
    w = result.windows
    updates = w[w["reason"].to_numpy(dtype=object) == Reason.UPDATE.value]
    if updates.empty:
        return pd.DataFrame({c: pd.Series(dtype=w[c].dtype) for c in WINDOW_COLUMNS})
    events = result.events
    row_of = pd.Series(np.arange(len(events)), index=events["id"].to_numpy())
    record = row_of.loc[[tuple(ids)[0] for ids in updates["ids"]]].to_numpy()  # each UPDATE carries its record
    table = pd.DataFrame({"key": updates["key"].to_numpy(), "start": updates["start"].to_numpy(),
                          "end": updates["end"].to_numpy(), "batch": updates["emit_batch"].to_numpy(),
                          "time": updates["emit_time"].to_numpy(), "count": updates["count"].to_numpy(),
                          "record": record})
    if config.window.kind is WindowKind.SESSION:
        rows = _sessions(table, w, events["id"].to_numpy())
    else:
        rows = _fixed(table, events["id"].to_numpy())
    return _finish(result, rows)


def _fixed(table: pd.DataFrame, ids: np.ndarray) -> pd.DataFrame:
    """Tumbling and sliding windows: per window and batch, the records it took up to that batch's end. A window
    taken up again from nothing (an idle flush, Bytewax's forgotten key) starts over: its count restarts at 1."""
    table = table.sort_values(["key", "start", "end", "record"], kind="stable").reset_index(drop=True)
    window = table.groupby(["key", "start", "end"], sort=False).ngroup().to_numpy()
    life = np.cumsum((table["count"].to_numpy() == 1) | np.r_[True, window[1:] != window[:-1]])
    batch = table["batch"].to_numpy()
    last = np.r_[(life[1:] != life[:-1]) | (batch[1:] != batch[:-1]), True]  # a (life, batch)'s last record
    first_of_life = np.r_[0, np.flatnonzero(life[1:] != life[:-1]) + 1]
    begin = first_of_life[np.searchsorted(first_of_life, np.arange(len(table)), side="right") - 1]
    records = table["record"].to_numpy()
    ends = np.flatnonzero(last)
    out = table.iloc[ends].reset_index(drop=True)
    out["ids"] = [tuple(ids[records[b:e + 1]]) for b, e in zip(begin[ends].tolist(), ends.tolist())]
    out["life"] = life[ends]
    out["revision"] = out.groupby("life").cumcount() + 1
    return out.drop(columns=["life", "record"])


def _sessions(table: pd.DataFrame, windows: pd.DataFrame, ids: np.ndarray) -> pd.DataFrame:
    """Sessions: per batch and key, the sessions the batch's records are in at its end (the spans it updated that
    no later record of the batch merged away, as its tombstones say), each with every record of the key so far
    whose session then lay inside it. Sessions only grow, and a record that starts a session after an older one
    of its key was evicted lies past that one's events, so containment finds a session's events."""
    tomb = windows[windows["reason"].to_numpy(dtype=object) == Reason.TOMBSTONE.value]
    gone = set(zip(tomb["key"], tomb["start"], tomb["end"], tomb["emit_batch"]))
    out = []
    for key, of_key in table.groupby("key", sort=False):
        of_key = of_key.sort_values("record", kind="stable")
        start, end, batch, record = (of_key[c].to_numpy() for c in ("start", "end", "batch", "record"))
        emitted: list[tuple[int, int]] = []
        for b in np.unique(batch).tolist():
            spans = sorted({(s, e) for s, e in zip(start[batch == b].tolist(), end[batch == b].tolist())
                            if (key, s, e, b) not in gone})
            upto = batch <= b
            for s, e in spans:
                inside = upto & (start >= s) & (end <= e)
                revision = 1 + sum(s <= s0 and e0 <= e for s0, e0 in emitted)
                emitted.append((s, e))
                out.append({"key": key, "start": s, "end": e, "batch": b,
                            "time": int(of_key["time"].to_numpy()[batch == b][0]),
                            "count": int(inside.sum()), "ids": tuple(ids[np.sort(record[inside])]),
                            "revision": revision})
    return pd.DataFrame(out, columns=["key", "start", "end", "batch", "time", "count", "ids", "revision"])


def _finish(result: Result, rows: pd.DataFrame) -> pd.DataFrame:
    """The coalesced rows as a windows table: the commit's watermark and event-time latency (the largest event
    time the window's watermark had seen by the end of the batch), discarding panes cut, in the canonical order."""
    config = result.config
    rules = derive(config)
    events = result.events
    group_of_event = (events["key"] if rules.per_key else events["partition"] if rules.per_partition
                      else pd.Series(GLOBAL, index=events.index)).astype(str)
    seen = (pd.DataFrame({"group": group_of_event, "batch": events["batch"], "t": events["event_time"]})
            .groupby(["group", "batch"])["t"].max().groupby(level=0).cummax())
    partition_of = dict(zip(events["key"], events["partition"]))
    group = [str(k) if rules.per_key else str(partition_of[k]) if rules.per_partition else GLOBAL
             for k in rows["key"].tolist()]
    batch = rows["batch"].to_numpy()
    max_seen = seen.reindex(pd.MultiIndex.from_arrays([group, batch])).to_numpy(dtype=np.int64)
    trace = result.watermarks
    trace = trace[trace["at"] == "commit"].drop_duplicates(["batch", "scope"], keep="last").set_index(["batch", "scope"])
    marks = trace.reindex(pd.MultiIndex.from_arrays([batch, group]))
    end = rows["end"].to_numpy()
    table = pd.DataFrame({
        "key": rows["key"].to_numpy(dtype=object), "start": rows["start"].to_numpy(), "end": end,
        "count": rows["count"].to_numpy(), "ids": _object_array(rows["ids"].tolist()), "emit_batch": batch,
        "emit_time": rows["time"].to_numpy(), "watermark": pd.array(marks["watermark"].to_numpy(), dtype="Int64"),
        "effective_watermark": pd.array(marks["effective"].to_numpy(), dtype="Int64"),
        "reason": Reason.UPDATE.value, "revision": rows["revision"].to_numpy(),
        "latency_event": pd.array(max_seen - end, dtype="Int64"),
        "latency_processing": rows["time"].to_numpy() - end,
    }, columns=WINDOW_COLUMNS)
    table = canonical_order(table)
    if config.time.panes is Panes.DISCARDING:
        table = _discarding(table, config)
    return table


def _discarding(table: pd.DataFrame, config: RunConfig) -> pd.DataFrame:
    """Each coalesced emission carries only the events its window had not emitted before (``count`` stays the
    window's, as an UPDATE's does)."""
    from itertools import chain

    from explorer.core.panes import window_codes

    ids = table["ids"].to_numpy(dtype=object)
    sizes = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    listed = np.fromiter(chain.from_iterable(ids), dtype=object, count=int(sizes.sum()))
    cut = first_listings(window_codes(table, config), sizes, pd.factorize(listed)[0], np.zeros(len(ids), bool))
    return table.assign(ids=regroup(listed[cut.kept], cut.counts, ids))


def _object_array(values: list[tuple[str, ...]]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out
