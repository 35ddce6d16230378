"""Durations and time units. Internally every time is an integer number of microseconds (as in Beam),
so window arithmetic is exact and the textbook's half-second grid never suffers float rounding."""

from __future__ import annotations

import re

from explorer.errors import InputError

MICROS = {"us": 1, "ms": 1_000, "s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000}
_DURATION = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(us|ms|s|m|h|d)?\s*$")


def parse_duration(text: str | float | int, default_unit: str = "s") -> int:
    """Parse ``10``, ``10s``, ``500ms``, ``5m``, ``1h`` (a bare number is in ``default_unit``) to µs."""
    if isinstance(text, (int, float)):
        return round(float(text) * MICROS[default_unit])
    match = _DURATION.match(str(text))
    if not match:
        raise InputError(f"cannot read duration {text!r}: use a number with an optional unit, e.g. 10, 10s, 500ms, 5m, 1h")
    number, unit = match.groups()
    return round(float(number) * MICROS[unit or default_unit])


def to_unit(micros: int | float, unit: str = "s") -> float:
    """Convert µs to a number in ``unit`` (for output and plots)."""
    return micros / MICROS[unit]


def format_duration(micros: int) -> str:
    """Shortest exact spelling of a duration, the inverse of :func:`parse_duration`."""
    for unit in ("h", "m", "s", "ms"):
        if micros % MICROS[unit] == 0:
            return f"{micros // MICROS[unit]}{unit}"
    return f"{micros}us"
