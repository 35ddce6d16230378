"""Flink's ``ContinuousProcessingTimeTrigger.of(interval)`` (``--continuous-processing-time I``): a window fires,
keeping its contents, at every interval of processing time from its first element, until it is purged.

Flink 2.3.0's rule (``javap -c`` on ``ContinuousProcessingTimeTrigger.class``): the window's first element,
processed at processing time p, holds min(p − p % I + I, maxTimestamp) and registers a processing-time timer
there (later elements find one held and register none); ``onProcessingTime(time)`` FIREs when time is
maxTimestamp (and registers nothing more), else, when time is the held one, holds min(time + I, maxTimestamp)
and FIREs; ``onEventTime`` CONTINUEs. So the watermark never fires the window: not at its end, not for a late
element. The WindowOperator drops late elements and purges the window, without firing it, when the watermark
reaches maxTimestamp + allowed lateness (its cleanup timer; for processing-time windows, the clock at
maxTimestamp, after the trigger's own firing there). Processing time is the arrival time (as in ``core/early.py``):
the clock moves with arrivals, a timer fires before the element the clock moved for, and one due after the last
arrival never fires (the input ends and the purge comes first); one due by the watermark emit that purges the
window fires before it (Flink's periodic emit is a processing-time timer too). A timer already due when registered (a
first element processed at or after maxTimestamp: event time and processing time share one axis here) fires
right after that element.

Every runner makes the table with the window's firings by the watermark (or, for processing-time windows, by the
clock at its end); :func:`add_processing_panes` replaces each window's rows, once, from the Result, by its
periodic panes alone, all EARLY rows (the one at maxTimestamp too: a processing-time timer's): the table has no
WATERMARK, LATE_UPDATE or END_OF_STREAM row, and an event-time window's element that arrived after its last
periodic firing is never emitted. A pane's index is its revision − 1.

Sessions are refused: ``onMerge`` re-registers the merged window's held time (ContinuousProcessingTimeTriggerTest
.testMergingWindows), and the merged-away windows' timers are not one rule here.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from explorer.config import MILLISECOND, Panes, TimeSource
from explorer.core.result import Metrics, Result, Stat, canonical_order
from explorer.core.rules import derive
from explorer.core.summary import with_windows
from explorer.core.triggers import check_periodic, pane_rows
from explorer.core.watermarks import GLOBAL

def add_processing_panes(result: Result) -> Result:
    """``result`` with its windows fired by the processing-time trigger (and the metrics of the new table); any
    other result as it is."""
    interval = result.config.time.continuous_processing_time
    if interval is None:
        return result
    out = with_windows(result, _with_periodic(result, interval))
    return replace(out, metrics=_metrics(out))


def _metrics(result: Result) -> Metrics:
    """The metrics of a table of periodic panes alone, where the common arithmetic (``summary``) would count no
    window emitted (it counts a window's first emission after its EARLY panes): here a window is emitted by its
    first pane, which gives its latencies; its later panes are its updates; and completeness counts the (event,
    window) pairs some pane carried, as an element that arrives after a window's last pane is never output."""
    w, events, a = result.windows, result.events, result.assignments
    first = w["revision"].to_numpy() == 1
    carried = {(key, start, end, i) for key, start, end, ids in w[["key", "start", "end", "ids"]].itertuples(
        index=False) for i in ids}
    ids, keys = events["id"].to_numpy(dtype=object), events["key"].to_numpy(dtype=object)
    rows = a[["event", "start", "end"]].to_numpy(dtype=np.int64)
    out = sum((keys[e], s, t, ids[e]) in carried for e, s, t in rows.tolist()) / len(a) if len(a) else 1.0
    return replace(result.metrics, windows_emitted=int(first.sum()), updates=int((~first).sum()), end_of_stream=0,
                   completeness=out, completeness_live=out,
                   latency_event=Stat.of(w["latency_event"][first].dropna().to_numpy(dtype=np.int64)),
                   latency_processing=Stat.of(w["latency_processing"].to_numpy(dtype=np.int64)[first]))


def _purges(result: Result) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per watermark scope, the time of each row of its trace and the highest effective watermark by then."""
    trace = result.watermarks
    out = {}
    for scope, rows in trace.groupby(trace["scope"].astype(str), sort=False):
        effective = np.maximum.accumulate(rows["effective"].to_numpy(dtype="float64", na_value=-np.inf))
        out[scope] = rows["time"].to_numpy(dtype=np.int64), effective
    return out


def _with_periodic(result: Result, interval: int) -> pd.DataFrame:
    """The windows table of the periodic panes alone: each window's, instead of the rows the runner gave it."""
    w = result.windows
    if w.empty:
        return w
    config = result.config
    rules = derive(config)
    processing = config.time.time_source is TimeSource.PROCESSING
    events = result.events
    arrivals = events["arrival_time"].to_numpy(dtype=np.int64)  # the events table is in processing order
    event_batch = events["batch"].to_numpy(dtype=np.int64)
    index_of = {e: n for n, e in enumerate(events["id"].tolist())}
    partition_of = dict(zip(events["key"], events["partition"]))
    purges = _purges(result)
    discarding = config.time.panes is Panes.DISCARDING
    window_of = w.groupby(["key", "start", "end"], sort=False).ngroup().to_numpy()
    panes: list[dict[str, object]] = []
    starts, ends = w["start"].to_numpy(dtype=np.int64), w["end"].to_numpy(dtype=np.int64)
    ids = w["ids"].to_numpy(dtype=object)
    order = np.argsort(window_of, kind="stable")
    windows = []  # each window with events: key, start, end, and its events' rows in processing order
    for at in np.split(order, np.flatnonzero(np.diff(window_of[order])) + 1):  # each window's rows
        members = np.array(sorted({index_of[e] for row in at.tolist() for e in ids[row]}), dtype=np.int64)
        if len(members):
            windows.append((w["key"].iat[at[0]], int(starts[at[0]]), int(ends[at[0]]), members))
    # a window fires from its first element's arrival to its end, and not past the last arrival
    check_periodic("--continuous-processing-time", interval,
                   np.array([arrivals[members[0]] for *_, members in windows], dtype=np.int64),
                   np.minimum([end for _, _, end, _ in windows], int(arrivals.max()) + interval),
                   np.array([len(members) for *_, members in windows], dtype=np.int64))
    for key, start, end, members in windows:
        scope = str(key) if rules.per_key else str(partition_of[key]) if rules.per_partition else GLOBAL
        purge = None if processing else _purged_at(purges.get(scope), end + config.time.allowed_lateness)
        shown = np.zeros(len(members), dtype=bool)
        for n, (due, upto) in enumerate(_firings(arrivals, int(members[0]), end - MILLISECOND, interval, purge), 1):
            held = members < upto
            carried = held & ~shown if discarding else held
            shown |= held
            panes.append({"key": key, "start": start, "end": end, "revision": n, "emit_time": due,
                          "emit_batch": int(event_batch[upto - 1]),
                          "ids": tuple(events["id"].iat[i] for i in members[carried].tolist())})
    if not panes:
        return w.iloc[:0]
    return canonical_order(pane_rows(result, pd.DataFrame(panes)))


def _purged_at(advances: tuple[np.ndarray, np.ndarray] | None, cleanup: int) -> int | None:
    """When an event-time window is purged: at the time its watermark reaches maxTimestamp + allowed lateness
    (the effective watermark, Flink's + 1 ms, reaches ``end + L``); None when none does before the input ends."""
    if advances is None:
        return None
    time, effective = advances
    at = int(np.searchsorted(effective, cleanup, side="left"))
    return int(time[at]) if at < len(time) else None


def _firings(arrivals: np.ndarray, first: int, max_timestamp: int, interval: int,
             purge: int | None) -> list[tuple[int, int]]:
    """A window's periodic firings: (when, how many events were processed before it) each. The first element
    (event ``first``, at p) holds min(p − p % I + I, maxTimestamp), each firing the next, up to maxTimestamp. A
    timer fires before the first arrival at or after it, if it is due no later than the ``purge`` (the watermark
    that purges the window is emitted on the same clock: Flink's periodic emit is a processing-time timer too);
    with no purge, only if an arrival reaches it."""
    out: list[tuple[int, int]] = []
    p = int(arrivals[first])
    due = min(p - p % interval + interval, max_timestamp)
    while True:
        upto = max(int(np.searchsorted(arrivals, due, side="left")), first + 1)  # due at or before p: after it
        if due > p and (due > purge if purge is not None else upto == len(arrivals)):
            return out
        out.append((max(due, p), upto))
        if due == max_timestamp:
            return out
        due = min(due + interval, max_timestamp)
