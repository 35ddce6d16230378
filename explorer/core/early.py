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
Each pane's index and timing (Beam's ``PaneInfo``) are :func:`explorer.core.result.pane_columns`': ``revision`` − 1
for a window that kept its bounds, from 0 again for a merged session.

Aligned (``--early-aligned-to O``: ``AfterProcessingTime.pastFirstElementInPane().alignedTo(T, O)``, which Beam
Python does not have): the timer is not p + T but the next processing time O + k·T, by Java's ``AlignFn``
(``TimestampTransform.AlignTo``): with m = (p − O) % T, Java's remainder, which takes the dividend's sign, the timer
is p when m is 0, else p + T − m. So from a p at or after O it is the first multiple at or after p, and from a p
before O (m negative) the one after that: the book's example 2-4 fires so on the DirectRunner, whose test clock
starts at ``TIMESTAMP_MIN_VALUE``, before any offset. A timer due at p itself fires right after its element, as
Beam's Python runner fires it (the next look at its timers, before the next bundle), so an element arriving at p
after it is in the next pane; Java's fire it once the clock is past p, with every element of that instant.

Sessions: a session's early timers live through its merges, so its panes follow the sessions it was made of
(``early_sessions.py``, Beam Python's rules); aligned early firings with sessions are refused (Beam Python has no
``alignedTo``, and a timer due at its own element's arrival has no place in that replay).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from explorer.config import WindowKind
from explorer.core.early_sessions import session_panes
from explorer.core.result import Result
from explorer.core.summary import with_windows
from explorer.core.triggers import prepend_panes


def add_early_panes(result: Result) -> Result:
    """``result`` with its EARLY panes (and the metrics of the new table); any result without early firings as it
    is."""
    t = result.config.time
    if t.early_firings is None:
        return result
    period, offset = t.early_firings, t.early_aligned_to
    due: Callable[[int], int] = ((lambda p: p + period) if offset is None
                                 else (lambda p: aligned(p, period, offset)))
    sessions = result.config.window.kind is WindowKind.SESSION
    return with_windows(result, session_panes(result, due) if sessions else _with_early(result, due))


def aligned(p: int, period: int, offset: int) -> int:
    """Java's ``alignedTo(period, offset)`` of processing time ``p`` (its remainder takes the dividend's sign)."""
    since = p - offset
    m = since % period if since >= 0 else -(-since % period)
    return p if m == 0 else p + period - m


def _with_early(result: Result, due: Callable[[int], int]) -> pd.DataFrame:
    """The windows table with each window's early panes before its first emission (its on-time pane)."""
    events = result.events
    ids = events["id"].tolist()
    order_of = {e: n for n, e in enumerate(ids)}  # the events table is in processing order
    arrivals, batches = events["arrival_time"].to_numpy(dtype=np.int64), events["batch"].to_numpy(dtype=np.int64)
    on_time = result.windows["emit_time"].tolist()

    def fire(row: int, members: tuple[str, ...]) -> list[tuple[dict[str, object], list[str]]]:
        at = np.array(sorted(order_of[m] for m in members), dtype=np.int64)
        out: list[tuple[dict[str, object], list[str]]] = []
        for when, upto, first in _panes(arrivals[at], on_time[row], due):
            fields: dict[str, object] = {"emit_time": when}
            if first is not None:  # due at its element's arrival: right after it
                fields["emit_batch"] = int(batches[at[first]])
            out.append((fields, [ids[i] for i in at[upto].tolist()]))
        return out

    return prepend_panes(result, fire)


def _panes(arrivals: np.ndarray, on_time: int, due: Callable[[int], int]) -> list[tuple[int, np.ndarray, int | None]]:
    """A window's early panes from its elements' arrival (processing) times, in processing order, before its
    on-time pane at ``on_time``: (when it fires, which elements it holds, and its first element's place when it is
    due at that element's own arrival). A pane begins with the first element no pane holds yet, arriving at p,
    and fires at ``due(p)`` if that is no later than the on-time pane, with the elements that arrived before; one
    due at p fires right after that element (Beam's Python runner: at the next look at its timers, before the next
    bundle), so elements arriving at p after it are in the next pane."""
    out: list[tuple[int, np.ndarray, int | None]] = []
    pending = np.ones(len(arrivals), dtype=bool)  # elements in no pane yet
    while pending.any():
        first = int(np.flatnonzero(pending)[0])  # (processing order: the earliest arrival)
        at = due(int(arrivals[first]))
        if at > on_time:
            return out
        on_arrival = at == arrivals[first]
        upto = np.arange(len(arrivals)) <= first if on_arrival else arrivals < at
        out.append((at, upto, first if on_arrival else None))
        pending = ~upto
    return out
