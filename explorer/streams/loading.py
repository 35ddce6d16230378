"""Read CSV, JSON lines and Parquet into a validated :class:`Stream`: the table a file holds (read by ``files``)
becomes events, their times read (``times``), put in arrival order, with the input's scripted watermark rows apart.

Every problem becomes an :class:`InputError` that names the file, the column and the row, because the
people who upload a file need to know what to fix in it, not where our code fell over.
Rows are numbered from 1 over the data (for CSV, line = row + 1 because of the header).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from explorer.errors import InputError
from explorer.streams import columnar
from explorer.streams.columnar import used_codes
from explorer.streams.columns import batch_column, constant, ids_column, offset_column, text_codes, value_column
from explorer.streams.files import MAX_FILE_BYTES, expand_paths, read_checked
from explorer.streams.mapping import MissingColumns, column_values, field_names, map_columns
from explorer.streams.stream import Stream, no_watermarks
from explorer.streams.times import MICROS_PER, TimeFormat, consistent, read_times, shown
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
        joined = [pd.concat(frames, ignore_index=True)]
        frames.clear()
        return _stream(joined, name=Path(path if isinstance(path, (str, Path)) else paths[0].parent).name,
                       time_unit=time_unit, columns=columns, timezone=timezone)
    path = paths[0]
    return _stream([read_checked(path, max_bytes)], name=path.name, time_unit=time_unit, columns=columns,
                   source=str(path), timezone=timezone)


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
    parts = [(part, columnar.objects(ids).astype(str).str.strip().to_numpy(dtype=object))
             for part, frame in enumerate(frames) if (ids := column_values(frame, id_column, str(paths[part])))
             is not None]
    if not parts:
        return
    every = pd.Series(np.concatenate([ids for _, ids in parts]))
    again = every.duplicated().to_numpy()  # (all the files' ids at once: a dict of ten million would take minutes)
    if again.any():
        starts = np.cumsum([0] + [len(ids) for _, ids in parts])

        def place(k: int) -> tuple[int, int]:
            """The file (its index in ``paths``) and the row (from 1) of the k-th id of all the files."""
            i = int(np.searchsorted(starts, k, side="right")) - 1
            return parts[i][0], k - int(starts[i]) + 1

        at = int(np.flatnonzero(again)[0])  # the first id seen before, and where it was first seen
        (part, row), (other, other_row) = place(at), place(int(np.flatnonzero((every == every.iat[at]).to_numpy())[0]))
        raise InputError(f"{paths[part]}: column 'id' row {row}: duplicate id {every.iat[at]!r}, also in "
                         f"{paths[other].name} row {other_row}; ids must be unique across the files of one stream")


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
    return _stream([frame], name, time_unit, columns, source, timezone)


def _stream(held: list[pd.DataFrame], name: str, time_unit: TimeUnits = None, columns: dict[str, str] | None = None,
            source: str | None = None, timezone: str | None = None) -> Stream:
    """:func:`stream_from_frame` of the table ``held`` holds, taken out of it: a file's table is let go once its
    columns are read, before the events are put in order (ten million rows of it are a gigabyte)."""
    frame = held.pop()
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
    is_mark = _watermark_rows(frame, where)
    formats: dict[str, TimeFormat] = {}
    event_time, formats["event_time"] = read_times(frame["event_time"], "event_time", units.get("event_time"), where,
                                                   zone)
    has_arrival = "arrival_time" in frame.columns
    if has_arrival:
        arrival_time, formats["arrival_time"] = read_times(frame["arrival_time"], "arrival_time",
                                                           units.get("arrival_time"), where, zone)
        consistent(formats, where)
    else:
        arrival_time = _newest_so_far(event_time, is_mark)
    has = {role: role in frame.columns for role in ("id", "key", "batch", "partition", "offset")}
    key_codes, key_names = text_codes(frame, "key")
    partition_codes, partition_names = text_codes(frame, "partition")
    rows: dict[str, Any] = {
        "id": ids_column(frame, where, is_mark), "event_time": event_time, "batch": batch_column(frame, where),
        "offset": offset_column(frame, where, is_mark, partition_names[partition_codes] if has["offset"] else None),
        "value": value_column(frame, where), "key": key_codes, "partition": partition_codes}
    del frame, event_time  # (each is in rows now)
    order, in_place = _arrival_order(pd.DataFrame({"id": rows["id"], "event_time": rows["event_time"],
                                                   "arrival_time": arrival_time, "batch": rows["batch"]}, copy=False),
                                     has_arrival, has["batch"], is_mark)
    in_place = in_place and not is_mark.any()
    moved = _moved(order) if not in_place and not is_mark.any() else None
    if not in_place:
        is_mark, arrival_time = is_mark[order], _reordered(arrival_time, order, moved)
    raised = 0
    if has["batch"] and has_arrival:
        arrival_time, raised = processing_clock(arrival_time)
    marks = no_watermarks() if not is_mark.any() else scripted_watermarks(pd.DataFrame(
        {"event_time": rows["event_time"][order], "arrival_time": arrival_time, "batch": rows["batch"][order]}),
        is_mark)
    if not in_place:  # each column put in arrival order in turn, the file's order let go as it goes
        keep = order[~is_mark]
        for column in rows:
            rows[column] = _reordered(rows[column], keep, moved)
        arrival_time = arrival_time[~is_mark]
    # the codes the kernel reads, kept from here rather than found by hashing every row again
    dropped = bool(is_mark.any())  # (watermark rows: their keys may be no event's)
    cache = {("codes", "key"): used_codes(rows["key"], key_names) if dropped else (rows["key"], key_names),
             ("codes", "partition"): used_codes(rows["partition"], partition_names) if dropped else
             (rows["partition"], partition_names)}
    out = pd.DataFrame({
        "id": rows.pop("id"), "key": _decoded(key_names, rows.pop("key")), "event_time": rows.pop("event_time"),
        "arrival_time": arrival_time, "batch": rows.pop("batch"),
        "partition": _decoded(partition_names, rows.pop("partition")),
        "offset": rows.pop("offset"), "value": rows.pop("value"),
    }, copy=False)  # (each column its own block: pandas would copy them into one per type)
    event_format = formats["event_time"]
    # outputs count the file's unit, but never finer than the µs every time is held in (an ns file's are µs)
    unit = event_format.unit if event_format.kind in ("epoch", "number") else "s"
    return Stream(out, name=name, time_unit="us" if unit == "ns" else unit,
                  time_formats=formats, has_keys=has["key"], has_ids=has["id"], has_arrival=has_arrival,
                  has_batch=has["batch"], has_partition=has["partition"], has_offset=has["offset"], source=source,
                  source_columns={ours: str(theirs) for ours, theirs in (columns or {}).items()},
                  arrivals_raised=raised, watermarks=marks, cache=cache)


def _moved(order: np.ndarray) -> np.ndarray | None:
    """The rows an order moves, when they are few (a file in arrival order but for ties at an instant: 2,700 of
    10M rows in a Kafka export at ms resolution), else None."""
    moved = np.flatnonzero(order != np.arange(len(order)))
    return moved if len(moved) * 16 < len(order) else None


def _decoded(names: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``names[codes]``; a column of one name (the file has none, or one value in it) that name on every row."""
    return constant(names[0], len(codes), object) if len(names) == 1 else names[codes]


