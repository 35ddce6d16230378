"""Reading a time column as its writer meant it, and saying how it was read.

Each time column gets its own format, detected or given:
- ISO-8601 strings, with any offset (converted to UTC) or with none (read as UTC, and said so);
- numbers since the Unix epoch in s, ms, µs or ns, recognised by magnitude: a column whose median reads as a
  date between 1990 and 2100 in exactly one unit is an epoch in that unit (Kafka's epoch ms, Spark's µs);
- other numbers are relative times, in seconds unless a unit is given (the built-in streams, 003's table);
- typed columns (Parquet and Arrow timestamps with or without a zone, durations) in their own units.

Times end as int64 µs. A value beyond what µs can hold (±2^61, about ±73,000 years) is refused, naming its
row, rather than wrapped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from explorer.errors import InputError

MICROS_PER = {"s": 1_000_000.0, "ms": 1_000.0, "us": 1.0, "ns": 0.001}
UNIT_WORDS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
LIMIT = 2**61  # |µs| beyond this is refused: int64 headroom for window arithmetic and the −2^62 "no watermark"
_EPOCH_SECONDS = (631_152_000, 4_102_444_800)  # 1990-01-01 … 2100-01-01
_ZONE = re.compile(r"(Z|[+-]\d{2}(:?\d{2})?)$", re.IGNORECASE)


@dataclass(frozen=True)
class TimeFormat:
    """How one time column was written: ``kind`` is iso, epoch, number (relative), timestamp (a typed
    column) or duration; ``unit`` is the numbers' unit; ``zone`` says how the zone was taken."""

    kind: str
    unit: str = "s"
    zone: str = ""
    given: bool = False  # the user said so (else it was detected)

    @property
    def absolute(self) -> bool:
        """Wall-clock instants (shown as date-times), as opposed to relative times (shown as durations)."""
        return self.kind in ("iso", "epoch", "timestamp")

    @property
    def naive(self) -> bool:
        return self.zone == "none"

    def describe(self) -> str:
        how = "given" if self.given else "detected"
        if self.kind == "iso":
            zone = "no time zone, read as UTC" if self.naive else "with a UTC offset"
            return f"ISO-8601 date-times ({zone})"
        if self.kind == "epoch":
            return f"Unix epoch {UNIT_WORDS[self.unit]} ({how})"
        if self.kind == "timestamp":
            return "timestamps" + (" (no time zone, read as UTC)" if self.naive else " (with a time zone)")
        if self.kind == "duration":
            return "durations"
        return f"{UNIT_WORDS[self.unit]} (relative, {how})"


def read_times(series: pd.Series, column: str, unit: str | None, where: str) -> tuple[np.ndarray, TimeFormat]:
    """A column's values as int64 µs, and the format they were read in. ``unit`` (s, ms, us, ns) says what
    numbers count; None detects it; ISO text and typed columns carry their own."""
    if pd.api.types.is_bool_dtype(series.dtype):
        raise InputError(f"{where}: column '{column}' holds true/false values, not times")
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return _typed_instants(series, column, where)
    if pd.api.types.is_timedelta64_dtype(series.dtype):
        return _checked(series.to_numpy(dtype="timedelta64[ns]").astype(np.int64) / 1000.0, column, where), \
            TimeFormat("duration", "us")
    values = series.to_numpy(dtype=object)
    blank = np.array([is_blank(v) for v in values], dtype=bool)
    if blank.any():
        row = int(np.flatnonzero(blank)[0]) + 1
        raise InputError(f"{where}: column '{column}' row {row}: empty or NaN time ({blank.sum()} such row(s))")
    flags = np.array([isinstance(v, (bool, np.bool_)) for v in values], dtype=bool)
    if flags.any():
        row = int(np.flatnonzero(flags)[0]) + 1
        raise InputError(f"{where}: column '{column}' row {row}: {shown(values[row - 1])} is true/false, not a time")
    numeric = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    is_number = ~np.isnan(numeric)
    if is_number.all():
        return _numbers(numeric, column, unit, where)
    if is_number.any():
        first_num, first_text = int(np.flatnonzero(is_number)[0]) + 1, int(np.flatnonzero(~is_number)[0]) + 1
        raise InputError(f"{where}: column '{column}' mixes time formats: row {first_num} is a number "
                         f"({shown(values[first_num - 1])}), row {first_text} is text ({shown(values[first_text - 1])})")
    return _iso(values, column, where)  # (a unit counts numbers; ISO text carries its own)


