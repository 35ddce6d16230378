"""Which column of a file plays which role (id, key, event_time…): the file's own names, or the ones the user
maps (``--key-col device_id``), which may be dotted paths into nested records (``--key-col repo.name``,
``--event-time-col payload.after.ts``) as Kafka Connect, Debezium, Wikimedia EventStreams and GitHub's archive
write them.

A module of its own because a mapping is about names, apart from what the columns hold (``columns``, ``times``).
A path is only walked for the columns mapped, row by row through the objects JSON gives (Parquet structs are
flattened to dotted columns when read, keeping their types: ``files``), so a wide record costs nothing for the
fields not used.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from explorer.errors import InputError
from explorer.streams.stream import COLUMNS

ROLES = (*COLUMNS, "kind")  # what a column of the file can be to us
LISTED = 40  # names a message lists at most


class MissingColumns(InputError):
    """Mapped columns the file does not have; ``missing`` names them, so a caller can say where the mapping
    came from."""

    def __init__(self, message: str, missing: list[str]):
        super().__init__(message)
        self.missing = missing


def map_columns(frame: pd.DataFrame, columns: dict[str, str] | None, where: str) -> pd.DataFrame:
    """The file's table with one column per role (id, key, event_time…), named by the role: a mapped column
    (``--key-col partition``) takes the role, and the file's own column of that name (its ``key``) is then
    ignored; an unmapped role takes the column of its own name, even one mapped to another role too (keys by
    partition keep the partitions). Two roles mapped to one column are refused, naming both roles. A mapped
    name the file has as a column is that column, even with dots in it; otherwise a dotted name is a path into
    the records' nested objects (:func:`column_values`)."""
    columns = dict(columns or {})
    unknown = [ours for ours in columns if ours not in ROLES]
    if unknown:
        raise InputError(f"{where}: cannot map a column to {unknown[0]!r}; the columns read are {', '.join(ROLES)}")
    found: dict[str, pd.Series] = {}
    for theirs in columns.values():
        values = column_values(frame, theirs, where)
        if values is not None:
            found[theirs] = values
    missing = [theirs for theirs in columns.values() if theirs not in found]
    if missing:
        raise MissingColumns(f"{where}: mapped column(s) {', '.join(map(repr, missing))} not in the file "
                             f"(it has {field_names(frame)})", missing)
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
    return pd.DataFrame({role: found[theirs] if theirs in found else frame[theirs] for role, theirs in chosen.items()},
                        index=frame.index, copy=False)  # (the file's columns, not copies: read only)


def column_values(frame: pd.DataFrame, name: str, where: str) -> pd.Series | None:
    """The values ``name`` names: the file's column of that name (a literal ``meta.dt`` column wins), or else
    the dotted path through a column of objects (``meta.dt``: field ``dt`` of column ``meta``; the longest
    column name that is a prefix is taken first). None when neither exists in any row. A path that some rows
    lack (``payload.after`` is null in a Debezium delete) is refused naming the first such row: a blank would
    be reported as an empty time, which hides what is missing."""
    if name in frame.columns:
        values: pd.Series = frame[name]
        return values
    parts = str(name).split(".")
    for cut in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:cut])
        if head in frame.columns and frame[head].dtype == object:
            return _walk(frame[head], head, parts[cut:], str(name), where)
    return None


def _walk(column: pd.Series, head: str, rest: list[str], name: str, where: str) -> pd.Series | None:
    values = column.to_numpy(dtype=object)
    out: list[Any] = [None] * len(values)
    lacking = np.zeros(len(values), dtype=bool)
    first_reason = ""
    for row, value in enumerate(values):
        got, reason = _lookup(value, head, rest)
        if reason is None:
            out[row] = got
        else:
            if not lacking.any():
                first_reason = reason
            lacking[row] = True
    if lacking.all():
        return None
    if lacking.any():
        row = int(np.flatnonzero(lacking)[0]) + 1
        raise InputError(f"{where}: column '{name}' row {row}: the path is missing ({first_reason}; "
                         f"{int(lacking.sum())} such row(s))")
    return pd.Series(out, index=column.index, name=name)


def _lookup(value: Any, path: str, rest: list[str]) -> tuple[Any, str | None]:
    """The field ``rest`` names inside ``value`` (the value at ``path``), or why it is not there. Keys with dots
    inside an object are matched whole first (``{"a.b": 1}`` for ``a.b``)."""
    while rest:
        if not isinstance(value, dict):
            what = "null" if value is None or (isinstance(value, float) and np.isnan(value)) else \
                f"{type(value).__name__}, not an object"
            return None, f"'{path}' is {what}"
        for take in range(len(rest), 0, -1):
            key = ".".join(rest[:take])
            if key in value:
                value, path, rest = value[key], f"{path}.{key}", rest[take:]
                break
        else:
            return None, f"'{path}' has no '{rest[0]}'"
    return value, None


def field_names(frame: pd.DataFrame) -> str:
    """The file's columns for a message (:func:`field_paths`), at most LISTED of them."""
    names = field_paths(frame)
    shown = ", ".join(names[:LISTED])
    return shown + (f", … ({len(names) - LISTED} more)" if len(names) > LISTED else "")


def field_paths(frame: pd.DataFrame) -> list[str]:
    """The file's columns, a column of objects as the dotted paths of its fields (from the first row, of the
    first 1,000, that has one): what a mapping can name."""
    names: list[str] = []
    for column in frame.columns:
        sample = None
        if frame[column].dtype == object:
            sample = next((v for v in frame[column].head(1000) if isinstance(v, dict) and v), None)
        names += _paths(str(column), sample) if sample is not None else [str(column)]
    return names


def _paths(prefix: str, record: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in record.items():
        name = f"{prefix}.{key}"
        out += _paths(name, value) if isinstance(value, dict) and value else [name]
    return out
