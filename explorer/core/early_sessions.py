"""Beam's early firings with sessions (``--early-firings T``, session windows), as Beam's Python runner fires them
(``trigger.AfterProcessingTime`` and ``GeneralTriggerDriver`` with ``MergeableStateAdapter``, read and run here).

An early pane decides nothing (drops, lateness, the on-time and late panes are the watermark's, see ``early.py``),
but a session's early timers live through its merges, so its early panes follow the sessions it was made of. No
runner records those: each event's final session does, and the events of one final session are exactly those that
ever merged together. So :func:`session_panes` replays, per key, its events in processing order: each opens
[t, t + gap) and merges with the parts of its final session it overlaps (as the runner merged them; a session the
runner dropped is another final session), and the runner's own emissions are put in at their place, each to the
part that has its span (the latest touched, should a dropped one have had it too), so each part knows when it
fired. Beam Python's rules:

- a part holds one timer slot per window it was made of (Beam's window ids, a merged window's in the order of its
  parts' starts); its first element, or the first since its last pane, while no pane of it is pending (the merged
  ``has_timer`` state), sets the timer of its first slot to p + T (overwriting a timer still pending there);
- every slot's timer fires the part it is in now, when the processing clock reaches it (before the element the
  clock moved for), with what the part holds: an EARLY pane, after which no pane of it is pending; a merge keeps
  every slot's timer (``on_merge`` keeps them), so a merged session can fire early once per timer its parts had;
- once the part, or any part it merged with, has fired by the watermark (its first emission in the runner's
  table), it is late (``AfterWatermark``'s merged ``is_late`` state): no more timers are set, and pending ones fire
  nothing.

Java's runners merge a window's timers into one (``AfterDelayFromFirstElementStateMachine.onMerge``: the earliest of
the merged parts'), so a merged session fires early at most once per pane there; the two agree on *Streaming
Systems* 4-3, not in general. A merged session is a new window to Beam (its pane index restarts at 0): each part's
emissions count on from the most any of its parts had emitted, as the runners count a merged session's revisions,
so :func:`explorer.core.result.pane_columns` gives Beam's index. With discarding panes each pane carries only the
events no earlier pane of its parts carried."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from explorer.config import Panes
from explorer.core.result import Result, canonical_order
from explorer.core.rules import derive
from explorer.core.triggers import pane_rows


@dataclass
class _Part:
    """A session as Beam holds it between merges."""

    final: int  # the final session it is part of
    start: int
    end: int
    members: list[int]  # event rows, in processing order
    slots: list[int | None] = field(default_factory=lambda: [None])  # each merged window's pending timer
    pending: bool = False  # Beam's has_timer: a pane of it is waiting for a timer
    late: bool = False  # it (or a part it merged with) has fired by the watermark
    revision: int = 0  # its emissions so far (the most of its parts')
    touched: int = 0  # the step that last changed it
    shown: set[int] = field(default_factory=set)  # events an emission of it (or its parts) carried


def session_panes(result: Result, due: Callable[[int], int]) -> pd.DataFrame:
    """The windows table of a session run with each part's early panes, the runner's rows renumbered after them
    (and, discarding, cut to what no earlier pane carried)."""
    w = result.windows
    if w.empty:
        return w
    events = result.events
    rules = derive(result.config)
    a = result.assignments[result.assignments["admitted"].to_numpy(dtype=bool)]
    rows = a["event"].to_numpy(dtype=np.int64)
    finals = pd.DataFrame({"row": rows, "key": events["key"].to_numpy(dtype=object)[rows],
                           "final": a.groupby(["start", "end"], sort=False).ngroup().to_numpy()})
    table = w.copy()
    revisions = table["revision"].to_numpy(dtype=np.int64).copy()
    ids = table["ids"].to_numpy(dtype=object).copy()
    counts = table["count"].to_numpy(dtype=np.int64).copy()
    rows_of_key = {k: np.asarray(v, dtype=np.int64) for k, v in table.groupby("key", sort=False).indices.items()}
    none = np.empty(0, dtype=np.int64)
    replay = _Replay(result, due, rules.gap + (1 if rules.strict else 0), rules.overlap_only)
    early: list[dict[str, object]] = []
    for key, members in finals.groupby("key", sort=False):
        early.extend({"key": key, **pane} for pane in replay.run(
            members["row"].to_numpy(), members["final"].to_numpy(), rows_of_key.get(key, none), revisions, ids, counts))
    if not early:
        return w
    table = table.assign(revision=revisions, ids=ids, count=counts)
    return canonical_order(pd.concat([table, pane_rows(result, pd.DataFrame(early))], ignore_index=True))


class _Replay:
    """One key's merges, timers and emissions, in processing order."""

    def __init__(self, result: Result, due: Callable[[int], int], span: int, overlap_only: bool):
        events, w = result.events, result.windows
        self.ids = events["id"].tolist()
        self.times = events["event_time"].to_numpy(dtype=np.int64)
        self.arrivals = events["arrival_time"].to_numpy(dtype=np.int64)
        self.batches = events["batch"].to_numpy(dtype=np.int64)
        self.clock_end = int(self.arrivals.max()) if len(self.arrivals) else 0  # the clock moves with arrivals
        self.w_start, self.w_end = w["start"].to_numpy(dtype=np.int64), w["end"].to_numpy(dtype=np.int64)
        self.w_time, self.w_batch = w["emit_time"].to_numpy(dtype=np.int64), w["emit_batch"].to_numpy(dtype=np.int64)
        self.discarding = result.config.time.panes is Panes.DISCARDING
        self.due, self.span, self.overlap_only = due, span, overlap_only

    def run(self, members: np.ndarray, finals: np.ndarray, rows: np.ndarray, revisions: np.ndarray,
            ids: np.ndarray, counts: np.ndarray) -> list[dict[str, object]]:
        """The key's early panes, for its event rows ``members`` and their final sessions ``finals``; its runner
        rows' (``rows``) revisions, ids and counts set in place."""
        # elements and the runner's emissions in the order they happened: an emission after its batch's elements
        steps = sorted([(int(self.arrivals[m]), int(self.batches[m]), 0, int(m), int(f))
                        for m, f in zip(members.tolist(), finals.tolist())]
                       + [(int(self.w_time[r]), int(self.w_batch[r]), 1, int(r), 0) for r in rows.tolist()])
        parts: list[_Part] = []
        out: list[dict[str, object]] = []
        for step, (when, _, kind, n, final) in enumerate(steps, 1):
            self._fire(parts, when, out)
            if kind == 0:
                self._element(parts, n, final, step)
            else:
                self._emitted(parts, n, revisions, ids, counts)
        self._fire(parts, self.clock_end, out)
        return out

    def _fire(self, parts: list[_Part], upto: int, out: list[dict[str, object]]) -> None:
        """Every timer due at or before ``upto``, earliest first: an EARLY pane of its part unless that is late."""
        while True:
            timers = [(at, p, s) for p, part in enumerate(parts) for s, at in enumerate(part.slots)
                      if at is not None and at <= upto]
            if not timers:
                return
            at, p, s = min(timers)
            part = parts[p]
            part.slots[s] = None
            if part.late:
                continue
            carried = [m for m in part.members if m not in part.shown] if self.discarding else part.members
            part.shown.update(part.members)
            part.revision += 1
            part.pending = False
            out.append({"start": part.start, "end": part.end, "ids": tuple(self.ids[m] for m in carried),
                        "revision": part.revision, "emit_time": at})

    def _element(self, parts: list[_Part], m: int, final: int, step: int) -> None:
        """Event row ``m`` merges the parts of its final session its own session overlaps (or touches, where
        sessions merge so), and sets its part's timer if none of its panes is pending."""
        t = int(self.times[m])
        end = t + self.span
        touching = sorted((p for p in parts if p.final == final and (
            p.start < end and t < p.end if self.overlap_only else p.start <= end and t <= p.end)),
            key=lambda p: p.start)
        for p in touching:
            parts.remove(p)
        part = _Part(final, min([t] + [p.start for p in touching]), max([end] + [p.end for p in touching]),
                     sorted([m] + [x for p in touching for x in p.members]),
                     [s for p in touching for s in p.slots] or [None], any(p.pending for p in touching),
                     any(p.late for p in touching), max([0] + [p.revision for p in touching]),
                     touched=step, shown=set().union(*(p.shown for p in touching)))
        parts.append(part)
        if not part.late and not part.pending:
            part.slots[0] = self.due(int(self.arrivals[m]))
            part.pending = True

    def _emitted(self, parts: list[_Part], r: int, revisions: np.ndarray, ids: np.ndarray,
                 counts: np.ndarray) -> None:
        """The runner's row ``r``: its part is late from now on, and the row counts on from the part's panes."""
        span = (self.w_start[r], self.w_end[r])
        same = [p for p in parts if (p.start, p.end) == span]
        # a firing per element (--late-fires-per-element) of a span that a later element of its batch has grown
        # since: the replay takes a batch's elements before its firings, so it is the part that now holds the span
        part = max(same or [p for p in parts if p.start <= span[0] and span[1] <= p.end], key=lambda p: p.touched)
        part.late = True
        part.revision += 1
        revisions[r] = part.revision
        if self.discarding:
            shown = {self.ids[m] for m in part.shown}
            ids[r] = tuple(e for e in ids[r] if e not in shown)
            counts[r] = len(ids[r])
        part.shown.update(part.members)
