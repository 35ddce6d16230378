"""Durations and time units. Internally every time is an integer number of microseconds (as in Beam),
so window arithmetic is exact and the textbook's half-second grid never suffers float rounding."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from decimal import ROUND_HALF_EVEN, Decimal

from explorer.errors import InputError

MICROS = {"us": 1, "ms": 1_000, "s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000}
_DURATION = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(us|ms|s|m|h|d)?\s*$", re.ASCII)
# Far past any setting (fields cap durations at 100 years) yet exact in int64 µs: a number beyond it is refused
# here, before it can overflow a float or an int64 downstream.
MAX_MICROS = 2**62


def parse_duration(text: str | float | int, default_unit: str = "s") -> int:
    """Parse ``10``, ``10s``, ``500ms``, ``5m``, ``1h`` (a bare number is in ``default_unit``) to µs, exactly
    (decimal arithmetic, half to even); NaN, infinities, booleans and magnitudes past 2⁶² µs are refused."""
    if isinstance(text, bool):
        raise InputError(f"cannot read duration {text!r}: give a number with an optional unit, e.g. 10s")
    if isinstance(text, (int, float)):
        number, unit = Decimal(text), default_unit
    else:
        match = _DURATION.match(str(text))
        if not match:
            raise InputError(f"cannot read duration {str(text)[:40]!r}: use a number with an optional unit, e.g. 10, "
                             "10s, 500ms, 5m, 1h")
        number, unit = Decimal(match.group(1)), match.group(2) or default_unit
    if not number.is_finite():
        raise InputError(f"cannot read duration {text!r}: it is not a finite number")
    if abs(number) * MICROS[unit] > MAX_MICROS:
        raise InputError(f"duration {str(text)[:40]}{'…' if len(str(text)) > 40 else ''} is too large "
                         "(durations go up to 100 years)")
    return int((number * MICROS[unit]).to_integral_value(ROUND_HALF_EVEN))


def truncate_to_unit(micros: int, unit: int) -> int:
    """``micros`` cut to whole ``unit``s toward zero, as a Long division does (Spark reads a µs event time into
    its ms watermark as ``t / 1000``): 1.9 ms → 1 ms, −1.9 ms → −1 ms."""
    whole = abs(micros) // unit * unit
    return whole if micros >= 0 else -whole


def format_duration(micros: int) -> str:
    """Shortest exact spelling of a duration, the inverse of :func:`parse_duration` (zero is "0s", not "0h")."""
    if micros == 0:
        return "0s"
    for unit in ("h", "m", "s", "ms"):
        if micros % MICROS[unit] == 0:
            return f"{micros // MICROS[unit]}{unit}"
    return f"{micros}us"


def exact_seconds(micros: int) -> str:
    """µs as seconds with every digit kept: 18500001 → ``18.500001``."""
    whole, frac = divmod(abs(int(micros)), 1_000_000)
    text = f"{whole}.{frac:06d}".rstrip("0").rstrip(".")
    return ("-" if micros < 0 else "") + text


def human_duration(micros: int | float | None) -> str:
    """A duration as people read it: ``250 ms``, ``2.5 s``, ``1 min 6 s``, ``3 h 20 min``, ``2 d 4 h``;
    ``-`` for none."""
    if micros is None or micros != micros:  # None or NaN
        return "-"
    sign, micros = ("−" if micros < 0 else ""), abs(float(micros))
    if micros == 0:
        return "0 s"
    if micros < 999.5:
        return f"{sign}{micros:.3g} µs"
    if micros < 999_500:
        return f"{sign}{micros / 1_000:.3g} ms"
    if micros < 59_950_000:
        return f"{sign}{micros / MICROS['s']:.3g} s"
    # two parts, rounded to the smaller: 1 min 6 s, 3 h 20 min, 2 d 4 h
    for big, small, names in (("d", "h", ("d", "h")), ("h", "m", ("h", "min")), ("m", "s", ("min", "s"))):
        if micros >= MICROS[big] - MICROS[small] / 2:
            per = MICROS[big] // MICROS[small]
            whole, rest = divmod(round(micros / MICROS[small]), per)
            return f"{sign}{whole} {names[0]}" + (f" {rest} {names[1]}" if rest else "")
    return f"{sign}{micros / MICROS['s']:.3g} s"


def format_instant(micros: int | float | None, absolute: bool) -> str:
    """A point in time: a UTC date-time for wall-clock streams (``2026-11-20 09:00:05.250``), else seconds
    from time 0 (``12.5 s``); ``none yet`` for no watermark."""
    if micros is None or micros != micros:
        return "none yet"
    if not absolute:
        return f"{micros / MICROS['s']:g} s"
    stamp = datetime.fromtimestamp(int(micros) // 1_000_000, tz=timezone.utc).replace(microsecond=int(micros) % 1_000_000)
    text = stamp.strftime("%Y-%m-%d %H:%M:%S")
    return text + (f".{stamp.microsecond // 1000:03d}" if stamp.microsecond else "")
