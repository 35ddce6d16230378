"""Cut a stream's arrivals into micro-batches, numbered from 1 in arrival order.

A batch also has a commit time on the processing clock: the end of its trigger interval for
``interval:T`` (when a trigger would fire), otherwise the arrival of its last event.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.config import BatchKind, BatchSpec
from explorer.errors import InputError
from explorer.streams.stream import Stream


@dataclass
class Batches:
    number: np.ndarray  # per event, 1-based batch number (non-decreasing in arrival order)
    commit_time: np.ndarray  # per batch (index = number − 1), µs on the processing clock
    starts: np.ndarray  # per batch, index of its first event; starts[-1] == len(events)


def default_batches(stream: Stream) -> BatchSpec:
    """The file's batch column if it has one, else one batch per event."""
    return BatchSpec(BatchKind.COLUMN) if stream.has_batch else BatchSpec(BatchKind.EVENT)


def assign_batches(stream: Stream, spec: BatchSpec | None) -> Batches:
    spec = spec or default_batches(stream)
    return stream.cached(("batches", spec), lambda: _assign(stream, spec))


def _assign(stream: Stream, spec: BatchSpec) -> Batches:
    arrival = stream.events["arrival_time"].to_numpy(dtype=np.int64)
    n = len(arrival)
    if spec.kind is BatchKind.EVENT:
        raw = np.arange(n, dtype=np.int64)
    elif spec.kind is BatchKind.COUNT:
        raw = np.arange(n, dtype=np.int64) // spec.count
    elif spec.kind is BatchKind.INTERVAL:
        # by the running latest arrival, so batch numbers and commit times never go back even for a Stream whose
        # arrival times are out of order (a loaded one never is: loading.processing_clock)
        raw = np.floor_divide(np.maximum.accumulate(arrival), spec.interval)
    else:
        if not stream.has_batch:
            raise InputError(f"{stream.name}: --batches column needs a 'batch' column in the file")
        raw = stream.events["batch"].to_numpy(dtype=np.int64)
    change = np.empty(n, dtype=bool)
    change[0] = True
    change[1:] = raw[1:] != raw[:-1]
    number = np.cumsum(change).astype(np.int64)
    starts = np.append(np.flatnonzero(change), n)
    last_arrival = arrival[starts[1:] - 1]
    if spec.kind is BatchKind.INTERVAL:
        commit = (raw[starts[:-1]] + 1) * spec.interval
    else:
        commit = np.maximum.accumulate(last_arrival)
    return Batches(number=number, commit_time=commit.astype(np.int64), starts=starts)
