"""Reading a time column as its writer meant it, and saying how it was read.

Each time column gets its own format, detected or given:
- ISO-8601 strings, with any offset (converted to UTC) or with none (read as UTC, or as local time in the zone
  ``--timezone`` names: ``zones``; said either way);
- numbers since the Unix epoch in s, ms, µs or ns, recognised by magnitude: a column whose median reads as a
  date between 1990 and 2100 in exactly one unit is an epoch in that unit (Kafka's epoch ms, Spark's µs);
- other numbers are relative times, in seconds unless a unit is given (the built-in streams, 003's table);
- typed columns (Parquet and Arrow timestamps with or without a zone, durations) in their own units; a naive
  timestamp is read in the given zone as naive ISO text is.

Times end as int64 µs, exactly: numbers are read as integers or decimals (never through a float), ISO text
with up to 9 fractional digits and typed columns through their integer ticks, and each is rounded to the µs
half to even (as ``timeutil.parse_duration`` does): 0.5 µs → 0, 1.5 µs → 2, 09.9999996 s → 10.000000 s. A value
beyond what µs can hold (±2^61, about ±73,000 years), or an instant outside the years 1–9999, is refused, naming
its row, rather than wrapped. Detected epoch numbers whose magnitudes disagree by 100× or more (epoch ms with a
few rows in seconds) are refused unless the unit is given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal, InvalidOperation
from typing import Any, NoReturn
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from explorer.errors import InputError
from explorer.streams import columnar
from explorer.streams.zones import localize

MICROS_PER = {"s": 1_000_000.0, "ms": 1_000.0, "us": 1.0, "ns": 0.001}
UNIT_WORDS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
LIMIT = 2**61  # |µs| beyond this is refused: int64 headroom for window arithmetic and the −2^62 "no watermark"
_EPOCH_SECONDS = (631_152_000, 4_102_444_800)  # 1990-01-01 … 2100-01-01
FACTOR = {"s": 1_000_000, "ms": 1_000, "us": 1}  # µs per unit, exactly; ns is divided by 1000 and rounded
FIRST_INSTANT = -62_135_596_800_000_000  # 0001-01-01T00:00:00Z in µs
END_INSTANT = 253_402_300_800_000_000  # 10000-01-01T00:00:00Z: instants are refused from here on
MIXED = 100  # epoch numbers this many times bigger or smaller than the column's median are another unit
_FRACTION = re.compile(r"\d{2}:\d{2}:\d{2}[.,](\d+)")
_DECIMALS = Context(prec=80)
_ZONE = re.compile(r"(Z|[+-]\d{2}(:?\d{2})?)$", re.IGNORECASE)


@dataclass(frozen=True)
class TimeFormat:
    """How one time column was written: ``kind`` is iso, epoch, number (relative), timestamp (a typed
    column) or duration; ``unit`` is the numbers' unit; ``zone`` says how the zone was taken: "utc" (the
    values carry one), "none" (naive: read as UTC, or in ``local``, the zone the user named)."""

    kind: str
    unit: str = "s"
    zone: str = ""
    given: bool = False  # the user said so (else it was detected)
    local: str = ""  # the IANA zone naive times were read in ("" when naive times are read as UTC)
    earlier: int = 0  # ambiguous local times (a fall-back overlap) taken at their first occurrence

    @property
    def absolute(self) -> bool:
        """Wall-clock instants (shown as date-times), as opposed to relative times (shown as durations)."""
        return self.kind in ("iso", "epoch", "timestamp")

    @property
    def naive(self) -> bool:
        return self.zone == "none"

    @property
    def unzoned(self) -> bool:
        """Naive, and read as UTC for want of a zone: beside zoned times it would shift by an unknown offset."""
        return self.naive and not self.local

    def read_as(self) -> str:
        """How naive times were placed: in the zone given, or in UTC by default (said, with the way out)."""
        if not self.local:
            return "no time zone, read as UTC (--timezone ZONE for local times)"
        overlap = (f"; {self.earlier} ambiguous (the clocks fell back) taken at their first occurrence"
                   if self.earlier else "")
        return f"no time zone, read as local time in {self.local}{overlap}"

    def describe(self) -> str:
        how = "given" if self.given else "detected"
        if self.kind == "iso":
            zone = self.read_as() if self.naive else "with a UTC offset"
            return f"ISO-8601 date-times ({zone})"
        if self.kind == "epoch":
            return f"Unix epoch {UNIT_WORDS[self.unit]} ({how})"
        if self.kind == "timestamp":
            return "timestamps" + (f" ({self.read_as()})" if self.naive else " (with a time zone)")
        if self.kind == "duration":
            return "durations"
        return f"{UNIT_WORDS[self.unit]} (relative, {how})"


def read_times(series: pd.Series, column: str, unit: str | None, where: str,
               zone: ZoneInfo | None = None) -> tuple[np.ndarray, TimeFormat]:
    """A column's values as int64 µs, and the format they were read in. ``unit`` (s, ms, us, ns) says what
    numbers count; None detects it; ISO text and typed columns carry their own. ``zone`` is where naive
    date-times were written (None: UTC); times with an offset or a zone, and numbers, are not affected."""
    if pd.api.types.is_bool_dtype(series.dtype):
        raise InputError(f"{where}: column '{column}' holds true/false values, not times")
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return _typed_instants(series, column, where, zone)
    if pd.api.types.is_timedelta64_dtype(series.dtype):
        return _ticks_to_micros(series.to_numpy(), column, where), TimeFormat("duration", "us")
    fast = _whole_column(series, column, unit, where, zone)
    if fast is not None:
        return fast
    series = columnar.objects(series)
    values = series.to_numpy(dtype=object)
    blank = np.array([is_blank(v) for v in values], dtype=bool)
    if blank.any():
        row = int(np.flatnonzero(blank)[0]) + 1
        raise InputError(f"{where}: column '{column}' row {row}: empty or NaN time ({blank.sum()} such row(s))")
    flags = np.array([isinstance(v, (bool, np.bool_)) for v in values], dtype=bool)
    if flags.any():
        row = int(np.flatnonzero(flags)[0]) + 1
        raise InputError(f"{where}: column '{column}' row {row}: {shown(values[row - 1])} is true/false, not a time")
    numeric = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)  # to tell numbers from text
    is_number = ~np.isnan(numeric)
    if is_number.all():
        return _numbers(series, numeric, column, unit, where)
    if is_number.any():
        first_num, first_text = int(np.flatnonzero(is_number)[0]) + 1, int(np.flatnonzero(~is_number)[0]) + 1
        raise InputError(f"{where}: column '{column}' mixes time formats: row {first_num} is a number "
                         f"({shown(values[first_num - 1])}), row {first_text} is text ({shown(values[first_text - 1])})")
    return _iso(values, column, where, zone)  # (a unit counts numbers; ISO text carries its own)


def _whole_column(series: pd.Series, column: str, unit: str | None, where: str,
                  zone: ZoneInfo | None) -> tuple[np.ndarray, TimeFormat] | None:
    """The clean cases read without a look at each cell (``columnar``): integer columns, floats with no NaN,
    text that is all integers, and ISO text of one strict shape (naive text only when no zone is given). None
    for the rest, which the per-cell reading checks and, if need be, refuses naming the row."""
    if pd.api.types.is_signed_integer_dtype(series.dtype):
        whole = series.to_numpy(dtype=np.int64)
        return _numbers(series, whole.astype(float), column, unit, where, whole)
    if pd.api.types.is_float_dtype(series.dtype):
        numeric = series.to_numpy(dtype=float)
        return None if np.isnan(numeric).any() else _numbers(series, numeric, column, unit, where)
    text = columnar.strings(series)
    if text is None:
        return None
    stripped = columnar.trimmed(text)
    ints = columnar.integers(stripped)
    if ints is not None:
        return _numbers(series, ints.astype(float), column, unit, where, ints)
    found = columnar.iso_instants(stripped)
    if found is None or (zone is not None and not found[1]):
        return None
    stamps, zoned = found
    return _ticks_to_micros(stamps, column, where), TimeFormat("iso", "us", "utc" if zoned else "none")


def _numbers(series: pd.Series, numeric: np.ndarray, column: str, unit: str | None,
             where: str, ints: np.ndarray | None = None) -> tuple[np.ndarray, TimeFormat]:
    """Numbers as µs: the unit detected from magnitudes (floats suffice for that), the µs computed exactly
    (from ``ints`` when the column is already known to be int64)."""
    if ints is None and not np.isfinite(numeric).all():
        row = int(np.flatnonzero(~np.isfinite(numeric))[0]) + 1
        raise InputError(f"{where}: column '{column}' row {row}: time is infinite")
    given = unit is not None
    middle = float(np.median(numeric))  # (once: a median of ten million numbers sorts a copy of them)
    if unit is None:
        unit = epoch_unit(numeric, middle)
        kind, unit = ("number", "s") if unit is None else ("epoch", unit)
        if kind == "epoch":
            _one_magnitude(series, numeric, column, where, middle if numeric.min() >= 0 else None)
    else:
        lo, hi = _EPOCH_SECONDS
        kind = "epoch" if lo <= abs(middle) * MICROS_PER[unit] / 1e6 < hi else "number"
    micros = _scaled(ints, unit, column, where) if ints is not None else exact_micros(series, numeric, unit, column, where)
    if kind == "epoch":
        _instants_in_range(micros, column, where, series)
    return micros, TimeFormat(kind, unit, given=given)


def _one_magnitude(series: pd.Series, numeric: np.ndarray, column: str, where: str, middle: float | None) -> None:
    """Epoch numbers in one unit: a row 100× off the median (of their sizes, ``middle`` when known) is another
    unit (seconds among ms), not a date in 1970; refused, naming the first row of each magnitude."""
    size = np.abs(numeric) if middle is None else numeric  # (``middle`` is given for numbers ≥ 0)
    middle = float(np.median(size)) if middle is None else middle
    if size.min() * MIXED > middle and size.max() < middle * MIXED:  # (the test below, without its arrays)
        return
    off = (size * MIXED <= middle) | (size >= middle * MIXED)
    if off.any():
        far, near = int(np.flatnonzero(off)[0]) + 1, int(np.flatnonzero(~off)[0]) + 1
        raise InputError(f"{where}: column '{column}' rows {near} and {far}: {shown(series.iloc[near - 1])} and "
                         f"{shown(series.iloc[far - 1])} differ {MIXED}× or more in magnitude ({int(off.sum())} such "
                         "row(s)): epoch times in two units? give the unit with --time-unit")


def exact_micros(series: pd.Series, numeric: np.ndarray, unit: str, column: str, where: str) -> np.ndarray:
    """Numbers counting ``unit`` as int64 µs without a float in between: integers by integer arithmetic,
    anything else (1.5, 1e3, a Parquet decimal) as a decimal; rounded half to even to the µs."""
    ints = _int64_values(series, numeric)
    if ints is not None:
        return _scaled(ints, unit, column, where)
    short = _short_decimals(series, numeric, unit)
    if short is not None:
        return short
    values = series.to_numpy(dtype=object)
    out = np.empty(len(values), dtype=np.int64)
    factor = Decimal(FACTOR[unit]) if unit in FACTOR else Decimal("0.001")
    for row, value in enumerate(values):
        number = _decimal(value, numeric[row]) * factor
        if abs(number) >= LIMIT:
            _out_of_range(column, where, row, float(number))
        out[row] = int(number.to_integral_value(ROUND_HALF_EVEN, _DECIMALS))
    return out


def _int64_values(series: pd.Series, numeric: np.ndarray) -> np.ndarray | None:
    """The column as exact int64 when every value is a whole number int64 holds without doubt, else None."""
    if pd.api.types.is_integer_dtype(series.dtype):
        if pd.api.types.is_unsigned_integer_dtype(series.dtype) and (series.to_numpy() > LIMIT).any():
            return None
        return series.to_numpy(dtype=np.int64)
    if pd.api.types.is_float_dtype(series.dtype):
        exact = (numeric == np.round(numeric)) & (np.abs(numeric) <= 2**53)
        return numeric.astype(np.int64) if exact.all() else None
    return integer_text(series.to_numpy(dtype=object))


def integer_text(values: np.ndarray) -> np.ndarray | None:
    """Text (or Python ints) that all spell integers int64 holds, parsed as integers by numpy (never through a
    float); None if any is not one (1.5, 1e3, past int64)."""
    try:
        return np.asarray(values, dtype=str).astype(np.int64)
    except (ValueError, OverflowError):
        return None


def _short_decimals(series: pd.Series, numeric: np.ndarray, unit: str) -> np.ndarray | None:
    """Decimal text (1.5, 0.25) with no more fractional digits than the unit has of µs (s: 6, ms: 3) and under
    2^50 µs, as µs through its float, which is then exact: the true µs are whole and the float's error stays
    below a quarter µs, so rounding lands on them. None when that cannot be shown (the decimal path decides)."""
    if unit not in FACTOR or series.dtype != object:
        return None
    try:
        text = np.strings.strip(np.asarray(series.to_numpy(dtype=object), dtype=str))
    except (TypeError, ValueError):
        return None
    if (np.strings.find(np.strings.lower(text), "e") >= 0).any():  # 1e3: exponents take the decimal path
        return None
    dot = np.strings.find(text, ".")
    fraction = np.where(dot >= 0, np.strings.str_len(text) - dot - 1, 0)
    micros = numeric * FACTOR[unit]
    if (fraction > {"s": 6, "ms": 3, "us": 0}[unit]).any() or (np.abs(micros) >= 2.0**50).any():
        return None
    exact: np.ndarray = np.round(micros).astype(np.int64)
    return exact


def _decimal(value: Any, fallback: float) -> Decimal:
    """One number exactly as written (a float as its shortest repr: 0.1 is 0.1)."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return Decimal(int(value))
    if isinstance(value, (float, np.floating)):
        return Decimal(repr(float(value)))
    try:
        return Decimal(str(value).strip())
    except InvalidOperation:  # a spelling pandas reads and Decimal does not
        return Decimal(repr(float(fallback)))