def _numbers(numeric: np.ndarray, column: str, unit: str | None, where: str) -> tuple[np.ndarray, TimeFormat]:
    if not np.isfinite(numeric).all():
        row = int(np.flatnonzero(~np.isfinite(numeric))[0]) + 1
        raise InputError(f"{where}: column '{column}' row {row}: time is infinite")
    given = unit is not None
    if unit is None:
        unit = epoch_unit(numeric)
        kind, unit = ("number", "s") if unit is None else ("epoch", unit)
    else:
        lo, hi = _EPOCH_SECONDS
        kind = "epoch" if lo <= abs(float(np.median(numeric))) * MICROS_PER[unit] / 1e6 < hi else "number"
    return _checked(numeric * MICROS_PER[unit], column, where), TimeFormat(kind, unit, given=given)


def epoch_unit(numeric: np.ndarray) -> str | None:
    """The unit in which the column's median reads as a date in 1990–2100, if exactly one does."""
    middle = abs(float(np.median(numeric)))
    lo, hi = _EPOCH_SECONDS
    fits = [unit for unit, micros in MICROS_PER.items() if lo <= middle * micros / 1e6 < hi]
    return fits[0] if len(fits) == 1 else None


def _iso(values: np.ndarray, column: str, where: str) -> tuple[np.ndarray, TimeFormat]:
    text = pd.Series(values).astype(str).str.strip()
    parsed = pd.to_datetime(text, format="ISO8601", utc=True, errors="coerce")
    bad = parsed.isna().to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0]) + 1
        raise InputError(f"{where}: column '{column}' row {row}: cannot read {shown(values[row - 1])} as a time "
                         "(use ISO-8601 like 2026-01-01T09:00:05Z, or a number)")
    zoned = np.array([bool(_ZONE.search(v[10:])) for v in text.tolist()], dtype=bool)
    if zoned.any() and not zoned.all():
        first_naive, first_zoned = int(np.flatnonzero(~zoned)[0]) + 1, int(np.flatnonzero(zoned)[0]) + 1
        raise InputError(f"{where}: column '{column}' mixes ISO times with and without a time zone "
                         f"(row {first_naive} has none, row {first_zoned} has one)")
    micros = parsed.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy().astype("datetime64[us]").astype(np.int64)
    return micros, TimeFormat("iso", "us", "utc" if zoned.all() else "none")


def _typed_instants(series: pd.Series, column: str, where: str) -> tuple[np.ndarray, TimeFormat]:
    naive = getattr(series.dtype, "tz", None) is None
    if series.isna().any():
        row = int(np.flatnonzero(series.isna().to_numpy())[0]) + 1
        raise InputError(f"{where}: column '{column}' row {row}: empty time")
    utc = series if naive else series.dt.tz_convert("UTC").dt.tz_localize(None)
    micros = utc.to_numpy().astype("datetime64[us]").astype(np.int64)
    return micros, TimeFormat("timestamp", "us", "none" if naive else "utc")


def _checked(micros: np.ndarray, column: str, where: str) -> np.ndarray:
    """Round to int64 µs, refusing values µs cannot hold."""
    over = np.abs(micros) >= LIMIT
    if over.any():
        row = int(np.flatnonzero(over)[0]) + 1
        raise InputError(f"{where}: column '{column}' row {row}: time {micros[row - 1] / 1e6:.6g} s is out of range "
                         "(beyond ±73,000 years); is the unit right?")
    return np.round(micros).astype(np.int64)


def shown(value: object) -> str:
    """A cell as a message quotes it: 1.5, not numpy's np.float64(1.5)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def is_blank(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and np.isnan(value):
        return True
    return isinstance(value, str) and value.strip().lower() in ("", "nan", "null", "none", "nat")


def consistent(formats: dict[str, TimeFormat], where: str) -> None:
    """Event and arrival times must be comparable: both instants or both relative, and never an instant with a
    zone beside one without (which would shift by the unknown offset without a word)."""
    if len(formats) < 2:
        return
    (a, fa), (b, fb) = formats.items()
    if fa.absolute != fb.absolute:
        absolute, relative = (a, b) if fa.absolute else (b, a)
        raise InputError(f"{where}: {absolute} holds {formats[absolute].describe()} but {relative} holds "
                         f"{formats[relative].describe()}; give {relative} as instants too (or its unit, "
                         f"e.g. --time-unit {relative}=ms)")
    if fa.absolute and fa.naive != fb.naive:
        naive, zoned = (a, b) if fa.naive else (b, a)
        raise InputError(f"{where}: {naive} has no time zone but {zoned} does; add the zone to {naive} "
                         "(e.g. a trailing Z for UTC)")
