"""The typed records the reference engine's steps produce, and what it reads: the contract between the
engine, ``assemble`` (which makes a Result of them) and the Spark runner (which stores them between
micro-batches). Times are integer µs; ``None`` means "no watermark yet".

Field order is the column order of the Result's tables (``result.*_COLUMNS``), so a record is a table row.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class EventDecision:
    """What became of one event: its status, and the raw watermark it met."""

    row: int
    status: str
    watermark: int | None


@dataclass(frozen=True, slots=True)
class Assignment:
    """One (event, window) pair. A session's span is only known later (merges, late growth): it is recorded
    as None and resolved from the emissions (``assemble.resolve_sessions``)."""

    row: int
    start: int | None
    end: int | None
    late: bool
    admitted: bool


@dataclass(frozen=True, slots=True)
class Emission:
    """One emission of a window (a row of ``Result.windows``)."""

    key: str
    start: int
    end: int
    count: int
    ids: tuple[str, ...]
    emit_batch: int
    emit_time: int
    watermark: int | None
    effective_watermark: int | None
    reason: str
    revision: int
    latency_event: int | None
    latency_processing: int


@dataclass(frozen=True, slots=True)
class TracePoint:
    """A watermark after a commit, heartbeat, no-data batch or idle check (withIdleness's periodic emit between
    batches, where it moved the merge) (a row of ``Result.watermarks``)."""

    batch: int
    time: int
    scope: str
    watermark: int | None
    effective: int | None
    at: str


RECORDS = {"event": EventDecision, "assignment": Assignment, "window": Emission, "trace": TracePoint,
           "settled": Emission}
_GETTERS = {record: attrgetter(*(f.name for f in fields(record))) for record in RECORDS.values()}
_TUPLE_FIELDS = {kind: [i for i, f in enumerate(fields(record)) if f.name == "ids"] for kind, record in RECORDS.items()}


Record = EventDecision | Assignment | Emission | TracePoint


def as_row(record: Record) -> tuple[Any, ...]:
    """The record's fields in order (``dataclasses.astuple`` would deep-copy each one)."""
    row: tuple[Any, ...] = _GETTERS[type(record)](record)
    return row


def from_row(kind: str, row: list[Any]) -> object:
    """The inverse of :func:`as_row` after a JSON round trip (lists back to tuples where a field is one)."""
    for i in _TUPLE_FIELDS[kind]:
        row[i] = tuple(row[i])
    return RECORDS[kind](*row)


@dataclass
class StepOutput:
    """What one step of the engine decided."""

    events: list[EventDecision] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    emissions: list[Emission] = field(default_factory=list)
    trace: list[TracePoint] = field(default_factory=list)
    open_windows: int | None = None  # windows in state after the batch (for "most windows open")
    # emit on-update: what a session held when it closed, which closing does not emit; not part of the Result,
    # it tells ``assemble`` which session each event ended up in (an UPDATE lists only its own record)
    settled: list[Emission] = field(default_factory=list)


@dataclass
class BatchRows:
    """One arrival batch, in arrival order. ``rows`` are the events' row numbers in the whole stream (none when
    the batch holds only a scripted watermark); ``opens`` is the arrival of its first row; ``scripted`` the
    largest scripted watermark it holds, or None."""

    number: int
    commit: int
    opens: int
    scripted: int | None
    rows: npt.NDArray[np.int64]
    ids: list[str]
    keys: list[str]
    partitions: list[str]
    event_time: npt.NDArray[np.int64]
    arrival_time: npt.NDArray[np.int64]