def _scaled(ints: np.ndarray, unit: str, column: str, where: str) -> np.ndarray:
    """int64 counts of ``unit`` as µs: multiplied when coarser (after checking the range), ns divided by 1000
    and rounded half to even."""
    if unit == "ns":
        whole, rest = np.divmod(ints, 1000)  # rest in 0…999, whole rounded down
        up = (rest > 500) | ((rest == 500) & (whole % 2 == 1))
        micros: np.ndarray = whole + up
    else:
        bound = LIMIT // FACTOR[unit]
        if len(ints) and (ints.min() <= -bound or ints.max() >= bound):
            row = int(np.flatnonzero((ints <= -bound) | (ints >= bound))[0])
            _out_of_range(column, where, row, float(ints[row]) * FACTOR[unit])
        micros = ints * FACTOR[unit] if FACTOR[unit] != 1 else ints
    if len(micros) and (micros.min() <= -LIMIT or micros.max() >= LIMIT):
        row = int(np.flatnonzero((micros <= -LIMIT) | (micros >= LIMIT))[0])
        _out_of_range(column, where, row, float(micros[row]))
    return np.asarray(micros, dtype=np.int64)


def _out_of_range(column: str, where: str, row: int, micros: float) -> NoReturn:
    raise InputError(f"{where}: column '{column}' row {row + 1}: time {micros / 1e6:.6g} s is out of range "
                     "(beyond ±73,000 years); is the unit right?")


