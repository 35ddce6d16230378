"""From the engine's step outputs to a Result — shared by the local reference run and the Spark runner, so
both package their decisions with the same code and compare table for table."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from explorer.config import RunConfig, TimeSource, WindowKind
from explorer.core.engine import NONE, BatchRows, Engine, StepOutput, effective_watermark
from explorer.core.result import ASSIGNMENT_COLUMNS, EVENT_COLUMNS, WATERMARK_COLUMNS, WINDOW_COLUMNS, Result, canonical_order
from explorer.core.summary import summarize
from explorer.streams import Stream, assign_batches


def batch_rows(stream: Stream, config: RunConfig) -> Iterator[BatchRows]:
    """The stream cut into the engine's input, one arrival batch at a time."""
    arrays = stream.arrays()
    batches = assign_batches(stream, config.batches)
    ids, keys, partitions = arrays.ids.tolist(), arrays.keys.tolist(), arrays.partitions.tolist()
    for b in range(len(batches.commit_time)):
        lo, hi = int(batches.starts[b]), int(batches.starts[b + 1])
        yield BatchRows(number=b + 1, commit=int(batches.commit_time[b]), rows=np.arange(lo, hi),
                        ids=ids[lo:hi], keys=keys[lo:hi], partitions=partitions[lo:hi],
                        event_time=arrays.event_time[lo:hi], arrival_time=arrays.arrival_time[lo:hi])


def run_reference(stream: Stream, config: RunConfig) -> Result:
    """Run the reference engine over the whole stream in this process."""
    engine = Engine(config, sorted(set(stream.arrays().partitions.tolist())))
    outputs = [engine.step(batch) for batch in batch_rows(stream, config)]
    batches = assign_batches(stream, config.batches)
    outputs.append(engine.finish(len(batches.commit_time), int(batches.commit_time[-1])))
    return assemble(stream, config, outputs, max_open=max(o.open_windows or 0 for o in outputs))


def assemble(stream: Stream, config: RunConfig, outputs: list[StepOutput], max_open: int,
             engine_name: str = "local") -> Result:
    """Package step outputs (in the order they happened) as a Result."""
    n = len(stream.events)
    status = np.empty(n, dtype=object)
    seen_raw = np.full(n, NONE, dtype=np.int64)
    for out in outputs:
        for row, state, raw in out.events:
            status[row] = state
            seen_raw[row] = raw
    delay = config.time.delay
    ev = stream.events
    arrays = stream.arrays()
    processing = config.time.time_source is TimeSource.PROCESSING
    events = pd.DataFrame({
        "id": ev["id"].to_numpy(), "key": ev["key"].to_numpy(), "partition": ev["partition"].to_numpy(),
        "event_time": arrays.arrival_time if processing else arrays.event_time,
        "arrival_time": arrays.arrival_time, "batch": assign_batches(stream, config.batches).number,
        "status": status,
        "watermark": pd.array([_opt(r) for r in seen_raw.tolist()], dtype="Int64"),
        "effective_watermark": pd.array([_opt(effective_watermark(r, delay)) for r in seen_raw.tolist()], dtype="Int64"),
    }, columns=EVENT_COLUMNS)
    emissions = [e for out in outputs for e in out.emissions]
    assignment_rows = [a for out in outputs for a in out.assignments]
    if config.window.kind is WindowKind.SESSION:
        assignment_rows = resolve_sessions(assignment_rows, emissions, ev["id"].tolist())
    assignment_rows.sort(key=lambda a: (a[0], not a[4], a[1], a[2]))
    assignments = pd.DataFrame(assignment_rows, columns=ASSIGNMENT_COLUMNS).astype(
        {"event": np.int64, "start": np.int64, "end": np.int64, "late": bool, "admitted": bool})
    windows = canonical_order(pd.DataFrame(emissions, columns=WINDOW_COLUMNS))
    for column in ("watermark", "effective_watermark", "latency_event"):
        windows[column] = pd.array([_opt(v) for v in windows[column]], dtype="Int64")
    trace = pd.DataFrame([t for out in outputs for t in out.trace], columns=WATERMARK_COLUMNS)
    for column in ("watermark", "effective"):
        trace[column] = pd.array([_opt(v) for v in trace[column]], dtype="Int64")
    admitted = int(assignments["admitted"].sum())
    metrics = summarize(events["status"].value_counts().to_dict(), admitted, len(assignments) - admitted, windows,
                        max_open)
    return Result(events, assignments, windows, trace, metrics, config, stream.name, stream.time_unit, engine_name)


def resolve_sessions(assignments: list[tuple], emissions: list[tuple], ids: list[str]) -> list[tuple]:
    """A session event belongs to the session it ended up in: merges and late growth change a session's
    span after the event joined, and every session is emitted at least once afterwards (by watermark, idle
    timeout, late update or end of stream), so the last emission that lists the event gives its span."""
    row_of = {event_id: row for row, event_id in enumerate(ids)}
    span_of: dict[int, tuple[int, int]] = {}
    for emission in emissions:
        start, end, members = emission[1], emission[2], emission[4]
        for event_id in members:
            span_of[row_of[event_id]] = (start, end)
    return [(row, *span_of[row], late, True) if admitted else (row, start, end, late, admitted)
            for row, start, end, late, admitted in assignments]


def _opt(value) -> int | None:
    if value is None or value is pd.NA or value == NONE or value < NONE // 2:
        return None
    return int(value)