def _reordered(values: Any, order: np.ndarray, moved: np.ndarray | None) -> Any:
    """``values[order]``; an array of its own (not a view of the caller's table) that few rows of move is changed
    in place, only at those rows, rather than copied whole (a column is 80 MB at 10M events); a constant stays
    one."""
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.strides == (0,):  # (columns.constant)
        return np.broadcast_to(values[:1], (len(order),))
    if moved is None or not isinstance(values, np.ndarray) or not (values.flags.owndata and values.flags.writeable):
        return values[order]
    values[moved] = values[order[moved]]
    return values


def _newest_so_far(event_time: np.ndarray, is_mark: np.ndarray) -> np.ndarray:
    """Arrival without an arrival_time column: the newest event time so far (a watermark row's own time is not
    an event's; rows before the first event take its time), in integers, so no µs is lost to a float."""
    events = np.where(is_mark, np.iinfo(np.int64).min, event_time)
    newest: np.ndarray = np.maximum.accumulate(events)
    return np.where(np.arange(len(newest)) < int(np.argmax(~is_mark)), event_time[np.argmax(~is_mark)], newest)



def _watermark_rows(frame: pd.DataFrame, where: str) -> np.ndarray:
    """Which rows are scripted watermarks: ``kind`` says ``watermark`` (or ``event``, or nothing)."""
    if "kind" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    codes, names = text_codes(frame, "kind")
    names = np.array([name.lower() for name in names], dtype=object)
    kinds = names[codes]
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
                     is_mark: np.ndarray) -> tuple[pd.DataFrame, np.ndarray, int, np.ndarray]:
    """Rows (events and watermark rows) put in the order the worker sees them, with the processing clock a
    batch column implies: the rows, which of them are watermark rows, how many arrivals were raised, and the
    order taken (a file already in arrival order is not copied)."""
    order, in_place = _arrival_order(rows, has_arrival, has_batch, is_mark)
    if not in_place:
        rows, is_mark = rows.iloc[order].reset_index(drop=True), is_mark[order]
    raised = 0
    if has_batch and has_arrival:
        rows["arrival_time"], raised = processing_clock(rows["arrival_time"].to_numpy(dtype=np.int64))
    return rows, is_mark, raised, order


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
    return _arrival_order(events, has_arrival, has_batch, is_mark)[0]


