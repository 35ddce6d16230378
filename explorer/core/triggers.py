"""What the triggers added after any runner share (``core/emitted.py``: Beam's early firings in ``early.py``,
Flink's continuous triggers in ``continuous.py`` and ``continuous_processing.py``): where they are refused, how a
window's panes are put before its first emission, and how a pane becomes a windows-table row. One frame, so the
triggers differ only in when their panes fire."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from explorer.budget import check_panes
from explorer.config import Emit, Panes, RunConfig, WindowKind
from explorer.core.coalesce import last_up_to, marks_at
from explorer.core.result import WINDOW_COLUMNS, Reason, Result, canonical_order
from explorer.core.rules import derive
from explorer.core.watermarks import GLOBAL
from explorer.timeutil import format_duration



@dataclass(frozen=True)
class Trigger:
    """A trigger added after the runner, as its refusals name it."""

    flag: str  # its option
    field: str  # its TimeConfig field
    merge: str | None  # why its sessions are not one rule here (None: they are modelled)
    windows: str  # the windows it is modelled for
    on_close: str  # what its panes are to the window's firing, which emit on-close gives
    updates: str  # what the other emit modes already do


FLINKS_MERGE = "the trigger's onMerge keeps the merged-away windows' timers"
TRIGGERS = (  # in the order they are named: a configuration's first
    Trigger("--early-firings", "early_firings", None, "tumbling, sliding or session windows",
            "early panes come before a window's on-time pane",
            "already emits every update"),
    Trigger("--continuous-event-time", "continuous_event_time", FLINKS_MERGE, "tumbling, sliding or cumulate windows",
            "periodic panes come before a window's firing at its end", "already emits every update"),
    Trigger("--continuous-processing-time", "continuous_processing_time", FLINKS_MERGE, "tumbling, sliding or cumulate windows",
            "the periodic panes are the window's firings", "emits every update"),
)


def refusal(config: RunConfig) -> str | None:
    """Why the trigger ``config`` sets cannot be modelled (None: it can, or it sets none). Each is modelled for
    one window's panes in one rule: not for sessions (merging moves timers by each engine's own rules) but Beam's
    unaligned early firings (``early_sessions.py``, Beam Python's rules), only beside the window's firing on close
    (the other emit modes emit every update already), one trigger at a time, and not where a window can be opened
    and emitted again (--forget-clock-when-empty)."""
    t = config.time
    if t.early_aligned_to is not None and t.early_firings is None:
        return "--early-aligned-to aligns the early firings' timers: it needs --early-firings T, their period"
    on = [trigger for trigger in TRIGGERS if getattr(t, trigger.field) is not None]
    if not on:
        return None
    first = on[0]
    if config.window.kind is WindowKind.SESSION and t.early_aligned_to is not None:
        return ("--early-aligned-to: sessions with aligned early firings are not modelled (Beam Python has no "
                "alignedTo); use --early-firings alone, or tumbling or sliding windows")
    if config.window.kind is WindowKind.SESSION and first.merge is not None:
        return f"{first.flag}: sessions are not modelled ({first.merge}); use {first.windows}"
    if t.emit is not Emit.ON_CLOSE:
        return f"{first.flag}: {first.on_close} (emit on-close); emit {t.emit.value} {first.updates}"
    if len(on) > 1:
        return f"{on[-1].flag} and {first.flag} are two triggers: choose one"
    if derive(config).forget_when_empty:
        return (f"{first.flag}: with --forget-clock-when-empty a window can be opened and emitted again, and its "
                "panes would not be one window's")
    return None


# a window's panes before its first emission, from that emission's row and the events it holds: each pane's fields
# (emit_time, and emit_batch and the watermark when the trigger knows them) and the events it holds, in order
Fire = Callable[[int, tuple[str, ...]], Sequence[tuple[dict[str, object], Sequence[str]]]]


def check_periodic(flag: str, interval: int, begin: np.ndarray, stop: np.ndarray, count: np.ndarray) -> None:
    """Refuse, with the figure, periodic panes that would not fit, before any is made: each window (``begin``,
    ``stop``: from when to when its trigger can fire; ``count``: its events) fires at most once per ``interval``
    between them, each pane listing at most its events."""
    panes = np.maximum(stop - begin, 0) // interval + 2
    total = int(panes.sum())
    check_panes(total, int((panes * count).sum()),
                f"{flag} {format_duration(interval)} on this run ({len(panes):,} windows, up to {total:,} periodic "
                "panes)", "use a longer interval")


def prepend_panes(result: Result, fire: Fire) -> pd.DataFrame:
    """The windows table with each window's panes (``fire``) before its first emission, its later rows' revisions
    moved on by their number, and (discarding) each pane and the first emission cut to the events no earlier pane
    carried: a trigger's firing decides nothing, so the runner's table is kept and the panes are added to it."""
    w = result.windows
    if w.empty:
        return w
    discarding = result.config.time.panes is Panes.DISCARDING
    window_of = w.groupby(["key", "start", "end"], sort=False).ngroup().to_numpy()
    first = ~pd.Series(window_of).duplicated().to_numpy()  # a window's first emission
    panes: list[dict[str, object]] = []
    shift = np.zeros(window_of.max() + 1, dtype=np.int64)  # panes put before it, per window
    ids = w["ids"].to_numpy(dtype=object).copy()
    counts = w["count"].to_numpy().copy()
    keys, starts, ends = (w[c].tolist() for c in ("key", "start", "end"))
    for row in np.flatnonzero(first).tolist():
        members = tuple(ids[row])
        fired = fire(row, members)
        shown: set[str] = set()
        for n, (fields, held) in enumerate(fired, 1):
            carried = [m for m in held if m not in shown] if discarding else held
            shown.update(held)
            panes.append({"key": keys[row], "start": starts[row], "end": ends[row], "ids": tuple(carried),
                          "revision": n, **fields})
        shift[window_of[row]] = len(fired)
        if discarding and fired:
            ids[row] = tuple(m for m in members if m not in shown)
            counts[row] = len(ids[row])
    if not panes:
        return w
    table = w.assign(ids=ids, count=counts, revision=w["revision"].to_numpy() + shift[window_of])
    return canonical_order(pd.concat([table, pane_rows(result, pd.DataFrame(panes))], ignore_index=True))


def pane_rows(result: Result, panes: pd.DataFrame) -> pd.DataFrame:
    """The panes as EARLY windows-table rows: emitted by the last batch committed before their timer fired, or by
    their ``emit_batch`` where given (continuous_processing's timers due in the past, continuous's watermark
    advances, early.py's timers due at their own element's arrival); with that commit's watermark of their scope
    (or their ``watermark`` and ``effective_watermark`` when given: the advance that fired them) and the largest
    event time that scope had seen by then (as a watermark firing there would have)."""
    config = result.config
    rules = derive(config)
    events = result.events
    arrivals = events["arrival_time"].to_numpy(dtype=np.int64)
    order = np.argsort(arrivals, kind="stable")
    due = panes["emit_time"].to_numpy(dtype=np.int64)
    before = np.searchsorted(arrivals[order], due, side="left")  # events that arrived before each timer
    batch = events["batch"].to_numpy(dtype=np.int64)[order][before - 1]
    if "emit_batch" in panes:  # given, where a row has it
        given = panes["emit_batch"].to_numpy(dtype="float64", na_value=np.nan)
        batch = np.where(np.isnan(given), batch, given).astype(np.int64)
    partition_of = dict(zip(events["key"], events["partition"]))
    group = [str(k) if rules.per_key else str(partition_of[k]) if rules.per_partition else GLOBAL
             for k in panes["key"].tolist()]
    marks = (panes.rename(columns={"effective_watermark": "effective"}) if "watermark" in panes
             else marks_at(result.watermarks, batch, group))
    group_of_event = (events["key"] if rules.per_key else events["partition"] if rules.per_partition
                      else pd.Series(GLOBAL, index=events.index)).astype(str)
    seen_by = (pd.DataFrame({"group": group_of_event, "batch": events["batch"].to_numpy(dtype=np.int64),
                             "t": events["event_time"].to_numpy(dtype=np.int64)})
               .groupby(["group", "batch"])["t"].max().groupby(level=0).cummax().reset_index())
    seen = last_up_to(seen_by, batch, group, "batch", "group")["t"].to_numpy(dtype=np.int64)
    end = panes["end"].to_numpy(dtype=np.int64)
    return pd.DataFrame({
        "key": panes["key"].to_numpy(dtype=object), "start": panes["start"].to_numpy(dtype=np.int64), "end": end,
        "count": np.fromiter(map(len, panes["ids"]), dtype=np.int64, count=len(panes)),
        "ids": panes["ids"].to_numpy(dtype=object), "emit_batch": batch, "emit_time": due,
        "watermark": pd.array(marks["watermark"].to_numpy(), dtype="Int64"),
        "effective_watermark": pd.array(marks["effective"].to_numpy(), dtype="Int64"),
        "reason": Reason.EARLY.value, "revision": panes["revision"].to_numpy(dtype=np.int64),
        "latency_event": pd.array(seen - end, dtype="Int64"),
        "latency_processing": due - end,
    }, columns=WINDOW_COLUMNS)
