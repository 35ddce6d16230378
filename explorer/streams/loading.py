"""Read CSV, JSON lines and Parquet into a validated :class:`Stream`: the table a file holds (read by ``files``)
becomes events, their times read (``times``), put in arrival order, with the input's scripted watermark rows apart.

Every problem becomes an :class:`InputError` that names the file, the column and the row, because the
people who upload a file need to know what to fix in it, not where our code fell over.
Rows are numbered from 1 over the data (for CSV, line = row + 1 because of the header).
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from explorer.errors import InputError
from explorer.streams.files import MAX_FILE_BYTES, expand_paths, read_checked
from explorer.streams.stream import COLUMNS, Stream
from explorer.streams.times import MICROS_PER, TimeFormat, consistent, integer_text, is_blank, read_times, shown

TimeUnits = str | dict[str, str] | None
TIME_COLUMNS = ("event_time", "arrival_time")


class MissingColumns(InputError):
    """Mapped columns the file does not have; ``missing`` names them, so a caller can say where the mapping
    came from."""

    def __init__(self, message: str, missing: list[str]):
        super().__init__(message)
        self.missing = missing

def load_events(
    path: str | Path | Sequence[str | Path],
    time_unit: TimeUnits = None,
    columns: dict[str, str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> Stream:
    """Load and validate an events file, several files, or a directory of them (read in name order).

    ``columns`` maps our names (id, key, event_time, arrival_time, batch, partition, value) to the
    file's own column names, for files that call event time ``ts`` and so on. ``time_unit`` is what numeric
    times count (s, ms, us, ns) for every time column, or per column ({"arrival_time": "ms"}); by default
    each column's format is detected (``streams/times.py``). Several files are one stream: their rows are
    put in arrival order together, so how rows are split into files never matters.
    """
    paths = expand_paths(path)
    if len(paths) > 1:
        frames, formats = [], []
        for part in paths:
            frame = read_checked(part, max_bytes)
            formats.append(stream_from_frame(frame, name=part.name, time_unit=time_unit, columns=columns,
                                             source=str(part)).time_formats)
            frames.append(frame)
        _files_agree(paths, frames, formats, (columns or {}).get("id", "id"))
        return stream_from_frame(pd.concat(frames, ignore_index=True), name=Path(path if isinstance(path, (str, Path))
                                 else paths[0].parent).name, time_unit=time_unit, columns=columns)
    path = paths[0]
    frame = read_checked(path, max_bytes)
    return stream_from_frame(frame, name=path.name, time_unit=time_unit, columns=columns, source=str(path))


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
        if id_column not in frame.columns:
            continue
        for row, value in enumerate(frame[id_column].astype(str).str.strip(), start=1):
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
) -> Stream:
    """Validate a table (from a file, a generator or an upload) and build a Stream in arrival order."""
    where = source or name
    units = time_units(time_unit, columns)
    file_columns = ", ".join(map(str, frame.columns))  # as the file names them, for the messages below
    frame = map_columns(frame, columns, where)
    if len(frame) == 0:
        raise InputError(f"{where}: no events (the file has a header but no rows)")
    if "event_time" not in frame.columns:
        raise InputError(f"{where}: missing column 'event_time' (the file has {file_columns}); "
                         "map yours with --event-time-col")
    n = len(frame)
    is_mark = _watermark_rows(frame, where)
    formats: dict[str, TimeFormat] = {}
    event_time, formats["event_time"] = read_times(frame["event_time"], "event_time", units.get("event_time"), where)
    has_arrival = "arrival_time" in frame.columns
    if has_arrival:
        arrival_time, formats["arrival_time"] = read_times(frame["arrival_time"], "arrival_time",
                                                           units.get("arrival_time"), where)
        consistent(formats, where)
    else:  # the newest event time so far (a watermark row's own time is not an event's)
        seen = pd.Series(np.where(is_mark, np.nan, event_time.astype(float))).cummax().ffill().bfill()
        arrival_time = seen.to_numpy().astype(np.int64)
    ids = _ids(frame, where, is_mark)
    partition = _text_column(frame, "partition", n)
    out = pd.DataFrame({
        "id": ids,
        "key": _text_column(frame, "key", n),
        "event_time": event_time,
        "arrival_time": arrival_time,
        "batch": _batch_column(frame, where),
        "partition": partition,
        "offset": _offset_column(frame, where, is_mark, partition),
        "value": _value_column(frame, where),
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


ROLES = (*COLUMNS, "kind")  # what a column of the file can be to us


def map_columns(frame: pd.DataFrame, columns: dict[str, str] | None, where: str) -> pd.DataFrame:
    """The file's table with one column per role (id, key, event_time…), named by the role: a mapped column
    (``--key-col partition``) takes the role, and the file's own column of that name (its ``key``) is then
    ignored; an unmapped role takes the column of its own name, even one mapped to another role too (keys by
    partition keep the partitions). Two roles mapped to one column are refused, naming both roles."""
    columns = dict(columns or {})
    unknown = [ours for ours in columns if ours not in ROLES]
    if unknown:
        raise InputError(f"{where}: cannot map a column to {unknown[0]!r}; the columns read are {', '.join(ROLES)}")
    missing = [theirs for theirs in columns.values() if theirs not in frame.columns]
    if missing:
        raise MissingColumns(f"{where}: mapped column(s) {', '.join(map(repr, missing))} not in the file "
                             f"(it has {', '.join(map(str, frame.columns))})", missing)
    mapped_to: dict[str, list[str]] = {}
    for role, theirs in columns.items():
        mapped_to.setdefault(str(theirs), []).append(role)
    for theirs, roles in mapped_to.items():
        if len(roles) > 1:
            raise InputError(f"{where}: column {theirs!r} is mapped to both {roles[0]} and {roles[1]}; one mapped "
                             "column takes one role")
    chosen = {role: columns.get(role, role) for role in ROLES if role in columns or role in frame.columns}
    doubled = [str(c) for c in frame.columns[frame.columns.duplicated()] if c in chosen.values()]
    if doubled:
        raise InputError(f"{where}: the file has two columns named {doubled[0]!r}")
    return pd.DataFrame({role: frame[theirs] for role, theirs in chosen.items()}, index=frame.index)


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
    """Row order in which the worker sees the events: by batch, then arrival time. Events arriving at the
    same instant are taken by event time, then id, so the order never depends on how rows were split
    into files; a watermark row comes after the events that arrive with it. Without an arrival_time column
    the file order is the arrival order."""
    keys = []
    if has_arrival:
        keys = [events["id"].to_numpy(dtype=str), events["event_time"].to_numpy(),
                np.zeros(len(events), dtype=bool) if is_mark is None else is_mark, events["arrival_time"].to_numpy()]
    if has_batch:
        keys.append(events["batch"].to_numpy())
    if not keys:
        return np.arange(len(events))
    return np.lexsort(keys)


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


def _ids(frame: pd.DataFrame, where: str, is_mark: np.ndarray) -> np.ndarray:
    """The events' ids (``e1``, ``e2``… by row when the file has none); watermark rows need none."""
    if "id" not in frame.columns:
        return np.array([f"e{i}" for i in range(1, len(frame) + 1)], dtype=object)
    ids = frame["id"].astype(str).str.strip().to_numpy(dtype=object)
    blank = np.array([is_blank(v) for v in frame["id"].to_numpy(dtype=object)]) & ~is_mark
    if blank.any():
        raise InputError(f"{where}: column 'id' row {int(np.flatnonzero(blank)[0]) + 1}: empty id")
    ids[is_mark] = [f"watermark row {row}" for row in np.flatnonzero(is_mark) + 1]
    dup = pd.Series(ids).duplicated(keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)
        first = ids[rows[0]]
        same = [int(r) + 1 for r in rows if ids[r] == first]
        raise InputError(f"{where}: column 'id': duplicate id {first!r} in rows {', '.join(map(str, same[:5]))}"
                         f" ({int(pd.Series(ids).duplicated().sum())} duplicate(s) in all)")
    return ids


