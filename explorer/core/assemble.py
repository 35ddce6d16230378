"""From the engine's step outputs to a Result — shared by the local reference run and the Spark runner, so
both package their decisions with the same code and compare table for table."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from explorer.config import RunConfig, TimeSource, WindowKind
from explorer.core.emitted import shape_emissions
from explorer.core.panes import shape_panes
from explorer.core.engine import Engine
from explorer.core.records import Assignment, BatchRows, Emission, Record, StepOutput, as_row
from explorer.core.result import ASSIGNMENT_COLUMNS, EVENT_COLUMNS, WATERMARK_COLUMNS, WINDOW_COLUMNS, Result, canonical_order
from explorer.core.summary import REFUSED_STATUSES, summarize
from explorer.core.rules import effective_watermark
from explorer.streams import Stream, batches_for


def batch_rows(stream: Stream, config: RunConfig) -> Iterator[BatchRows]:
    """The stream cut into the engine's input, one arrival batch at a time."""
    arrays = stream.arrays()
    batches = batches_for(stream, config)
    ids, keys, partitions = arrays.ids.tolist(), arrays.keys.tolist(), arrays.partitions.tolist()
    for b in range(len(batches.commit_time)):
        lo, hi = int(batches.starts[b]), int(batches.starts[b + 1])
        yield BatchRows(number=b + 1, commit=int(batches.commit_time[b]), opens=int(batches.opens[b]),
                        scripted=batches.scripted_at(b), rows=np.arange(lo, hi),
                        ids=ids[lo:hi], keys=keys[lo:hi], partitions=partitions[lo:hi],
                        event_time=arrays.event_time[lo:hi], arrival_time=arrays.arrival_time[lo:hi])


def run_reference(stream: Stream, config: RunConfig) -> Result:
    """Run the reference engine over the whole stream in this process."""
    engine = Engine(config, sorted(set(stream.arrays().partitions.tolist())))
    outputs = [engine.step(batch) for batch in batch_rows(stream, config)]
    batches = batches_for(stream, config)
    outputs.append(engine.finish(len(batches.commit_time), int(batches.commit_time[-1])))
    result = assemble(stream, config, outputs, max_open=max(o.open_windows or 0 for o in outputs))
    return shape_emissions(result)


def _table(records: Sequence[Record], columns: list[str], optional: tuple[str, ...] = ()) -> pd.DataFrame:
    frame = pd.DataFrame([as_row(r) for r in records], columns=columns)
    for column in optional:  # None is "no watermark yet": nullable integers
        frame[column] = pd.array(frame[column].tolist(), dtype="Int64")
    return frame


def assemble(stream: Stream, config: RunConfig, outputs: list[StepOutput], max_open: int,
             engine_name: str = "local") -> Result:
    """Package step outputs (in the order they happened) as a Result."""
    n = len(stream.events)
    status = np.empty(n, dtype=object)
    seen: list[int | None] = [None] * n
    for out in outputs:
        for decision in out.events:
            status[decision.row] = decision.status
            seen[decision.row] = decision.watermark
    delay = config.time.watermark_delay
    ev = stream.events
    arrays = stream.arrays()
    processing = config.time.time_source is TimeSource.PROCESSING
    events = pd.DataFrame({
        "id": ev["id"].to_numpy(), "key": ev["key"].to_numpy(), "partition": ev["partition"].to_numpy(),
        "event_time": arrays.arrival_time if processing else arrays.event_time,
        "arrival_time": arrays.arrival_time, "batch": batches_for(stream, config).number,
        "status": status,
        "watermark": pd.array(seen, dtype="Int64"),
        "effective_watermark": pd.array([None if r is None else effective_watermark(r, delay) for r in seen],
                                        dtype="Int64"),
    }, columns=EVENT_COLUMNS)
    emissions = [e for out in outputs for e in out.emissions]
    assignment_rows = [a for out in outputs for a in out.assignments]
    if config.window.kind is WindowKind.SESSION:
        # on-update (and on-batch) runs keep what each session held when it closed apart; a runner whose
        # emissions list whole sessions (Spark's own query in update mode) has none
        settled = [e for out in outputs for e in out.settled]
        listings = settled or emissions
        assignment_rows = resolve_sessions(assignment_rows, listings, ev["id"].tolist())
        emissions = in_arrival_order(emissions, ev["id"].tolist())
    assignment_rows.sort(key=lambda a: (a.row, not a.admitted, a.start, a.end))
    assignments = _table(assignment_rows, ASSIGNMENT_COLUMNS).astype(
        {"event": np.int64, "start": np.int64, "end": np.int64, "late": bool, "admitted": bool})
    windows = shape_panes(canonical_order(_table(emissions, WINDOW_COLUMNS,
                                                 ("watermark", "effective_watermark", "latency_event"))), config)
    trace = _table([t for out in outputs for t in out.trace], WATERMARK_COLUMNS, ("watermark", "effective"))
    admitted = int(assignments["admitted"].sum())
    refused_rows = np.unique(assignments.loc[~assignments["admitted"], "event"].to_numpy())
    partly = int((~events["status"].iloc[refused_rows].isin(REFUSED_STATUSES)).sum())
    counts = {str(status): int(n) for status, n in events["status"].value_counts().items()}
    metrics = summarize(counts, admitted, len(assignments) - admitted, windows,
                        max_open, partly)
    return Result(events, assignments, windows, trace, metrics, config, stream.name, stream.time_unit, engine_name,
                  stream.absolute)


def resolve_sessions(assignments: list[Assignment], emissions: list[Emission], ids: list[str]) -> list[Assignment]:
    """A session event belongs to the session it ended up in: merges and late growth change a session's
    span after the event joined, and every session is emitted at least once afterwards (by watermark, idle
    timeout, late update or end of stream), so the last emission that lists the event gives its span. (Emit
    on-update: the last settled session, since an UPDATE lists only its own record.)"""
    row_of = {event_id: row for row, event_id in enumerate(ids)}
    span_of: dict[int, tuple[int, int]] = {}
    for emission in emissions:
        for event_id in emission.ids:
            span_of[row_of[event_id]] = (emission.start, emission.end)
    return [Assignment(a.row, *span_of[a.row], a.late, True) if a.admitted else a for a in assignments]


def in_arrival_order(emissions: list[Emission], ids: list[str]) -> list[Emission]:
    """A merged session lists its events in arrival order, whichever session absorbed which: the order the
    Result promises, and the one a runner that cannot see the merges (Spark's own query) can give."""
    row_of = {event_id: row for row, event_id in enumerate(ids)}
    return [replace(e, ids=tuple(sorted(e.ids, key=row_of.__getitem__))) for e in emissions]
