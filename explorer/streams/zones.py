"""Naive date-times (no offset, no zone) read as local times in a zone the user names (``--timezone``), for exports
that write wall-clock time, such as the NYC taxi trips (America/New_York).

A module of its own because local time is not a function of the instant: once a year a local hour never happens
(the clocks spring forward) and once a year one happens twice (they fall back). The rule, stated in
docs/input.md, is never to guess in silence:
- a local time in a gap never happened there: it is refused, naming the row and the count of such rows, as a
  clock that was not set, or a zone that is not the writer's;
- a local time in an overlap is taken at its first occurrence (the earlier instant, the offset before the
  change), as java.time's ``ZonedDateTime.of`` and so Spark and Flink resolve it; how many were taken so is
  said where the time format is described (``validate``).
"""

from __future__ import annotations

import difflib
from zoneinfo import ZoneInfo, available_timezones

import numpy as np
import pandas as pd

from explorer.errors import InputError


def time_zone(name: str) -> ZoneInfo:
    """The IANA zone ``name`` names (Europe/Berlin, America/New_York, UTC), or one line saying it is none."""
    text = str(name).strip()
    try:
        if not text or text.startswith(("/", ".")):
            raise ValueError(text)
        return ZoneInfo(text)
    except Exception:  # ZoneInfoNotFoundError, a path-like or malformed key
        near = difflib.get_close_matches(text, sorted(available_timezones()), n=1, cutoff=0.6) if len(text) < 64 else []
        hint = f" (did you mean {near[0]!r}?)" if near else " (e.g. Europe/Berlin, America/New_York, UTC)"
        raise InputError(f"--timezone {text[:60]!r}: not an IANA time zone name{hint}") from None


def localize(wall: pd.Series, zone: ZoneInfo, column: str, where: str, written: np.ndarray) -> tuple[pd.Series, int]:
    """Naive wall-clock times (datetime64, as the file wrote them) read in ``zone``: their instants as naive UTC
    datetime64, and how many were ambiguous and taken at their first occurrence. ``written`` holds the cells as
    written, for the message when one falls in a gap."""
    local = wall.dt.tz_localize(zone, ambiguous="NaT", nonexistent="NaT")
    unresolved = (local.isna() & wall.notna()).to_numpy()
    earlier = 0
    if unresolved.any():
        shifted = wall.dt.tz_localize(zone, ambiguous="NaT", nonexistent="shift_forward")
        gap = unresolved & shifted.notna().to_numpy()
        if gap.any():
            row = int(np.flatnonzero(gap)[0]) + 1
            value = written[row - 1]
            shown = repr(value.item() if isinstance(value, np.generic) else str(value))
            raise InputError(f"{where}: column '{column}' row {row}: {shown} never happened in {zone.key} (the "
                             f"clocks sprang forward past it: a daylight-saving gap; {int(gap.sum())} such row(s)); "
                             "fix those rows, or give the zone the file was written in")
        overlap = unresolved
        first = wall.dt.tz_localize(zone, ambiguous=np.ones(len(wall), dtype=bool), nonexistent="NaT")
        second = wall.dt.tz_localize(zone, ambiguous=np.zeros(len(wall), dtype=bool), nonexistent="NaT")
        earliest = first.where(first.dt.tz_convert("UTC") <= second.dt.tz_convert("UTC"), second)
        local = local.where(~overlap, earliest)
        earlier = int(overlap.sum())
    utc: pd.Series = local.dt.tz_convert("UTC").dt.tz_localize(None)
    return utc, earlier
