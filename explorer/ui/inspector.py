"""The inspector: a clicked event or window explained. Its words are the core's verdicts (``core/explain.py``) as
a few lines of HTML, with instants as date-times for a wall-clock stream and durations in words; ``Inspector``
is the box they are shown in. It remembers what it explains (an event by its id, a window by its key and span),
so when the Result changes (a control moved) it explains the same event or window under the new settings, or,
when that window is no longer one, says so and clears."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from explorer.config import Emit
from explorer.core.continuous import boundary
from explorer.core.explain import Verdict, why_event, why_window
from explorer.core.result import Reason, Result, pane_columns
from explorer.timeutil import format_instant
from explorer.ui.cards import EARLY
from explorer.ui.figures import STATUS_LABELS
from explorer.ui.words import duration, plural

CLICK = "Click an event or a window marker to see why."
INSPECTOR_HINT = f"<i>{CLICK}</i>"


@dataclass(frozen=True)
class Subject:
    """What the inspector explains, as it is found again in another Result: an event by its id (and row, should
    ids repeat), a window by its key, span and revision."""

    kind: str  # "event" or "window"
    row: int
    id: str = ""
    key: str = ""
    start: int = 0
    end: int = 0
    revision: int = 1


class Inspector:
    """The inspector's box (``html``): ``event(row)`` and ``window(row)`` explain a row of ``result()``."""

    def __init__(self, result: Callable[[], Result | None], clicked: Callable[[], None] = lambda: None):
        self._result, self._clicked = result, clicked  # clicked(): it explains another row now
        self.html = W.HTML(INSPECTOR_HINT, layout=W.Layout(min_height="8em"))
        self.subject: Subject | None = None  # what is explained now

    def forget(self) -> None:
        """The stream changed: the event explained was the old one's."""
        self.subject = None
        self.html.value = INSPECTOR_HINT

    def event(self, row: int) -> str:
        result = self._result()
        if result is not None:
            self.subject = Subject("event", row, id=str(result.events["id"].iat[row]))
            self.html.value = explain_event(result, row)
            self._clicked()
        return str(self.html.value)

    def window(self, row: int) -> str:
        result = self._result()
        if result is not None:
            w = result.windows.iloc[row]
            self.subject = Subject("window", row, key=str(w["key"]), start=int(w["start"]), end=int(w["end"]),
                                   revision=int(w["revision"]))
            self.html.value = explain_window(result, row)
            self._clicked()
        return str(self.html.value)

    def follow(self, known: Followed | None = None) -> None:
        """The Result changed (a control moved, or Spark's is shown): explain the same event or window under it,
        or say that the window clicked is not one under these settings and clear. ``known``: that, worked out
        with a frame computed ahead, which may be shown without its Result (rerunning it takes a whole run at 10M
        events); used when it is for the subject explained now. With nothing explained, no Result is asked for."""
        subject = self.subject
        if subject is None:
            return
        if known is None or known.subject != subject:
            result = self._result()
            if result is None:
                return
            known = follow_subject(result, subject)
        self.subject, self.html.value = known.then, known.html


@dataclass(frozen=True)
class Followed:
    """What the inspector says of ``subject`` under another Result, and what it explains then (None: gone)."""

    subject: Subject
    then: Subject | None
    html: str


def follow_subject(result: Result, subject: Subject) -> Followed:
    """The same event or window under ``result``, or the words saying it is not one there any more."""
    if subject.kind == "event":
        row = _event_row(result, subject)
        if row is not None:
            return Followed(subject, Subject("event", row, id=subject.id), explain_event(result, row))
        gone = f"event {html.escape(subject.id)} is not in this Result"
    else:
        row = _window_row(result, subject)
        if row is not None:
            then = Subject("window", row, key=subject.key, start=subject.start, end=subject.end,
                           revision=int(result.windows["revision"].to_numpy()[row]))
            return Followed(subject, then, explain_window(result, row))
        at = _instant(result)
        gone = (f"window [{at(subject.start)}, {at(subject.end)})"
                + (f" of key {html.escape(subject.key)}" if subject.key else "")
                + " is not a window under these settings")
    return Followed(subject, None, f"<i>{gone}: the settings changed. {CLICK}</i>")


def _event_row(result: Result, subject: Subject) -> int | None:
    """The row of the subject's event in ``result``: the same row if its id is still there, else the first row
    with that id."""
    ids = result.events["id"]
    if subject.row < len(ids) and str(ids.iat[subject.row]) == subject.id:
        return subject.row
    rows = np.flatnonzero(ids.astype(str).to_numpy() == subject.id)
    return int(rows[0]) if len(rows) else None


def _window_row(result: Result, subject: Subject) -> int | None:
    """The row of the subject's window (same key and span) in ``result``: its emission of the same revision, or
    else its last one."""
    w = result.windows
    if w.empty:
        return None
    same = (w["key"].astype(str).to_numpy() == subject.key) & (w["start"].to_numpy() == subject.start) & (
        w["end"].to_numpy() == subject.end)
    rows = np.flatnonzero(same)
    if not len(rows):
        return None
    revision = np.flatnonzero(same & (w["revision"].to_numpy() == subject.revision))
    return int(revision[0]) if len(revision) else int(rows[-1])


