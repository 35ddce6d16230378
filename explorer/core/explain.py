"""Why an event ended as it did and what closed a window, read from the decisions the engine recorded.

Every runner records, per (event, window) assignment, whether the event was late for that window and whether
the window took it (``Result.assignments``), and per emission its reason and the watermark at the time
(``Result.windows``). The verdicts below are those records named: the explorer's inspector words them, the
core never formats them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import pandas as pd

from explorer.config import LatenessRule
from explorer.core.result import Reason, Result


class Verdict(str, Enum):
    """What one window did with one event."""

    OPEN = "open"  # the window was open: its end was past the effective watermark
    KEPT_LATE = "kept late"  # late, but within the allowed lateness: the window took it and re-emitted
    WINDOW_CLOSED = "window closed"  # refused: the window's end (plus allowed lateness) had passed
    BEHIND_WATERMARK = "behind the watermark"  # refused: the event's own time was behind the watermark


@dataclass(frozen=True)
class AssignmentWhy:
    start: int
    end: int
    verdict: Verdict


@dataclass(frozen=True)
class EventWhy:
    """An event's times, the watermark it met, its status, and each of its windows' verdict."""

    id: str
    key: str
    event_time: int
    arrival_time: int
    batch: int
    status: str
    watermark: int | None
    effective_watermark: int | None
    windows: tuple[AssignmentWhy, ...]


@dataclass(frozen=True)
class WindowWhy:
    """One emission: the window, its events, when and why it was emitted. A window still open when the input
    ran out (END_OF_STREAM) was never emitted by the engine: it has no batch of its own and no latency."""

    key: str
    start: int
    end: int
    count: int
    ids: tuple[str, ...]
    reason: Reason
    revision: int
    emit_batch: int
    emit_time: int
    watermark: int | None
    effective_watermark: int | None
    latency_event: int | None
    latency_processing: int | None

    @property
    def emitted(self) -> bool:
        return self.reason is not Reason.END_OF_STREAM


def _int(value: Any) -> int | None:  # a table cell: an int, None or <NA>
    return None if value is None or value is pd.NA else int(value)


def why_event(result: Result, row: int) -> EventWhy:
    e = result.events.iloc[row]
    window_rule = result.config.time.lateness_rule is LatenessRule.WINDOW
    a = result.assignments[result.assignments["event"] == row].sort_values(["start", "end"])
    verdicts = []
    for start, end, late, admitted in zip(a["start"].tolist(), a["end"].tolist(), a["late"].tolist(),
                                          a["admitted"].tolist()):
        if admitted:
            verdict = Verdict.KEPT_LATE if late else Verdict.OPEN
        else:
            verdict = Verdict.WINDOW_CLOSED if window_rule else Verdict.BEHIND_WATERMARK
        verdicts.append(AssignmentWhy(int(start), int(end), verdict))
    return EventWhy(str(e["id"]), str(e["key"]), int(e["event_time"]), int(e["arrival_time"]), int(e["batch"]),
                    str(e["status"]), _int(e["watermark"]), _int(e["effective_watermark"]), tuple(verdicts))


def why_window(result: Result, row: int) -> WindowWhy:
    w = result.windows.iloc[row]
    reason = Reason(w["reason"])
    emitted = reason is not Reason.END_OF_STREAM
    return WindowWhy(str(w["key"]), int(w["start"]), int(w["end"]), int(w["count"]), tuple(w["ids"]), reason,
                     int(w["revision"]), int(w["emit_batch"]), int(w["emit_time"]), _int(w["watermark"]),
                     _int(w["effective_watermark"]), _int(w["latency_event"]) if emitted else None,
                     _int(w["latency_processing"]) if emitted else None)