def _text_column(frame: pd.DataFrame, column: str, n: int) -> np.ndarray:
    if column not in frame.columns:
        return np.full(n, "", dtype=object)
    values = frame[column].to_numpy(dtype=object)
    return np.array(["" if is_blank(v) else str(v).strip() for v in values], dtype=object)


def _batch_column(frame: pd.DataFrame, where: str) -> np.ndarray:
    if "batch" not in frame.columns:
        return np.zeros(len(frame), dtype=np.int64)
    return _whole_numbers(frame["batch"], "batch", where)


def _offset_column(frame: pd.DataFrame, where: str, is_mark: np.ndarray, partition: np.ndarray) -> np.ndarray:
    """Kafka offsets (-1 without the column): whole, not negative, and one record per (partition, offset),
    since a duplicate means two rows claim the same record (an export joined twice, a column misread)."""
    if "offset" not in frame.columns:
        return np.full(len(frame), -1, dtype=np.int64)
    offsets = _whole_numbers(frame["offset"].where(~is_mark, 0), "offset", where)  # watermark rows have none
    negative = offsets < 0
    if negative.any():
        row = int(np.flatnonzero(negative)[0]) + 1
        raise InputError(f"{where}: column 'offset' row {row}: {shown(frame['offset'].iloc[row - 1])} is negative; a "
                         "Kafka offset counts from 0")
    records = pd.DataFrame({"partition": partition, "offset": offsets})[~is_mark]
    twice = records.duplicated(keep=False).to_numpy()
    if twice.any():
        first = records.iloc[int(np.flatnonzero(twice)[0])]
        same = records.index[(records["partition"] == first["partition"]) & (records["offset"] == first["offset"])] + 1
        raise InputError(f"{where}: column 'offset' rows {', '.join(map(str, same[:5]))}: partition "
                         f"{first['partition'] or '(none)'!s} offset {first['offset']} twice; a Kafka record has one "
                         "offset in its partition")
    return offsets.astype(np.int64)


