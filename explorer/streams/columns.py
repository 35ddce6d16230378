"""The columns of an events table that are not times (ids, keys, batches, partitions, Kafka offsets, values),
each read as exact values or refused naming its row.

A module of its own because these rules (whole numbers never through a float, one record per partition and
offset) are about one column at a time, apart from how the rows become a stream (``loading``).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from explorer.errors import InputError
from explorer.streams import columnar
from explorer.streams.stream import IdArray, id_array
from explorer.streams.times import integer_text, is_blank, shown


def ids_column(frame: pd.DataFrame, where: str, is_mark: np.ndarray) -> IdArray:
    """The events' ids (``e1``, ``e2``… by row when the file has none); watermark rows need none. Made by Arrow a
    column at a time and kept as Arrow text (``stream.id_array``), not as Python strings: ten million of those
    were 0.65 GB and 0.5 s, held by every run, while a Result makes one only for an id someone reads."""
    if "id" not in frame.columns:
        numbers = pa.array(np.arange(1, len(frame) + 1, dtype=np.int64)).cast(pa.string())
        return id_array(pc.binary_join_element_wise("e", numbers, ""))
    fast = _clean_ids(frame["id"], is_mark)
    if fast is not None:
        return id_array(fast)
    column = columnar.objects(frame["id"])
    ids = column.astype(str).str.strip().to_numpy(dtype=object)
    blank = np.array([is_blank(v) for v in column.to_numpy(dtype=object)]) & ~is_mark
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
    return id_array(ids)


def _clean_ids(column: pd.Series, is_mark: np.ndarray) -> pa.ChunkedArray | None:
    """A string id column with no blank and no duplicate, and no watermark rows, stripped; None for anything
    else (``ids_column`` then finds, and names, what is wrong)."""
    text = columnar.strings(column)
    if text is None or is_mark.any():
        return None
    stripped = columnar.trimmed(text)
    if columnar.blank(text, stripped).any() or not columnar.all_distinct(stripped):
        return None
    return stripped


def text_codes(frame: pd.DataFrame, column: str) -> tuple[np.ndarray, np.ndarray]:
    """A text column (keys, partitions, kinds: blank is "", the rest stripped) as codes into its sorted distinct
    values, read once per distinct value; one "" for a column the file does not have."""
    if column not in frame.columns:
        return np.zeros(len(frame), dtype=np.int64), np.array([""], dtype=object)
    fast = columnar.text_codes(frame[column])
    if fast is not None:
        return fast
    read = np.array([_text(v) for v in columnar.objects(frame[column]).to_numpy(dtype=object)], dtype=object)
    codes, names = pd.factorize(read, sort=True)
    return codes.astype(np.int64), np.asarray(names, dtype=object)


def _text(value: object) -> str:
    return "" if is_blank(value) else str(value).strip()


def constant(value: object, n: int, dtype: npt.DTypeLike) -> np.ndarray:
    """A column the file does not have, one value on every row, as a read-only view of that value: not 80 MB at
    10M events (the offsets' −1, the values' 1.0, the one partition's or key's name). Loading's reordering keeps
    it one value (``loading._reordered``), filtering makes an array of its own; nothing writes into a Stream's
    columns."""
    return np.broadcast_to(np.array(value, dtype=dtype), (n,))


def batch_column(frame: pd.DataFrame, where: str) -> np.ndarray:
    if "batch" not in frame.columns:
        return np.zeros(len(frame), dtype=np.int64)
    return whole_numbers(frame["batch"], "batch", where)


def offset_column(frame: pd.DataFrame, where: str, is_mark: np.ndarray, partition: np.ndarray | None) -> np.ndarray:
    """Kafka offsets (-1 without the column): whole, not negative, and one record per (partition, offset),
    since a duplicate means two rows claim the same record (an export joined twice, a column misread)."""
    if "offset" not in frame.columns:
        return constant(-1, len(frame), np.int64)
    offsets = whole_numbers(columnar.objects(frame["offset"]).where(~is_mark, 0), "offset", where)  # watermark rows have none
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


def value_column(frame: pd.DataFrame, where: str) -> np.ndarray:
    if "value" not in frame.columns:
        return constant(1.0, len(frame), float)
    if pd.api.types.is_numeric_dtype(frame["value"].dtype) and not pd.api.types.is_bool_dtype(frame["value"].dtype):
        numbers: npt.NDArray[np.float64] = np.nan_to_num(frame["value"].to_numpy(dtype=float), nan=0.0)
        return numbers  # NaN is blank, and blank is 0
    column = columnar.objects(frame["value"])
    values = column.to_numpy(dtype=object)
    numeric = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(numeric) & ~np.array([is_blank(v) for v in values])
    if bad.any():
        row = int(np.flatnonzero(bad)[0]) + 1
        raise InputError(f"{where}: column 'value' row {row}: {shown(values[row - 1])} is not a number")
    filled: npt.NDArray[np.float64] = np.nan_to_num(numeric, nan=0.0)
    return filled


def whole_numbers(series: pd.Series, column: str, where: str) -> np.ndarray:
    """A column of whole numbers (batch labels, offsets) as exact int64: read as integers, never through a
    float (labels above 2^53, commit times in ns, stay distinct); 1.5, inf and values beyond int64 are refused."""
    if pd.api.types.is_integer_dtype(series.dtype) and not pd.api.types.is_unsigned_integer_dtype(series.dtype):
        if not series.isna().any():
            return series.to_numpy(dtype=np.int64)
    text = columnar.strings(series)
    if text is not None:
        ints = columnar.integers(columnar.trimmed(text))
        if ints is not None:
            return ints
    series = columnar.objects(series)
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
