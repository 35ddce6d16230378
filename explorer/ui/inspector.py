"""The inspector: a clicked event or window explained. Its words are the core's verdicts (``core/explain.py``) as
a few lines of HTML, with instants as date-times for a wall-clock stream and durations in words; ``Inspector``
is the box they are shown in."""

from __future__ import annotations

import html
from collections.abc import Callable

import ipywidgets as W

from explorer.core.explain import Verdict, why_event, why_window
from explorer.core.result import Reason, Result
from explorer.timeutil import format_instant, human_duration
from explorer.ui.figures import STATUS_LABELS

INSPECTOR_HINT = "<i>Click an event or a window marker to see why.</i>"


class Inspector:
    """The inspector's box (``html``): ``event(row)`` and ``window(row)`` explain a row of ``result()``."""

    def __init__(self, result: Callable[[], Result | None]):
        self._result = result
        self.html = W.HTML(INSPECTOR_HINT, layout=W.Layout(min_height="8em"))

    def forget(self) -> None:
        """The stream changed: the event explained was the old one's."""
        self.html.value = INSPECTOR_HINT

    def event(self, row: int) -> str:
        result = self._result()
        if result is not None:
            self.html.value = explain_event(result, row)
        return str(self.html.value)

    def window(self, row: int) -> str:
        result = self._result()
        if result is not None:
            self.html.value = explain_window(result, row)
        return str(self.html.value)


def explain_event(result: Result, row: int) -> str:
    """Why this event ended as it did, in words."""
    e = why_event(result, row)
    t = result.config.time
    at = _instant(result)
    lines = [f"<b>event {html.escape(e.id)}</b>" + (f" · key {html.escape(e.key)}" if e.key else ""),
             f"event time {at(e.event_time)}, arrived {at(e.arrival_time)} in batch {e.batch}",
             f"watermark when it arrived: {at(e.watermark)} (effective {at(e.effective_watermark)}, delay "
             f"{human_duration(t.delay)})",
             f"status: <b>{STATUS_LABELS[e.status]}</b>"]
    fate = {"side_output": "sent to the side output", "dropped": "dropped"}.get(
        e.status, "dropped from this window without a trace: another of its windows kept it, so no side output "
                  "shows it")
    for w in e.windows:
        span = f"window [{at(w.start)}, {at(w.end)})"
        if w.verdict is Verdict.OPEN:
            lines.append(f"{span}: still open — its end {at(w.end)} > effective watermark {at(e.effective_watermark)}")
        elif w.verdict is Verdict.KEPT_LATE:
            lines.append(f"{span}: late, but allowed lateness {human_duration(t.allowed_lateness)} kept it until "
                         f"effective watermark ≥ end + {human_duration(t.allowed_lateness)}; it re-emitted")
        elif w.verdict is Verdict.WINDOW_CLOSED:
            lines.append(f"{span}: refused — its end {at(w.end)} ≤ effective watermark {at(e.effective_watermark)}: "
                         f"the window had closed; {fate}")
        else:
            lines.append(f"{span}: refused — event time {at(e.event_time)} < effective watermark "
                         f"{at(e.effective_watermark)}; {fate}")
    return "<br>".join(lines)


def explain_window(result: Result, row: int) -> str:
    """What held a window open and what closed it."""
    w = why_window(result, row)
    t = result.config.time
    at = _instant(result)
    more = " …" if w.count > 12 else ""
    lines = [f"<b>window [{at(w.start)}, {at(w.end)})</b>" + (f" · key {html.escape(w.key)}" if w.key else ""),
             f"{w.count} event(s): {html.escape(', '.join(w.ids[:12]))}{more}" if len(w.ids) == w.count else
             f"{w.count} event(s); this emission carries {len(w.ids)}: {html.escape(', '.join(w.ids[:12]))}"
             f"{' …' if len(w.ids) > 12 else ''}"]
    if not w.emitted:
        lines.append(f"<b>never closed</b>: the input ran out after batch {w.emit_batch} with the effective watermark "
                     f"at {at(w.effective_watermark)}, before its end, and no idle timeout fired. An engine that "
                     "flushes at end of input would emit it then; one that does not never emits it. It has no "
                     "emit latency.")
        return "<br>".join(lines)
    lines.append(f"emitted after batch {w.emit_batch} at {at(w.emit_time)}, revision {w.revision}, "
                 f"reason <b>{w.reason.value}</b>")
    if w.reason is Reason.WATERMARK:
        lines.append(f"the effective watermark reached its end: {at(w.watermark)} − delay {human_duration(t.delay)} "
                     f"= {at(w.effective_watermark)} ≥ {at(w.end)}")
    elif w.reason is Reason.IDLE_TIMEOUT:
        lines.append(f"its key was silent for {human_duration(t.idle_timeout)} on the {t.idle_clock.value} clock "
                     f"while the effective watermark was only {at(w.effective_watermark)}")
    elif w.reason is Reason.TOMBSTONE:
        lines.append("an event grew this session or merged it with another, so the session under this span is "
                     "gone: the engine forwarded a null for it (Kafka Streams' tombstone), then the new session's "
                     "result")
    elif w.reason is Reason.UPDATE:
        lines.append(f"{html.escape(w.ids[0])} joined it and the engine forwarded its new result at once (emit "
                     "on-update): this revision replaces the earlier one, and nothing says it is the last")
    else:
        lines.append("a late event inside the allowed lateness updated it; this revision replaces the earlier one")
    if w.latency_event is not None and w.latency_processing is not None:
        lines.append(f"emit latency {human_duration(w.latency_event)} in event time; {_processing(w.latency_processing)}")
    return "<br>".join(lines)


def _processing(micros: int) -> str:
    """Emit time − window end on the processing clock: negative when arrival times run behind event times."""
    if micros >= 0:
        return f"{human_duration(micros)} after its end on the processing clock"
    return f"{human_duration(-micros)} before its end on the processing clock (arrivals run behind event time here)"


def _instant(result: Result) -> Callable[[int | None], str]:
    """How this Result's instants read: UTC date-times for a wall-clock stream, seconds from 0 otherwise."""
    return lambda micros: format_instant(micros, result.absolute)
