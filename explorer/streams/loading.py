"""Read CSV, JSON lines and Parquet into a validated :class:`Stream`: the table a file holds (read by ``files``)
becomes events, their times read (``times``), put in arrival order, with the input's scripted watermark rows apart.

Every problem becomes an :class:`InputError` that names the file, the column and the row, because the
people who upload a file need to know what to fix in it, not where our code fell over.
Rows are numbered from 1 over the data (for CSV, line = row + 1 because of the header).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from explorer.errors import InputError
from explorer.streams.columns import batch_column, ids_column, offset_column, text_column, value_column
from explorer.streams.files import MAX_FILE_BYTES, expand_paths, read_checked
from explorer.streams.mapping import MissingColumns, column_values, field_names, map_columns
from explorer.streams.stream import Stream
from explorer.streams.times import MICROS_PER, TimeFormat, consistent, is_blank, read_times, shown
from explorer.streams.zones import time_zone

TimeUnits = str | dict[str, str] | None
TIME_COLUMNS = ("event_time", "arrival_time")
__all__ = ["MissingColumns", "TIME_COLUMNS", "load_events", "parse_time_units", "read_in_batches",
           "stream_from_frame"]


def load_events(
    path: str | Path | Sequence[str | Path],
    time_unit: TimeUnits = None,
    columns: dict[str, str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    timezone: str | None = None,
) -> Stream:
    """Load and validate an events file, several files, or a directory of them (read in name order).

    ``columns`` maps our names (id, key, event_time, arrival_time, batch, partition, value) to the
    file's own column names, for files that call event time ``ts`` and so on. ``time_unit`` is what numeric
    times count (s, ms, us, ns) for every time column, or per column ({"arrival_time": "ms"}); by default
    each column's format is detected (``streams/times.py``). ``timezone`` (an IANA name) is where naive
    date-times were written; by default they are read as UTC (``streams/zones.py``). Several files are one
    stream: their rows are put in arrival order together, as if the files were one in name order.
    """
    paths = expand_paths(path)
    if len(paths) > 1:
        frames, formats = [], []
        for part in paths:
            frame = read_checked(part, max_bytes)
            formats.append(stream_from_frame(frame, name=part.name, time_unit=time_unit, columns=columns,
                                             source=str(part), timezone=timezone).time_formats)
            frames.append(frame)
        _files_agree(paths, frames, formats, (columns or {}).get("id", "id"))
        return stream_from_frame(pd.concat(frames, ignore_index=True), name=Path(path if isinstance(path, (str, Path))
                                 else paths[0].parent).name, time_unit=time_unit, columns=columns,
                                 timezone=timezone)
    path = paths[0]
    frame = read_checked(path, max_bytes)
    return stream_from_frame(frame, name=path.name, time_unit=time_unit, columns=columns, source=str(path),
                             timezone=timezone)


def _files_agree(paths: list[Path], frames: list[pd.DataFrame], formats: list[dict[str, TimeFormat]],
                 id_column: str) -> None:
    """What only shows once several files are one stream (an id in two files, times written two ways), blamed
    on the files and their own rows rather than on a row of the joined table."""
    for path, mine in zip(paths[1:], formats[1:]):
        for column, form in mine.items():
            first = formats[0].get(column)
            if first is not None and (first.kind, first.unit, first.naive) != (form.kind, form.unit, form.naive):
                raise InputError(f"{path}: column '{column}' holds {form.describe()} but {paths[0].name} holds "
                                 f"{first.describe()}; the files of one stream must write times the same way")
    seen: dict[str, tuple[Path, int]] = {}
    for path, frame in zip(paths, frames):
        ids = column_values(frame, id_column, str(path))
        if ids is None:
            continue
        for row, value in enumerate(ids.astype(str).str.strip(), start=1):
            if value in seen:
                other, other_row = seen[value]
                raise InputError(f"{path}: column 'id' row {row}: duplicate id {value!r}, also in {other.name} row "
                                 f"{other_row}; ids must be unique across the files of one stream")
            seen[value] = (path, row)


def stream_from_frame(
    frame: pd.DataFrame,
    name: str = "stream",
    time_unit: TimeUnits = None,
    columns: dict[str, str] | None = None,
    source: str | None = None,
    timezone: str | None = None,
) -> Stream:
    """Validate a table (from a file, a generator or an upload) and build a Stream in arrival order; naive
    date-times are read in ``timezone`` (an IANA name), or as UTC when it is None."""
    where = source or name
    units = time_units(time_unit, columns)
    zone = time_zone(timezone) if timezone is not None else None
    file_columns = field_names(frame)  # as the file names them, for the messages below
    frame = map_columns(frame, columns, where)
    if len(frame) == 0:
        raise InputError(f"{where}: no events (the file has a header but no rows)")
    if "event_time" not in frame.columns:
        raise InputError(f"{where}: missing column 'event_time' (the file has {file_columns}); "
                         "map yours with --event-time-col")
    n = len(frame)
    is_mark = _watermark_rows(frame, where)
    formats: dict[str, TimeFormat] = {}
    event_time, formats["event_time"] = read_times(frame["event_time"], "event_time", units.get("event_time"), where,
                                                   zone)
    has_arrival = "arrival_time" in frame.columns
    if has_arrival:
        arrival_time, formats["arrival_time"] = read_times(frame["arrival_time"], "arrival_time",
                                                           units.get("arrival_time"), where, zone)
        consistent(formats, where)
    else:  # the newest event time so far (a watermark row's own time is not an event's)
        seen = pd.Series(np.where(is_mark, np.nan, event_time.astype(float))).cummax().ffill().bfill()
        arrival_time = seen.to_numpy().astype(np.int64)
    ids = ids_column(frame, where, is_mark)
    partition = text_column(frame, "partition", n)
    out = pd.DataFrame({
        "id": ids,
        "key": text_column(frame, "key", n),
        "event_time": event_time,
        "arrival_time": arrival_time,
        "batch": batch_column(frame, where),
        "partition": partition,
        "offset": offset_column(frame, where, is_mark, partition),
        "value": value_column(frame, where),
    })
    has_batch = "batch" in frame.columns
    out, is_mark, raised = _as_the_worker_reads(out, has_arrival, has_batch, is_mark)
    marks = scripted_watermarks(out, is_mark)
    out = out[~is_mark].reset_index(drop=True)
    event_format = formats["event_time"]
    # outputs count the file's unit, but never finer than the µs every time is held in (an ns file's are µs)
    unit = event_format.unit if event_format.kind in ("epoch", "number") else "s"
    return Stream(out, name=name, time_unit="us" if unit == "ns" else unit,
                  time_formats=formats, has_keys="key" in frame.columns, has_ids="id" in frame.columns,
                  has_arrival=has_arrival,
                  has_batch=has_batch, has_partition="partition" in frame.columns,
                  has_offset="offset" in frame.columns, source=source,
                  source_columns={ours: str(theirs) for ours, theirs in (columns or {}).items()},
                  arrivals_raised=raised, watermarks=marks)



def _watermark_rows(frame: pd.DataFrame, where: str) -> np.ndarray:
    """Which rows are scripted watermarks: ``kind`` says ``watermark`` (or ``event``, or nothing)."""
    if "kind" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    kinds = np.array(["" if is_blank(v) else str(v).strip().lower() for v in frame["kind"].to_numpy(dtype=object)])
    bad = ~np.isin(kinds, ["", "event", "watermark"])
    if bad.any():
        row = int(np.flatnonzero(bad)[0]) + 1
        raise InputError(f"{where}: column 'kind' row {row}: {shown(frame['kind'].iloc[row - 1])} is neither 'event' nor "
                         "'watermark'")
    is_mark: npt.NDArray[np.bool_] = kinds == "watermark"
    if is_mark.all():
        raise InputError(f"{where}: every row is a watermark (kind=watermark); there are no events")
    return is_mark


def scripted_watermarks(rows: pd.DataFrame, is_mark: np.ndarray) -> pd.DataFrame:
    """The watermark rows of rows in arrival order: the watermark (their event_time), their arrival and file
    batch, and ``after``, how many events arrived before each."""
    return pd.DataFrame({
        "watermark": rows["event_time"].to_numpy(dtype=np.int64)[is_mark],
        "arrival_time": rows["arrival_time"].to_numpy(dtype=np.int64)[is_mark],
        "batch": rows["batch"].to_numpy(dtype=np.int64)[is_mark],
        "after": np.cumsum(~is_mark)[is_mark].astype(np.int64),
    })


def _as_the_worker_reads(rows: pd.DataFrame, has_arrival: bool, has_batch: bool,
                     is_mark: np.ndarray) -> tuple[pd.DataFrame, np.ndarray, int]:
    """Rows (events and watermark rows) put in the order the worker sees them, with the processing clock a
    batch column implies: the rows, which of them are watermark rows, and how many arrivals were raised."""
    order = arrival_order(rows, has_arrival, has_batch, is_mark)
    rows, is_mark = rows.iloc[order].reset_index(drop=True), is_mark[order]
    raised = 0
    if has_batch and has_arrival:
        rows["arrival_time"], raised = processing_clock(rows["arrival_time"].to_numpy(dtype=np.int64))
    return rows, is_mark, raised


def processing_clock(arrival: np.ndarray) -> tuple[np.ndarray, int]:
    """Arrival times in batch order made monotone: an event the file puts in a later batch than an event that
    arrived after it cannot be processed before that batch was, so it is taken to arrive with the latest arrival
    before it. Every clock the engines keep (commits, Bytewax's event clock, idle timeouts) then only moves
    forward, whichever batching is chosen. Returns the clock and how many arrivals it raised."""
    clock = np.maximum.accumulate(arrival)
    return clock, int((clock != arrival).sum())


def arrival_order(events: pd.DataFrame, has_arrival: bool, has_batch: bool,
                  is_mark: np.ndarray | None = None) -> np.ndarray:
    """Row order in which the worker sees the events: by batch, then arrival time. Without an arrival_time
    column the file order is the arrival order.

    At one arrival instant (and batch), a watermark row stays where the file puts it among the events of that
    instant: the events written before it come before it, those after it after (issue 34: a@1 at 0, watermark 10
    at 5, x@3 at 5 makes x late, as a test harness replaying the file row by row does). Events between the same
    watermark rows of an instant are taken by event time, then id, so their order never depends on how rows were
    split into files or shuffled within them."""
    keys = []
    if has_arrival:
        mark = np.zeros(len(events), dtype=bool) if is_mark is None else np.asarray(is_mark, dtype=bool)
        instant = [events["arrival_time"].to_numpy()] + ([events["batch"].to_numpy()] if has_batch else [])
        keys = [events["id"].to_numpy(dtype=str), events["event_time"].to_numpy(), mark,
                _marks_before(mark, instant), *instant]
    elif has_batch:
        keys = [events["batch"].to_numpy()]
    if not keys:
        return np.arange(len(events))
    return np.lexsort(keys)


def _marks_before(mark: np.ndarray, instant: list[np.ndarray]) -> np.ndarray:
    """For each row, how many watermark rows the file holds before it at the same instant (``instant``: lexsort
    keys, the last one primary)."""
    order = np.lexsort(instant)  # stable: file order within an instant
    sorted_keys = [key[order] for key in instant]
    same = np.ones(len(order), dtype=bool)  # the row is at the instant of the row before it
    same[:1] = False
    for key in sorted_keys:
        same[1:] &= key[1:] == key[:-1]
    starts = ~same  # True where a new instant begins (row 0 included)
    seen = np.cumsum(mark[order]) - mark[order]  # marks strictly before, in the whole sorted order
    base = np.maximum.accumulate(np.where(starts, seen, 0))  # …up to the instant's first row
    before = np.empty(len(order), dtype=np.int64)
    before[order] = seen - base
    return before


def read_in_batches(stream: Stream, batch: np.ndarray) -> Stream:
    """The same events read in the given batches (one per event, in the stream's order), put in arrival order
    again with the processing clock a batch column implies, exactly as if the file had held the column. A
    Spark job's micro-batches, found from the Kafka offsets its progress log reports, become batches so."""
    if len(stream.watermarks):
        raise InputError(f"{stream.source or stream.name}: scripted watermark rows cannot be placed in batches "
                         "after loading; give the file a batch column")
    events = stream.events.assign(batch=np.asarray(batch, dtype=np.int64))
    events, _, raised = _as_the_worker_reads(events, stream.has_arrival, True, np.zeros(len(events), dtype=bool))
    return replace(stream, events=events, has_batch=True, arrivals_raised=raised, cache={})


def time_units(given: TimeUnits, columns: dict[str, str] | None = None) -> dict[str, str]:
    """What numeric times count, per time column: one unit for all, or per column by our name or the file's
    (``arrival_time=ms`` or ``ingest_ts=ms``); a column not named is detected."""
    if given is None or given == "auto":
        return {}
    if isinstance(given, str):
        given = {column: given for column in TIME_COLUMNS}
    theirs = {v: k for k, v in (columns or {}).items()}
    units = {}
    for column, unit in given.items():
        ours = theirs.get(column, column)
        if ours not in TIME_COLUMNS:
            raise InputError(f"time unit for {column!r}: not a time column (use event_time or arrival_time, or the "
                             "file's name for them)")
        if unit not in MICROS_PER:
            raise InputError(f"unknown time unit {unit!r} for {column}; use one of {', '.join(MICROS_PER)}")
        units[ours] = unit
    return units


def parse_time_units(text: str) -> TimeUnits:
    """``--time-unit``: ``auto``, one unit for every time column, or ``COLUMN=UNIT[,COLUMN=UNIT]``."""
    text = text.strip()
    if "=" not in text:
        return None if text == "auto" else text
    pairs = {}
    for item in text.split(","):
        column, _, unit = item.partition("=")
        pairs[column.strip()] = unit.strip()
    return pairs


