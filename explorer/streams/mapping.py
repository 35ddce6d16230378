"""Which column of a file plays which role (id, key, event_time…): the file's own names, or the ones the user
maps (``--key-col device_id``).

A module of its own because a mapping is about names, apart from what the columns hold (``columns``, ``times``).
"""

from __future__ import annotations

import pandas as pd

from explorer.errors import InputError
from explorer.streams.stream import COLUMNS


class MissingColumns(InputError):
    """Mapped columns the file does not have; ``missing`` names them, so a caller can say where the mapping
    came from."""

    def __init__(self, message: str, missing: list[str]):
        super().__init__(message)
        self.missing = missing


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

