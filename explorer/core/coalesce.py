"""Updates coalesced per batch (``--emit on-batch``): Spark's update output mode, Kafka Streams' record cache.

Spark's ``outputMode("update")`` writes, at the end of every micro-batch, each window whose aggregate the batch
changed, with its value then; a window the watermark only closes writes nothing more, and the watermark drops
late rows and evicts state exactly as in append mode. Kafka Streams with its record cache on does the same per
commit interval: a key's updates are coalesced in the cache and its latest result is forwarded at the commit.

So the decisions are emit on-update's (``rules.on_update`` is on for on-batch), and only the emitted rows differ:
every runner produces the on-update table and :func:`coalesce` cuts it here, once, for all of them (the reference
engine, the compiled kernel, the Spark runner), as ``panes.py`` cuts discarding panes. Spark's own query already
emits coalesced rows and is not cut again.

The unit coalesced is a batch, or with ``--commit-interval T`` the arrivals of each interval [k·T, (k + 1)·T),
flushed at (k + 1)·T (Kafka's commit.interval.ms; the batches still decide when the watermark moves).

A coalesced row is an UPDATE: its window, emitted at the flush, ``count`` its events then and ``ids`` all of them
(discarding panes: those since its previous emission); ``revision`` counts its emissions. Its watermark and
event-time latency are those of the last commit before the flush, as for a window the watermark fires there.
Sessions emit their span at the flush; a session merged away before it emits nothing, and one an earlier flush
emitted gets a TOMBSTONE (Kafka's caching session store forwards one; Spark refuses update mode for sessions).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from explorer.config import Emit, Panes, RunConfig, WindowKind
from explorer.core.panes import first_listings, regroup
from explorer.core.result import WINDOW_COLUMNS, Reason, Result, canonical_order
from explorer.core.rules import derive
from explorer.core.summary import with_windows
from explorer.core.watermarks import GLOBAL


def coalesced(config: RunConfig) -> bool:
    return config.time.emit is Emit.ON_BATCH


def coalesce(result: Result) -> Result:
    """``result`` (an on-update run of an on-batch config) with its updates coalesced per batch (or commit
    interval), and the metrics of the new table; any other result as it is."""
    config = result.config
    if not coalesced(config):
        return result
    windows = _coalesced_windows(result)
    return with_windows(result, windows)


def _coalesced_windows(result: Result) -> pd.DataFrame:
    config = result.config
    w = result.windows
    updates = w[w["reason"].to_numpy(dtype=object) == Reason.UPDATE.value]
    if updates.empty:
        return pd.DataFrame({c: pd.Series(dtype=w[c].dtype) for c in WINDOW_COLUMNS})
    events = result.events
    slots = Slots.of(result)
    if config.window.kind is WindowKind.KSTREAMS_SLIDING:
        return _finish(result, _whole(updates, slots), slots)
    row_of = pd.Series(np.arange(len(events)), index=events["id"].to_numpy())
    record = row_of.loc[[tuple(ids)[0] for ids in updates["ids"]]].to_numpy()  # each UPDATE carries its record
    slot = slots.of_batch(updates["emit_batch"].to_numpy())
    table = pd.DataFrame({"key": updates["key"].to_numpy(), "start": updates["start"].to_numpy(),
                          "end": updates["end"].to_numpy(), "batch": slot,
                          "time": slots.flush_time(slot, updates["emit_time"].to_numpy()),
                          "count": updates["count"].to_numpy(), "record": record})
    if config.window.kind is WindowKind.SESSION:
        tomb = w[w["reason"].to_numpy(dtype=object) == Reason.TOMBSTONE.value]
        rows = _sessions(table, tomb.assign(emit_batch=slots.of_batch(tomb["emit_batch"].to_numpy())),
                         events["id"].to_numpy())
    else:
        rows = _fixed(table, events["id"].to_numpy())
    return _finish(result, rows, slots)


@dataclass(frozen=True)
class Slots:
    """What one coalesced emission gathers: a batch (Spark's micro-batch), or with ``commit_interval`` the batches
    whose events arrived in one interval [k·T, (k + 1)·T), flushed at (k + 1)·T (Kafka Streams' commit). Below, a
    "batch" column of coalesced rows holds this slot."""

    interval: int | None
    event_slot: np.ndarray  # per event (arrival order)
    batch_slot: dict[int, int]  # batch number → its slot (a batch's updates are flushed together)
    last_batch: dict[int, int]  # slot → the last batch in it, the one its flush follows

    @staticmethod
    def of(result: Result) -> "Slots":
        interval = result.config.time.commit_interval
        batch = result.events["batch"].to_numpy(dtype=np.int64)
        if interval is None:
            numbers = np.unique(batch).tolist()
            return Slots(None, batch, dict(zip(numbers, numbers)), dict(zip(numbers, numbers)))
        slot = result.events["arrival_time"].to_numpy(dtype=np.int64) // interval
        by_batch = pd.Series(slot).groupby(batch).max()
        last = pd.Series(by_batch.index.to_numpy()).groupby(by_batch.to_numpy()).max()
        return Slots(interval, slot, dict(zip(by_batch.index.tolist(), by_batch.tolist())),
                     dict(zip(last.index.tolist(), last.tolist())))

    def of_batch(self, batches: np.ndarray) -> np.ndarray:
        return np.fromiter((self.batch_slot[b] for b in batches.tolist()), dtype=np.int64, count=len(batches))

    def flush_time(self, slot: np.ndarray, commit: np.ndarray) -> np.ndarray:
        """When the slot's rows are emitted: the batch's commit, or the end of the commit interval."""
        return commit if self.interval is None else (slot + 1) * self.interval


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


def _whole(updates: pd.DataFrame, slots: Slots) -> pd.DataFrame:
    """Kafka Streams' sliding windows, whose every update carries the whole aggregate (a window made from a copied
    one holds records it never took; a put can overwrite one): per window and slot, its last update."""
    slot = slots.of_batch(updates["emit_batch"].to_numpy())
    table = pd.DataFrame({"key": updates["key"].to_numpy(), "start": updates["start"].to_numpy(),
                          "end": updates["end"].to_numpy(), "batch": slot,
                          "time": slots.flush_time(slot, updates["emit_time"].to_numpy()),
                          "count": updates["count"].to_numpy(), "ids": updates["ids"].to_numpy(dtype=object),
                          "revision": updates["revision"].to_numpy()})
    table = table.sort_values(["key", "start", "end", "revision"], kind="stable")
    out = table.drop_duplicates(["key", "start", "end", "batch"], keep="last").reset_index(drop=True)
    out["revision"] = out.groupby(["key", "start", "end"]).cumcount() + 1
    return out


def _sessions(table: pd.DataFrame, tomb: pd.DataFrame, ids: np.ndarray) -> pd.DataFrame:
    """Sessions: per slot and key, the sessions the slot's records are in at its end (the spans it updated that
    no other span it updated contains: sessions only grow), each with every record of the key so far whose
    session then lay inside it (a record that starts a session after an older one of its key was evicted lies
    past that one's events, so containment finds a session's events). A session an earlier flush emitted that a
    record of this slot replaced gets a tombstone at this flush, as Kafka Streams' caching session store forwards
    one; a session that came and went between two flushes gets none, nor one a record replaced by the same span
    (the cache keeps the last value of each span; with the cache off Kafka forwards a tombstone there too)."""
    gone = set(zip(tomb["key"], tomb["start"], tomb["end"], tomb["emit_batch"]))
    out = []
    for key, of_key in table.groupby("key", sort=False):
        of_key = of_key.sort_values("record", kind="stable")
        start, end, batch, record, time = (of_key[c].to_numpy() for c in ("start", "end", "batch", "record", "time"))
        emitted: dict[tuple[int, int], int] = {}  # span → its last revision, while it is the key's session
        history: dict[tuple[int, int], int] = {}  # every span emitted, with its last revision
        for b in np.unique(batch).tolist():
            at = int(time[batch == b][0])
            updated = set(zip(start[batch == b].tolist(), end[batch == b].tolist()))
            # alive at the flush: the spans no other span of the slot grew out of (sessions only grow)
            spans = sorted(u for u in updated if not any(o != u and o[0] <= u[0] and u[1] <= o[1] for o in updated))
            for s, e in sorted(span for span in emitted if (key, *span, b) in gone and span not in spans):
                out.append({"key": key, "start": s, "end": e, "batch": b, "time": at, "count": 0, "ids": (),
                            "revision": emitted.pop((s, e)), "reason": Reason.TOMBSTONE.value})
            upto = batch <= b
            for s, e in spans:
                inside = upto & (start >= s) & (end <= e)
                # a grown or merged session goes on from the revisions of those it took in (as on-update's does)
                revision = 1 + max((r for (s0, e0), r in history.items() if s <= s0 and e0 <= e), default=0)
                emitted[s, e] = history[s, e] = revision
                out.append({"key": key, "start": s, "end": e, "batch": b, "time": at, "count": int(inside.sum()),
                            "ids": tuple(ids[np.sort(record[inside])]), "revision": revision,
                            "reason": Reason.UPDATE.value})
    return pd.DataFrame(out, columns=["key", "start", "end", "batch", "time", "count", "ids", "revision", "reason"])


def _finish(result: Result, rows: pd.DataFrame, slots: Slots) -> pd.DataFrame:
    """The coalesced rows as a windows table: the watermark at the flush (the last commit before it of the window's
    watermark) and the event-time latency (the largest event time that watermark had seen by then), discarding
    panes cut, in the canonical order."""
    config = result.config
    rules = derive(config)
    events = result.events
    group_of_event = (events["key"] if rules.per_key else events["partition"] if rules.per_partition
                      else pd.Series(GLOBAL, index=events.index)).astype(str)
    seen = (pd.DataFrame({"group": group_of_event, "slot": slots.event_slot, "t": events["event_time"]})
            .groupby(["group", "slot"])["t"].max().groupby(level=0).cummax().reset_index())
    partition_of = dict(zip(events["key"], events["partition"]))
    group = [str(k) if rules.per_key else str(partition_of[k]) if rules.per_partition else GLOBAL
             for k in rows["key"].tolist()]
    slot = rows["batch"].to_numpy()
    batch = np.fromiter((slots.last_batch[k] for k in slot.tolist()), dtype=np.int64, count=len(slot))
    max_seen = last_up_to(seen, slot, group, "slot", "group")["t"].to_numpy(dtype=np.int64)
    marks = marks_at(result.watermarks, batch, group)
    end = rows["end"].to_numpy()
    table = pd.DataFrame({
        "key": rows["key"].to_numpy(dtype=object), "start": rows["start"].to_numpy(), "end": end,
        "count": rows["count"].to_numpy(), "ids": _object_array(rows["ids"].tolist()), "emit_batch": batch,
        "emit_time": rows["time"].to_numpy(), "watermark": pd.array(marks["watermark"].to_numpy(), dtype="Int64"),
        "effective_watermark": pd.array(marks["effective"].to_numpy(), dtype="Int64"),
        "reason": rows["reason"].to_numpy(dtype=object) if "reason" in rows else Reason.UPDATE.value,
        "revision": rows["revision"].to_numpy(),
        "latency_event": pd.array(max_seen - end, dtype="Int64"),
        "latency_processing": rows["time"].to_numpy() - end,
    }, columns=WINDOW_COLUMNS)
    table = canonical_order(table)
    if config.time.panes is Panes.DISCARDING:
        table = _discarding(table, config)
    return table


def marks_at(trace: pd.DataFrame, batch: np.ndarray, scope: list[str]) -> pd.DataFrame:
    """Per row, the watermark (raw and effective) of ``scope`` at the last commit up to ``batch``: that batch's own
    when its commit recorded the scope (every batch that changed a window does), else the one before."""
    commits = trace[trace["at"] == "commit"].drop_duplicates(["batch", "scope"], keep="last")
    table = pd.DataFrame({"batch": commits["batch"].to_numpy(dtype=np.int64), "scope": commits["scope"].astype(str),
                          "watermark": commits["watermark"], "effective": commits["effective"]})
    return last_up_to(table, batch, scope, "batch", "scope")


def last_up_to(table: pd.DataFrame, at: np.ndarray, by: list[str], on: str, by_name: str) -> pd.DataFrame:
    """Per (``at``, ``by``) asked, ``table``'s last row of that ``by_name`` whose ``on`` is at most ``at``."""
    right = table.copy()
    right[on] = table[on].to_numpy(dtype=np.int64)
    right[by_name] = table[by_name].astype(str)
    left = pd.DataFrame({on: np.asarray(at, dtype=np.int64), by_name: by, "row": np.arange(len(at))})
    found = pd.merge_asof(left.sort_values(on), right.sort_values(on), on=on, by=by_name, direction="backward")
    return found.sort_values("row").reset_index(drop=True)


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
