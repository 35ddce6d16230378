"""Flink's ``ContinuousEventTimeTrigger.of(interval)`` (``--continuous-event-time I``): a window fires at every
interval of event time the watermark passes, then at its end, keeping its contents (accumulating).

Like Beam's early firings (``core/early.py``), a periodic firing decides nothing: the trigger's ``onElement`` fires a
passed window on each element exactly as ``EventTimeTrigger`` does, and its timer at the window's maxTimestamp fires
the window as the watermark does. So every runner makes the table without them and :func:`add_continuous_panes` adds
them, once, from the Result: the window's elements (batch by batch), its first emission (its firing at the end) and
the watermark trace.

Flink 2.3.0's rule (``javap -c`` on ``ContinuousEventTimeTrigger.class``): the window's first element that is not
late (maxTimestamp > watermark), with timestamp t, holds a fire timestamp at min(t − t % I + I, maxTimestamp)
and registers an event-time timer there; when that timer fires (``onEventTime``: time == the held one) the window
fires and the next is held at min(time + I, maxTimestamp). So the boundaries are the multiples of I after the first
element's t (later elements move nothing), and each fires **whether or not elements arrived since**: a watermark
jump past several boundaries fires them all, in order, at that advance (the timer service pops every timer at or
below the new watermark, those registered meanwhile too), repeating the same contents. A timer registered at or
below the watermark fires at the next advance, and at the end of input (Flink's MAX_WATERMARK) every boundary left
fires just before the window's last firing. A boundary at or after maxTimestamp is the window's own firing.

Flink's timer at b fires when its watermark (max − L − 1 ms) reaches b; the effective watermark here is Flink's
+ 1 ms (the flink preset's arithmetic), so a boundary b fires once the effective watermark reaches b + 1 ms, and
the window's end (maxTimestamp = end − 1 ms) as it does now. Each pane is an EARLY row (``result.pane_timing``);
its index is its revision − 1.

Sessions are refused: ``onMerge`` re-registers the merged window's held fire timestamp while the merged-away
windows' timers stay registered (ContinuousEventTimeTriggerTest.testMergingWindows counts them), not one rule here.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from explorer.config import MILLISECOND
from explorer.core.result import Reason, Result
from explorer.core.rules import derive
from explorer.core.summary import with_windows
from explorer.core.triggers import check_periodic, prepend_panes
from explorer.core.watermarks import GLOBAL

TICK = MILLISECOND  # a window's end − Flink's maxTimestamp: a timer at b fires when the effective mark is b + 1 ms


def add_continuous_panes(result: Result) -> Result:
    """``result`` with its periodic panes (and the metrics of the new table); any other result as it is."""
    config = result.config
    interval = config.time.continuous_event_time
    if interval is None:
        return result
    w = result.windows
    first = ~w.duplicated(["key", "start", "end"], keep="first").to_numpy()  # each window's, in the groups' order
    check_periodic("--continuous-event-time", interval, w["start"].to_numpy(dtype=np.int64)[first],
                   w["end"].to_numpy(dtype=np.int64)[first],
                   w.groupby(["key", "start", "end"], sort=False)["count"].max().to_numpy(dtype=np.int64))
    windows = _with_periodic(result, interval)
    return with_windows(result, windows)


def _advances(result: Result) -> dict[str, pd.DataFrame]:
    """Per watermark scope, the trace rows where its effective watermark rose (Flink fires timers only then), in
    order: batch, time, watermark, effective."""
    trace = result.watermarks
    out = {}
    for scope, rows in trace.groupby(trace["scope"].astype(str), sort=False):
        effective = rows["effective"].to_numpy(dtype="float64", na_value=-np.inf)
        rose = effective > np.maximum.accumulate(np.concatenate([[-np.inf], effective[:-1]]))
        out[scope] = rows[rose].reset_index(drop=True)
    return out


def _with_periodic(result: Result, interval: int) -> pd.DataFrame:
    """The windows table with each window's periodic panes before its first emission (its firing at the end)."""
    w, events = result.windows, result.events
    rules = derive(result.config)
    batch_of = dict(zip(events["id"].tolist(), events["batch"].tolist()))
    order_of = {e: n for n, e in enumerate(events["id"].tolist())}  # the events table is in processing order
    time_of = dict(zip(events["id"].tolist(), events["event_time"].tolist()))
    partition_of = dict(zip(events["key"], events["partition"]))
    advances = _advances(result)
    keys, reasons = w["key"].tolist(), w["reason"].tolist()
    ends, batches, times = (w[c].to_numpy(dtype=np.int64) for c in ("end", "emit_batch", "emit_time"))

    def fire(row: int, ids: tuple[str, ...]) -> list[tuple[dict[str, object], list[str]]]:
        members = sorted(ids, key=order_of.__getitem__)
        if not members or reasons[row] == Reason.LATE_UPDATE.value:  # opened late: fired per element only
            return []
        key = keys[row]
        scope = str(key) if rules.per_key else str(partition_of[key]) if rules.per_partition else GLOBAL
        fired = _firings(advances.get(scope), (time_of[members[0]] // interval + 1) * interval, int(ends[row]),
                         interval, batch_of[members[0]], int(batches[row]), int(times[row]),
                         reasons[row] == Reason.END_OF_STREAM.value)
        return [({"emit_batch": batch, "emit_time": time, "watermark": mark, "effective_watermark": effective},
                 [m for m in members if batch_of[m] <= batch]) for _, batch, time, mark, effective in fired]

    return prepend_panes(result, fire)


def _firings(advances: pd.DataFrame | None, boundary: int, end: int, interval: int, first_batch: int,
             last_batch: int, last_time: int, end_of_input: bool) -> list[tuple[int, int, int, object, object]]:
    """A window's periodic firings before its firing at the end (batch ``last_batch``, time ``last_time``):
    (boundary, batch, time, watermark, effective) each, from its first boundary on. Each fires at the first
    advance of its scope's watermark, no earlier than the one before it (or its first element's batch), that
    reaches it; at the end of input, those left fire with the window's last firing."""
    out: list[tuple[int, int, int, object, object]] = []
    rows = advances if advances is not None else pd.DataFrame(columns=["batch", "time", "watermark", "effective"])
    batch, time = rows["batch"].to_numpy(dtype=np.int64), rows["time"].to_numpy(dtype=np.int64)
    effective = rows["effective"].to_numpy(dtype="float64", na_value=-np.inf)
    at = int(np.searchsorted(batch, first_batch, side="left"))  # the first advance after the first element
    while boundary + TICK < end:  # (a boundary at or past maxTimestamp is the window's own firing)
        at = max(at, int(np.searchsorted(effective, boundary + TICK, side="left")))
        if at < len(batch) and (batch[at], time[at]) <= (last_batch, last_time):
            out.append((boundary, int(batch[at]), int(time[at]), rows["watermark"].iat[at], rows["effective"].iat[at]))
        elif end_of_input:
            out.append((boundary, last_batch, last_time, None, None))
        else:
            break
        boundary += interval
    return out


def boundary(result: Result, row: int) -> int:
    """The multiple of the interval whose timer fired periodic pane ``row`` (for the inspector): the window's
    ``revision``-th after its first element's timestamp."""
    w, interval = result.windows, result.config.time.continuous_event_time
    assert interval is not None
    same = w[(w["key"] == w["key"].iat[row]) & (w["start"] == w["start"].iat[row]) & (w["end"] == w["end"].iat[row])]
    members = set().union(*map(set, same["ids"]))
    events = result.events
    first = events.loc[events["id"].isin(members), "event_time"].to_numpy(dtype=np.int64)[0]  # processing order
    return (int(first) // interval + int(w["revision"].to_numpy(dtype=np.int64)[row])) * interval