def _arrival_order(events: pd.DataFrame, has_arrival: bool, has_batch: bool,
                   is_mark: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """:func:`arrival_order`, and whether it is the file's own order. Only rows that share their instant with
    another need the later keys (and those are unique: ids are), so the rows are sorted by instant alone, not at
    all when the file is in order already, and each run of ties then by the whole key (ids as text only there)."""
    n = len(events)
    if not has_arrival:
        batch = events["batch"].to_numpy()
        if not has_batch or _ascending([batch]):
            return np.arange(n), True
        return np.argsort(batch, kind="stable"), False
    mark = np.zeros(n, dtype=bool) if is_mark is None else np.asarray(is_mark, dtype=bool)
    instant = [events["arrival_time"].to_numpy()] + ([events["batch"].to_numpy()] if has_batch else [])
    ordered = _ascending(instant)
    order = np.arange(n) if ordered else np.lexsort(instant) if has_batch else np.argsort(instant[0])
    same = np.ones(n, dtype=bool)  # the row (in instant order) is at the instant of the row before it
    same[:1] = False
    for key in instant:
        ranked = key if ordered else key[order]
        same[1:] &= ranked[1:] == ranked[:-1]
    tied = same | np.append(same[1:], False)  # every row of a run of two or more
    if not tied.any():
        return order, ordered
    rows = np.sort(order[tied])  # file order, which _marks_before counts in
    held = [key[rows] for key in instant]
    keys = [events["event_time"].to_numpy()[rows], mark[rows], _marks_before(mark[rows], held), *held]
    within = np.lexsort(keys)
    alike = np.ones(len(within), dtype=bool)  # …and so on every key but the id, which only these need
    alike[:1] = False
    for key in keys:
        ranked = key[within]
        alike[1:] &= ranked[1:] == ranked[:-1]
    alike |= np.append(alike[1:], False)
    if alike.any():
        twins = within[alike]
        within[alike] = twins[np.lexsort([events["id"].take(rows[twins]).to_numpy(dtype=str),
                                          *(key[twins] for key in keys)])]
    order[tied] = rows[within]  # (the runs keep their places: instants first in every sort)
    return order, ordered and bool((order[tied] == np.flatnonzero(tied)).all())


def _ascending(keys: list[np.ndarray]) -> bool:
    """Whether the rows are sorted by ``keys`` already (lexsort's keys: the last one primary)."""
    ahead = np.zeros(max(len(keys[0]) - 1, 0), dtype=bool)  # row i + 1 is past row i
    level = np.ones_like(ahead)  # row i + 1 is level with row i on the keys so far
    for key in reversed(keys):
        ahead |= level & (key[1:] > key[:-1])
        level &= key[1:] == key[:-1]
    return bool((ahead | level).all())


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
    events, _, raised, _ = _as_the_worker_reads(events, stream.has_arrival, True, np.zeros(len(events), dtype=bool))
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