def _instants_in_range(micros: np.ndarray, column: str, where: str, series: pd.Series) -> None:
    """Instants are shown as dates: outside the years 1–9999 they have none, so they are refused."""
    if not len(micros) or (micros.min() >= FIRST_INSTANT and micros.max() < END_INSTANT):
        return
    outside = (micros < FIRST_INSTANT) | (micros >= END_INSTANT)
    if outside.any():
        row = int(np.flatnonzero(outside)[0]) + 1
        raise InputError(f"{where}: column '{column}' row {row}: {_quoted(series.iloc[row - 1])} is outside the "
                         "years 1–9999; is the unit right?")


def _quoted(value: Any) -> str:
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return repr(str(value))
    return shown(value)


def epoch_unit(numeric: np.ndarray, median: float | None = None) -> str | None:
    """The unit in which the column's median reads as a date in 1990–2100, if exactly one does."""
    middle = abs(float(np.median(numeric)) if median is None else median)
    lo, hi = _EPOCH_SECONDS
    fits = [unit for unit, micros in MICROS_PER.items() if lo <= middle * micros / 1e6 < hi]
    return fits[0] if len(fits) == 1 else None


def _iso(values: np.ndarray, column: str, where: str, zone: ZoneInfo | None) -> tuple[np.ndarray, TimeFormat]:
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
    digits = np.array([len(m.group(1)) if (m := _FRACTION.search(v)) else 0 for v in text.tolist()])
    if (digits > 9).any():
        row = int(np.flatnonzero(digits > 9)[0]) + 1
        raise InputError(f"{where}: column '{column}' row {row}: {shown(values[row - 1])} has more than 9 fractional "
                         "digits (nanoseconds are the finest read)")
    utc = parsed.dt.tz_convert("UTC").dt.tz_localize(None)  # naive text: its wall clock, as if in UTC
    earlier = 0
    if zone is not None and not zoned.all():
        utc, earlier = localize(utc, zone, column, where, values)
    micros = _ticks_to_micros(utc.to_numpy(), column, where)
    local = zone.key if zone is not None and not zoned.all() else ""
    return micros, TimeFormat("iso", "us", "utc" if zoned.all() else "none", local=local, earlier=earlier)