def explain_event(result: Result, row: int) -> str:
    """Why this event ended as it did, in words."""
    e = why_event(result, row)
    t = result.config.time
    at = _instant(result)
    lines = [f"<b>event {html.escape(e.id)}</b>" + (f" · key {html.escape(e.key)}" if e.key else ""),
             f"event time {at(e.event_time)}, arrived {at(e.arrival_time)} in batch {e.batch}",
             f"watermark when it arrived: {at(e.watermark)} (effective {at(e.effective_watermark)}, delay "
             f"{duration(t.delay)})",
             f"status: <b>{STATUS_LABELS[e.status]}</b>"]
    fate = {"side_output": "sent to the side output", "dropped": "dropped"}.get(
        e.status, "dropped from this window without a trace: another of its windows kept it, so no side output "
                  "shows it")
    for w in e.windows:
        span = f"window [{at(w.start)}, {at(w.end)})"
        if w.verdict is Verdict.OPEN:
            lines.append(f"{span}: still open — its end {at(w.end)} > effective watermark {at(e.effective_watermark)}")
        elif w.verdict is Verdict.KEPT_LATE:
            lines.append(f"{span}: late, but allowed lateness {duration(t.allowed_lateness)} kept it until "
                         f"effective watermark ≥ end + {duration(t.allowed_lateness)}; the window emitted again with it")
        elif w.verdict is Verdict.WINDOW_CLOSED:
            lines.append(f"{span}: refused — its end {at(w.end)} ≤ effective watermark {at(e.effective_watermark)}: "
                         f"the window had closed; {fate}")
        else:
            lines.append(f"{span}: refused — event time {at(e.event_time)} < effective watermark "
                         f"{at(e.effective_watermark)}; {fate}")
    return "<br>".join(lines)


def _idle_check(result: Result, emit_time: int) -> str:
    """Why the watermark moved at ``emit_time`` when no record did: the trace's 'idle check' row there (Flink's
    withIdleness, decided at a periodic emit between batches). Without it a window fired by a partition leaving
    the merge read like one fired by a record's watermark, at a time no record arrived."""
    trace, timeout = result.watermarks, result.config.time.source_idle_timeout
    if timeout is None or not ((trace["at"] == "idle check") & (trace["time"] == emit_time)).any():
        return ""
    return (f", moved at the periodic emit's idle check: a partition silent for more than {duration(timeout)} "
            "left the merge of the partitions' watermarks (withIdleness, --source-idle-timeout)")


def _beams_pane(result: Result, row: int, key: str, start: int, end: int) -> str:
    """The row as Beam's pane (PaneInfo), as the JSON Result and windows.csv give it (``result.pane_columns``): a
    merged session's first pane is index 0, whatever its revision. Read from the rows of the same window only."""
    ws = result.windows
    same = ws[(ws["key"] == key) & (ws["start"] == start) & (ws["end"] == end)]
    pane = pane_columns(same).loc[ws.index[row]]
    return f" (Beam's pane {pane['pane_index']}, timing {pane['pane_timing']})"


