"""Cut a stream's arrivals into micro-batches, numbered from 1 in arrival order.

A batch also has a commit time on the processing clock: the end of its trigger interval for
``interval:T`` (when a trigger would fire), otherwise the arrival of its last row.

Under the ``scripted`` strategy, the input's watermark rows (``Stream.watermarks``) are rows of the arrival
sequence too (other strategies ignore them). With ``event`` and
``count:N`` batching each is a batch of its own between the events around it, as a test harness advances the
watermark between elements; with ``interval:T`` it joins the batch of its interval, and with ``column`` the
batch its file names, so a batch may hold a watermark and no event. A batch's scripted watermark is the
largest it holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from explorer.config import BatchKind, BatchSpec, RunConfig
from explorer.errors import InputError
from explorer.streams.stream import Stream

NO_SCRIPTED = np.iinfo(np.int64).min  # a batch without a scripted watermark


@dataclass
class Batches:
    number: npt.NDArray[np.int64]  # per event, 1-based batch number (non-decreasing in arrival order)
    commit_time: npt.NDArray[np.int64]  # per batch (index = number − 1), µs on the processing clock
    starts: npt.NDArray[np.int64]  # per batch, index of its first event; starts[-1] == len(events)
    opens: npt.NDArray[np.int64]  # per batch, the arrival of its first row (heartbeats before it tick first)
    scripted: npt.NDArray[np.int64]  # per batch, the largest scripted watermark it holds, or NO_SCRIPTED

    def scripted_at(self, b: int) -> int | None:
        """Batch b's (0-based) scripted watermark, or None."""
        value = int(self.scripted[b])
        return None if value == NO_SCRIPTED else value


def default_batches(stream: Stream) -> BatchSpec:
    """The file's batch column if it has one, else one batch per event."""
    return BatchSpec(BatchKind.COLUMN) if stream.has_batch else BatchSpec(BatchKind.EVENT)


def batches_for(stream: Stream, config: RunConfig) -> Batches:
    """The batches a run of ``config`` sees: with the watermark rows when it follows them."""
    return assign_batches(stream, config.batches, config.time.follows_watermark_rows)


def assign_batches(stream: Stream, spec: BatchSpec | None, scripted: bool = False) -> Batches:
    spec = spec or default_batches(stream)
    return stream.cached(("batches", spec, scripted), lambda: _assign(stream, spec, scripted))


def _assign(stream: Stream, spec: BatchSpec, scripted: bool) -> Batches:
    events = stream.events
    marks = stream.watermarks if scripted else stream.watermarks.iloc[:0]
    n = len(events)
    if spec.kind is BatchKind.EVENT and not len(marks) and n:
        return _one_per_event(events["arrival_time"].to_numpy(dtype=np.int64))
    # every row (events, then watermark rows in their places) in arrival order
    is_mark = np.zeros(n + len(marks), dtype=bool)
    is_mark[marks["after"].to_numpy(dtype=np.int64) + np.arange(len(marks))] = True
    arrival = np.empty(len(is_mark), dtype=np.int64)
    arrival[~is_mark] = events["arrival_time"].to_numpy(dtype=np.int64)
    arrival[is_mark] = marks["arrival_time"].to_numpy(dtype=np.int64)
    event_index = np.cumsum(~is_mark) - 1  # for an event row, its index among the events
    if spec.kind in (BatchKind.EVENT, BatchKind.COUNT):
        group = event_index // (spec.count if spec.kind is BatchKind.COUNT else 1)
        raw = np.where(is_mark, -1 - np.arange(len(is_mark)), group)  # a watermark row: a batch of its own
    elif spec.kind is BatchKind.INTERVAL:
        # by the running latest arrival, so batch numbers and commit times never go back even for a Stream whose
        # arrival times are out of order (a loaded one never is: loading.processing_clock)
        raw = np.floor_divide(np.maximum.accumulate(arrival), spec.interval)
    else:
        if not stream.has_batch:
            raise InputError(f"{stream.name}: --batches column needs a 'batch' column in the file")
        raw = np.empty(len(is_mark), dtype=np.int64)
        raw[~is_mark] = events["batch"].to_numpy(dtype=np.int64)
        raw[is_mark] = marks["batch"].to_numpy(dtype=np.int64)
    change = np.empty(len(raw), dtype=bool)
    change[0] = True
    change[1:] = raw[1:] != raw[:-1]
    row_batch = np.cumsum(change) - 1
    first_rows = np.flatnonzero(change)
    last_rows = np.append(first_rows[1:], len(raw)) - 1
    if spec.kind is BatchKind.INTERVAL:
        commit = (raw[first_rows] + 1) * spec.interval
    else:
        commit = np.maximum.accumulate(arrival[last_rows])
    scripted_marks = np.full(len(first_rows), NO_SCRIPTED, dtype=np.int64)  # per batch: its largest, or none
    np.maximum.at(scripted_marks, row_batch[is_mark], marks["watermark"].to_numpy(dtype=np.int64))
    events_before = np.concatenate([[0], np.cumsum(~is_mark)])  # events before each row
    return Batches(number=(row_batch[~is_mark] + 1).astype(np.int64), commit_time=commit.astype(np.int64),
                   starts=np.append(events_before[first_rows], n).astype(np.int64), opens=arrival[first_rows],
                   scripted=scripted_marks)


def _one_per_event(arrival: npt.NDArray[np.int64]) -> Batches:
    """A batch per event and no watermark rows (the default for a file without a batch column): what
    :func:`_assign` computes, without its masks and running sums over ten million rows, and in one array of its
    own rather than five. This Batches stays cached on the Stream for as long as the Stream lives, so each
    array is 80 MB held at 10M events: the numbers are the starts shifted by one (a view), a batch opens at its
    event's arrival (the stream's own column), a loaded stream's arrivals never go back so the commits are them
    too, and "no scripted watermark" is one value broadcast (read-only, as every cached array is to be read)."""
    n = len(arrival)
    starts = np.arange(n + 1, dtype=np.int64)
    monotone = n < 2 or bool((arrival[1:] >= arrival[:-1]).all())
    return Batches(number=starts[1:], commit_time=arrival if monotone else np.maximum.accumulate(arrival),
                   starts=starts, opens=arrival, scripted=np.broadcast_to(np.int64(NO_SCRIPTED), (n,)))