def _typed_instants(series: pd.Series, column: str, where: str,
                    zone: ZoneInfo | None) -> tuple[np.ndarray, TimeFormat]:
    naive = getattr(series.dtype, "tz", None) is None
    if series.isna().any():
        row = int(np.flatnonzero(series.isna().to_numpy())[0]) + 1
        raise InputError(f"{where}: column '{column}' row {row}: empty time")
    utc = series if naive else series.dt.tz_convert("UTC").dt.tz_localize(None)
    earlier, local = 0, ""
    if naive and zone is not None:
        utc, earlier = localize(series, zone, column, where, series.to_numpy(dtype=object))
        local = zone.key
    micros = _ticks_to_micros(utc.to_numpy(), column, where)
    _instants_in_range(micros, column, where, series)
    return micros, TimeFormat("timestamp", "us", "none" if naive else "utc", local=local, earlier=earlier)


def _ticks_to_micros(stamps: np.ndarray, column: str, where: str) -> np.ndarray:
    """datetime64 or timedelta64 values (any resolution) as int64 µs by their integer ticks, ns rounded half
    to even (numpy's astype would cut them toward minus infinity)."""
    tick = np.datetime_data(stamps.dtype)[0]
    ints = stamps.view(np.int64)
    if tick in FACTOR or tick == "ns":
        return _scaled(ints, tick, column, where)
    return stamps.astype(stamps.dtype.str[:3] + "[us]").view(np.int64)  # minutes, days: whole µs already


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
    if fa.absolute and fa.unzoned != fb.unzoned:
        naive, zoned = (a, b) if fa.unzoned else (b, a)
        raise InputError(f"{where}: {naive} has no time zone but {zoned} does; add the zone to {naive} "
                         "(e.g. a trailing Z for UTC), or name it with --timezone")