def explain_window(result: Result, row: int) -> str:
    """What held a window open and what closed it."""
    w = why_window(result, row)
    t = result.config.time
    at = _instant(result)
    more = " …" if w.count > 12 else ""
    lines = [f"<b>window [{at(w.start)}, {at(w.end)})</b>" + (f" · key {html.escape(w.key)}" if w.key else ""),
             f"{plural(w.count, 'event')}: {html.escape(', '.join(w.ids[:12]))}{more}" if len(w.ids) == w.count else
             f"{plural(w.count, 'event')}; this emission carries {len(w.ids):,}: {html.escape(', '.join(w.ids[:12]))}"
             f"{' …' if len(w.ids) > 12 else ''}"]
    if not w.emitted:
        lines.append(f"<b>never closed</b>: the input ran out after batch {w.emit_batch} with the effective watermark "
                     f"at {at(w.effective_watermark)}, before its end, and no idle timeout fired. An engine that "
                     "flushes at end of input would emit it then; one that does not never emits it. It has no "
                     "emit latency.")
        return "<br>".join(lines)
    pane = _beams_pane(result, row, w.key, w.start, w.end) if result.config.preset == "beam" else ""
    lines.append(f"emitted after batch {w.emit_batch} at {at(w.emit_time)}, revision {w.revision}, "
                 f"reason <b>{w.reason.value}</b>{pane}")
    if w.reason is Reason.EARLY and t.early_aligned_to is not None:
        lines.append(f"an early firing: this pane's first element set a processing-time timer at the next multiple of "
                     f"{duration(t.early_firings)} from {at(t.early_aligned_to)} (--early-aligned-to, Beam Java's "
                     f"AfterProcessingTime.pastFirstElementInPane().alignedTo), which fired at {at(w.emit_time)} before "
                     f"the watermark reached the window's end (effective {at(w.effective_watermark)} < {at(w.end)}); "
                     "every window's early panes fire at those instants, and the on-time pane still follows")
    elif w.reason is Reason.EARLY and t.early_firings is not None:
        lines.append(f"an early firing: the first element of this pane arrived at {at(w.emit_time - t.early_firings)} "
                     f"and set a processing-time timer {duration(t.early_firings)} later (--early-firings, Beam's "
                     f"AfterProcessingTime.pastFirstElementInPane()), which fired at {at(w.emit_time)} before the "
                     f"watermark reached the window's end (effective {at(w.effective_watermark)} < {at(w.end)}); "
                     "the next element starts a new pane, and the on-time pane still follows")
    elif w.reason is Reason.EARLY and t.continuous_event_time is not None:
        every, at_b = duration(t.continuous_event_time), at(boundary(result, row))
        fired = ("the input ended (Flink's max watermark fires every timer left)" if w.effective_watermark is None
                 else f"the effective watermark reached {at(w.effective_watermark)} ≥ {at_b} + 1 ms (Flink's "
                      f"watermark is 1 ms behind it)")
        lines.append(f"a periodic firing at the boundary {at_b}, before the window's end {at(w.end)}: "
                     f"ContinuousEventTimeTrigger.of({every}) fires the window at each multiple of {every} of event "
                     f"time after its first element's timestamp once the watermark passes it, and {fired}; it keeps "
                     "the contents (this pane carries every element so far, new ones or not), and the window still "
                     "fires at its end")
    elif w.reason is Reason.EARLY and t.continuous_processing_time is not None:
        every = duration(t.continuous_processing_time)
        lines.append(f"a periodic firing at {at(w.emit_time)} of processing time: "
                     f"ContinuousProcessingTimeTrigger.of({every}) fires the window at each multiple of {every} of "
                     "processing (arrival) time after its first element arrived, up to its maxTimestamp "
                     f"({at(w.end)} − 1 ms), keeping its contents; the watermark never fires it, it only purges it at "
                     "its end + allowed lateness, so an element arriving after its last periodic firing is never "
                     "emitted")
    elif w.reason is Reason.WATERMARK:
        lines.append(f"the effective watermark reached its end: {at(w.watermark)} − delay {duration(t.delay)} "
                     f"= {at(w.effective_watermark)} ≥ {at(w.end)}" + _idle_check(result, w.emit_time))
    elif w.reason is Reason.IDLE_TIMEOUT:
        lines.append(f"its key was silent for {duration(t.idle_timeout)} on the {t.idle_clock.value} clock "
                     f"while the effective watermark was only {at(w.effective_watermark)}")
    elif w.reason is Reason.TOMBSTONE:
        lines.append("an event grew this session or merged it with another, so the session under this span is "
                     "gone: the engine forwarded a null for it (Kafka Streams' tombstone), then the new session's "
                     "result")
    elif w.reason is Reason.UPDATE:
        replaces = "its first result" if w.revision == 1 else "this revision replaces the earlier one"
        if t.emit is Emit.ON_BATCH:  # coalesced: one row for every record of the batch or commit interval
            flush = (f"the commit at {at(w.emit_time)} (one every {duration(t.commit_interval)} of arrival time)"
                     if t.commit_interval else "its batch's commit")
            lines.append(f"{flush} forwarded its result then, once for the events that changed it since the last "
                         f"(emit on-batch): {replaces}, and nothing says it is the last")
        else:
            lines.append(f"{html.escape(w.ids[0])} joined it and the engine forwarded its new result at once (emit "
                         f"on-update): {replaces}, and nothing says it is the last")
    elif w.revision == 1:
        lines.append("the watermark had already passed its end when a late event inside the allowed lateness opened "
                     "it, so its first result is a late one (Beam's LATE pane; Flink fires it on the element)")
    else:
        lines.append("a late event inside the allowed lateness updated it; this revision replaces the earlier one")
    if w.latency_event is not None and w.latency_processing is not None:
        early = ""
        if w.latency_event < 0:
            why = EARLY.get(w.reason.value, f"emitted by {w.reason.value.lower().replace('_', ' ')} before its end")
            early = f" (emitted {duration(-w.latency_event)} before the window ended: {why})"
        lines.append(f"emit latency {duration(w.latency_event)} in event time{early}; "
                     f"{_processing(w.latency_processing)}")
    return "<br>".join(lines)


def _processing(micros: int) -> str:
    """Emit time − window end on the processing clock: negative when arrival times run behind event times."""
    if micros >= 0:
        return f"{duration(micros)} after its end on the processing clock"
    return f"{duration(-micros)} before its end on the processing clock (arrivals run behind event time here)"


def _instant(result: Result) -> Callable[[int | None], str]:
    """How this Result's instants read: UTC date-times for a wall-clock stream, seconds from 0 otherwise."""
    return lambda micros: format_instant(micros, result.absolute)