def _value_column(frame: pd.DataFrame, where: str) -> np.ndarray:
    if "value" not in frame.columns:
        return np.ones(len(frame), dtype=float)
    values = frame["value"].to_numpy(dtype=object)
    numeric = pd.to_numeric(frame["value"], errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(numeric) & ~np.array([is_blank(v) for v in values])
    if bad.any():
        row = int(np.flatnonzero(bad)[0]) + 1
        raise InputError(f"{where}: column 'value' row {row}: {shown(values[row - 1])} is not a number")
    filled: npt.NDArray[np.float64] = np.nan_to_num(numeric, nan=0.0)
    return filled


def _whole_numbers(series: pd.Series, column: str, where: str) -> np.ndarray:
    """A column of whole numbers (batch labels, offsets) as exact int64: read as integers, never through a
    float (labels above 2^53, commit times in ns, stay distinct); 1.5, inf and values beyond int64 are refused."""
    if pd.api.types.is_integer_dtype(series.dtype) and not pd.api.types.is_unsigned_integer_dtype(series.dtype):
        if not series.isna().any():
            return series.to_numpy(dtype=np.int64)
    values = series.to_numpy(dtype=object)
    if not any(isinstance(v, (bool, np.bool_, float, np.floating)) for v in values):
        fast = integer_text(values)
        if fast is not None:
            return fast
    out = np.empty(len(series), dtype=np.int64)
    for row, value in enumerate(values):
        number = _whole(value)
        if number is None:
            raise InputError(f"{where}: column '{column}' row {row + 1}: {shown(value)} is not a whole number")
        if not INT64_MIN <= number <= INT64_MAX:
            raise InputError(f"{where}: column '{column}' row {row + 1}: {shown(value)} is beyond the 64-bit integer "
                             "range (±9,223,372,036,854,775,807)")
        out[row] = number
    return out


INT64_MIN, INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)


def _whole(value: object) -> int | None:
    """One cell as an exact integer, or None if it is not a finite whole number."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return int(value) if np.isfinite(value) and float(value).is_integer() else None
    try:
        number = value if isinstance(value, Decimal) else Decimal(str(value).strip().replace("_", "x"))
    except InvalidOperation:
        return None
    if not number.is_finite() or number != number.to_integral_value():
        return None
    return int(number) if number.adjusted() < 40 else INT64_MAX + 1  # (not a 10^999999999-digit int)
