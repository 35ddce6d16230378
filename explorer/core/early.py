"""Beam's early firings (``--early-firings T``): ``AfterWatermark.pastEndOfWindow().withEarlyFirings(
AfterProcessingTime.pastFirstElementInPane().plusDelayOf(T))``, the late firings and the panes as configured.

An early firing decides nothing: Beam drops, judges lateness and fires the on-time and late panes by the watermark
alone, whatever the early sub-trigger did. So every runner makes the table without early panes, and
:func:`add_early_panes` adds them here, once, as ``coalesce.py`` cuts updates: it reads the Result (each event's
arrival time is its processing time; each window's first emission is its on-time pane, by watermark or at the end
of input) and puts the EARLY panes before it.

Beam's rule (Java's ``AfterWatermarkStateMachine`` / ``AfterProcessingTimeStateMachine`` and Python's
``trigger.AfterWatermark`` / ``AfterProcessingTime`` alike): a pane's first element, processed at p, sets a
processing-time timer at p + T; when the clock reaches it, the window fires an EARLY pane with what it holds, and
the next element starts a new pane. Once the watermark has fired the window (its on-time pane), the early
sub-trigger is done. Ties, as Beam's Python runner decides them (run here): a timer fires once the clock is at or
past it (``InMemoryUnmergedState.get_timers``: ``timestamp <= processing_time``), before the element the clock moved
for, so an element arriving exactly at p + T, and the on-time firing it may cause, come after the early pane.
Beam's Java runners fire it only once the clock is strictly past p + T (``InMemoryTimerInternals.removeNextTimer``
and ``AfterDelayFromFirstElementStateMachine.shouldFire``: ``isAfter``), so there that element still joins the
pane: the one place the two differ, by one tick of the clock (1 ms in Java). The clock moves only with arrivals: a
timer due after the last arrival never fires (the input ends and the watermark goes to infinity first).

The on-time pane is emitted even when no element arrived since the last early pane (Beam's default
``OnTimeBehavior.FIRE_ALWAYS``; the Python runner emits it too): with discarding panes it carries nothing then.
Each pane's index (Beam's ``PaneInfo.index``) is its row's ``revision`` − 1, and its timing follows from its
reason (:func:`explorer.core.result.pane_timing`).

Sessions are refused: a merged session's pane timers and pane indices follow runner-specific rules (Python keeps
each merged window's timer; Java's ``ReduceFnRunner`` merges them), not one model.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from explorer.core.result import Result
from explorer.core.summary import with_windows
from explorer.core.triggers import prepend_panes


def add_early_panes(result: Result) -> Result:
    """``result`` with its EARLY panes (and the metrics of the new table); any result without early firings as it
    is."""
    config = result.config
    delay = config.time.early_firings
    if delay is None:
        return result
    windows = _with_early(result, delay)
    return with_windows(result, windows)


def _with_early(result: Result, delay: int) -> pd.DataFrame:
    """The windows table with each window's early panes before its first emission (its on-time pane)."""
    events = result.events
    arrival = dict(zip(events["id"].tolist(), events["arrival_time"].tolist()))
    on_time = result.windows["emit_time"].tolist()

    def fire(row: int, members: tuple[str, ...]) -> list[tuple[dict[str, object], list[str]]]:
        panes = _panes(np.array([arrival[i] for i in members], dtype=np.int64), on_time[row], delay)
        return [({"emit_time": due}, [m for m, h in zip(members, upto.tolist()) if h]) for due, upto in panes]

    return prepend_panes(result, fire)


def _panes(arrivals: np.ndarray, on_time: int, delay: int) -> list[tuple[int, np.ndarray]]:
    """A window's early panes from its elements' arrival (processing) times, before its on-time pane at ``on_time``:
    (when it fires, which elements it holds). A pane begins with the first element after the last firing, and
    fires at that element's arrival + ``delay`` if that is no later than the on-time pane."""
    out: list[tuple[int, np.ndarray]] = []
    fired = None  # the last early firing: elements arriving at or after it are in the next pane
    while True:
        waiting = arrivals if fired is None else arrivals[arrivals >= fired]
        if not len(waiting):
            return out
        due = int(waiting.min()) + delay
        if due > on_time:
            return out
        out.append((due, arrivals < due))
        fired = due
