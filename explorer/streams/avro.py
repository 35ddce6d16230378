"""Avro object container files (``.avro``), as Kafka Connect's S3 and HDFS sinks and Debezium's Avro converter
write them, read with fastavro into the same table a Parquet file gives: nested records flattened to dotted
columns (``after.ts``), and timestamp logical types as typed instants, exactly.

An optional record (``["null", record]``, as Debezium's ``before`` and ``after``) stays a column of objects,
walked by the dotted path as JSON is (``mapping``), so a row where it is null is named as such.

A module of its own because Avro's types need a translation of their own: fastavro turns timestamp-millis and
timestamp-micros into Python datetimes (exact to the µs, which is all they hold) and leaves timestamp-nanos a
bare integer; here each becomes a datetime64 column in its own unit, with or without UTC (the local-timestamp-*
types are naive, so ``--timezone`` applies to them as to naive ISO text), which ``times`` then reads by their
integer ticks like any typed column.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import IO, Any

import numpy as np
import pandas as pd

from explorer.errors import InputError

# logical type → (numpy unit, instants in UTC (else naive local wall-clock times))
TIMESTAMPS = {"timestamp-millis": ("ms", True), "timestamp-micros": ("us", True), "timestamp-nanos": ("ns", True),
              "local-timestamp-millis": ("ms", False), "local-timestamp-micros": ("us", False),
              "local-timestamp-nanos": ("ns", False)}
_EPOCH = {True: datetime(1970, 1, 1, tzinfo=timezone.utc), False: datetime(1970, 1, 1)}
_TICK = {"ms": timedelta(milliseconds=1), "us": timedelta(microseconds=1)}
NAT = np.iinfo(np.int64).min  # datetime64's NaT: a null in the file, refused by ``times`` as an empty time


def avro_rows(source: IO[bytes], where: str) -> int:
    """The number of records the file's blocks declare (blocks are decompressed, records not decoded)."""
    from fastavro import block_reader

    try:
        return sum(block.num_records for block in block_reader(source))
    except Exception as exc:  # not Avro, a cut-off block, a codec not installed
        raise InputError(f"{where}: cannot be read as Avro ({exc.__class__.__name__}: {_one_line(exc)})") from None


def read_avro(source: IO[bytes], where: str) -> pd.DataFrame:
    """The file's records as a table: nested records as dotted columns, timestamps as typed columns."""
    from fastavro import reader

    try:
        records = reader(source)
        schema = json.loads(records.metadata["avro.schema"])
        leaves = _leaves(schema, (), where)
        columns: dict[str, list[Any]] = {".".join(path): [] for path, _ in leaves}
        for record in records:
            for path, _ in leaves:
                columns[".".join(path)].append(_get(record, path))
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"{where}: cannot be read as Avro ({exc.__class__.__name__}: {_one_line(exc)})") from None
    return pd.DataFrame({".".join(path): _column(columns[".".join(path)], logical, ".".join(path), where)
                         for path, logical in leaves})


def _leaves(schema: Any, prefix: tuple[str, ...], where: str) -> list[tuple[tuple[str, ...], str | None]]:
    """(path, timestamp logical type or None) of every field that is not itself a record, records flattened."""
    if not (isinstance(schema, dict) and schema.get("type") == "record"):
        if prefix:
            return [(prefix, None)]
        raise InputError(f"{where}: the Avro file holds {json.dumps(schema)[:80]} values, not records; an events "
                         "file holds one record per event")
    out: list[tuple[tuple[str, ...], str | None]] = []
    for field in schema["fields"]:
        kind = field["type"]
        optional = isinstance(kind, list)
        if optional:  # a union: ["null", T] is an optional T; other unions stay as they are
            branches = [b for b in kind if b != "null"]
            kind = branches[0] if len(branches) == 1 else kind
        path = (*prefix, field["name"])
        if isinstance(kind, dict) and kind.get("type") == "record" and not optional:
            out += _leaves(kind, path, where)
        elif isinstance(kind, dict) and kind.get("type") == "long" and kind.get("logicalType") in TIMESTAMPS:
            out.append((path, kind["logicalType"]))
        else:
            out.append((path, None))
    return out


def _get(record: Any, path: tuple[str, ...]) -> Any:
    value: Any = record
    for name in path:
        if not isinstance(value, dict):
            return None  # an optional record that is null here: its fields are null too
        value = value.get(name)
    return value


def _column(values: list[Any], logical: str | None, name: str, where: str) -> pd.Series:
    if logical is None:
        return pd.Series(values, dtype=object if any(isinstance(v, (dict, list)) for v in values) else None)
    unit, utc = TIMESTAMPS[logical]
    ticks = np.empty(len(values), dtype=np.int64)
    for row, value in enumerate(values):
        if value is None:
            ticks[row] = NAT
        elif isinstance(value, datetime):  # fastavro's conversion of millis and micros: exact to the µs
            ticks[row] = (value - _EPOCH[value.tzinfo is not None]) // _TICK[unit]
        elif isinstance(value, int) and not isinstance(value, bool):  # nanos: fastavro leaves the integer
            ticks[row] = value
        else:
            raise InputError(f"{where}: column '{name}' row {row + 1}: {value!r} is not a {logical} value")
    stamps = pd.Series(ticks.view(f"datetime64[{unit}]"))
    return stamps.dt.tz_localize("UTC") if utc else stamps


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:199] + "…"
