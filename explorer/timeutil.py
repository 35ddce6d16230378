"""Durations and time units. Internally every time is an integer number of microseconds (as in Beam),
so window arithmetic is exact and the textbook's half-second grid never suffers float rounding."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_EVEN, Decimal

from explorer.errors import InputError

MICROS = {"us": 1, "ms": 1_000, "s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000}
# Far past any setting (fields cap durations at 100 years) yet exact in int64 µs: a number beyond it is refused
# here, before it can overflow a float or an int64 downstream.
MAX_MICROS = 2**62
MAX_TEXT = 200  # characters: no duration anyone writes is longer

# Every spelling of a unit the parser reads, lower case: ours (format_duration's), human_duration's (min, µs) and
# the words people write (10 minutes, 2 hours, 1 d 2 h).
UNIT_WORDS = {
    **dict.fromkeys(("us", "µs", "μs", "usec", "usecs", "micro", "micros", "microsecond", "microseconds"), "us"),
    **dict.fromkeys(("ms", "msec", "msecs", "milli", "millis", "millisecond", "milliseconds"), "ms"),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), "s"),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), "m"),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), "h"),
    **dict.fromkeys(("d", "day", "days"), "d"),
}
_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_PART = re.compile(rf"\s*({_NUMBER})\s*([^\W\d_]+)?", re.UNICODE)
_ISO = re.compile(rf"P(?:({_NUMBER})W)?(?:({_NUMBER})D)?(?:T(?:({_NUMBER})H)?(?:({_NUMBER})M)?(?:({_NUMBER})S)?)?",
                  re.IGNORECASE)
_ISO_UNITS = (7 * MICROS["d"], MICROS["d"], MICROS["h"], MICROS["m"], MICROS["s"])
_FORMS = "e.g. 90 (seconds), 1.5s, 250ms, 49m35s, 1h15m, 10 minutes, 1 d 2 h or PT49M35S"


def parse_duration(text: str | float | int, default_unit: str = "s") -> int:
    """A duration in any common spelling → µs, exactly (decimal arithmetic, half to even at the µs):
    ``90`` (a bare number is in ``default_unit``), ``1.5s``, ``250ms``, ``49m35s``, ``1h15m``, ``10 minutes``,
    ``1 d 2 h``, ISO-8601 ``PT49M35S``, and whatever :func:`format_duration`, :func:`exact_duration` and
    :func:`human_duration` print (``49 min 35 s``, ``−55 s``), so a printed duration can be pasted back.
    A leading minus gives a negative duration (the setting that reads it refuses it, naming itself); empty
    text, NaN, infinities, booleans, unknown units and magnitudes past 2⁶² µs are refused with one line."""
    if isinstance(text, bool):
        raise InputError(f"cannot read duration {text!r}: give a number with an optional unit, {_FORMS}")
    if isinstance(text, (int, float)):
        number = Decimal(text)
        if not number.is_finite():
            raise InputError(f"cannot read duration {text!r}: it is not a finite number")
        return _micros(number * MICROS[default_unit], text)
    raw = str(text)
    if len(raw) > MAX_TEXT:
        raise InputError(f"cannot read duration {raw[:40]!r}…: it is {len(raw)} characters long")
    total = _read(raw.strip().replace("−", "-").replace("\u2009", " ").replace("\u202f", " "), default_unit)
    if total is None:
        raise InputError(f"cannot read duration {raw[:40]!r}: use a number with an optional unit, {_FORMS}")
    return _micros(total, raw)


def _read(text: str, default_unit: str) -> Decimal | None:
    """The duration ``text`` spells, in µs (a Decimal, not yet rounded), or None if it spells none."""
    sign = Decimal(1)
    if text[:1] in "+-" and text:
        sign, text = Decimal(-1 if text[0] == "-" else 1), text[1:].lstrip()
    if not text:
        return None
    iso = _ISO.fullmatch(text)
    if iso:
        if not any(iso.groups()) or text.upper().endswith("T"):
            return None
        return sign * sum((Decimal(v) * unit for v, unit in zip(iso.groups(), _ISO_UNITS) if v), Decimal(0))
    parts, at = [], 0
    while at < len(text):
        match = _PART.match(text, at)
        if not match:
            return None
        parts.append((match.group(1), match.group(2)))
        at = match.end()
        while at < len(text) and text[at] in " ,":  # "1 h, 2 min"
            at += 1
    if len(parts) == 1 and parts[0][1] is None:
        return sign * Decimal(parts[0][0]) * MICROS[default_unit]
    total, last = Decimal(0), None
    for number, word in parts:
        unit = UNIT_WORDS.get((word or "").lower())
        if unit is None:  # a unit missing after the first part, or a word that is none
            return None
        if last is not None and MICROS[unit] >= MICROS[last]:  # 1h15m, not 15m1h or 5m5m
            return None
        total, last = total + Decimal(number) * MICROS[unit], unit
    return sign * total


def _micros(number: Decimal, text: object) -> int:
    shown = str(text)
    if abs(number) > MAX_MICROS:
        raise InputError(f"duration {shown[:40]}{'…' if len(shown) > 40 else ''} is too large "
                         "(durations go up to 100 years)")
    return int(number.to_integral_value(ROUND_HALF_EVEN))


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


def exact_duration(micros: int) -> str:
    """A duration spelled exactly in the largest units it fills, as people write one and as
    :func:`parse_duration` reads it back to the µs: ``49m35.001s``, ``1d2h``, ``250ms``, ``1.5ms``, ``7us``."""
    micros = int(micros)
    if micros < 0:
        return "-" + exact_duration(-micros)
    if micros == 0:
        return "0s"
    if micros < MICROS["s"]:
        if micros < MICROS["ms"]:
            return f"{micros}us"
        whole, frac = divmod(micros, MICROS["ms"])
        return f"{whole}{f'.{frac:03d}'.rstrip('0') if frac else ''}ms"
    out = ""
    for unit in ("d", "h", "m"):
        whole, micros = divmod(micros, MICROS[unit])
        if whole:
            out += f"{whole}{unit}"
    return out + (f"{exact_seconds(micros)}s" if micros else "")


def rounded_human(micros: int | float, up: bool = False) -> tuple[str, str | None]:
    """:func:`human_duration` and which way it rounds ``micros``: ``("49 min 35 s", "down")``, ``None`` when
    exact. ``up``: rounded up, never down (``49 min 36 s`` for 2,975.001 s), so that a delay printed so and
    pasted back is at least the one meant."""
    text = human_duration(micros)
    shown = parse_duration(text)
    while up and shown < micros:
        text = human_duration(shown + _last_digit(text))
        shown = parse_duration(text)
    return text, None if shown == micros else "up" if shown > micros else "down"


def human_duration_marked(micros: int | float | None, up: bool = False) -> str:
    """:func:`human_duration`, saying when it is rounded and which way: ``49 min 35 s (rounded down)``. A
    duration printed so is never taken for the exact one (pasted back, it gives the rounded value)."""
    if micros is None or micros != micros:
        return human_duration(micros)
    text, way = rounded_human(micros, up)
    return text if way is None else f"{text} (rounded {way})"


def _last_digit(text: str) -> int:
    """What one more in the last digit :func:`human_duration` printed is worth, in µs: 1 s in ``49 min 35 s``,
    0.01 s in ``2.5 s`` (three significant digits), 1 µs at the least."""
    parts = text.replace("−", "").split()
    number, unit = parts[-2], UNIT_WORDS[parts[-1]]
    if len(parts) > 2 or unit in ("m", "h", "d"):  # two parts (or the first alone): whole small units
        return MICROS[unit]
    digits = len(number.split(".")[0])
    return max(1, int(Decimal(MICROS[unit]).scaleb(digits - 3)))


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
    """A point in time, exactly: a UTC date-time for wall-clock streams (``2026-11-20 09:00:05.250``, to the µs
    when it has them), else seconds from time 0 (``12.5 s``); ``none yet`` for no watermark."""
    if micros is None or micros != micros:
        return "none yet"
    if not absolute:
        return f"{exact_seconds(round(micros))} s"
    stamp = datetime.fromtimestamp(int(micros) // 1_000_000, tz=timezone.utc).replace(microsecond=int(micros) % 1_000_000)
    text = stamp.strftime("%Y-%m-%d %H:%M:%S")
    if stamp.microsecond % 1000:  # µs that are there are printed, never cut to ms
        return text + f".{stamp.microsecond:06d}"
    return text + (f".{stamp.microsecond // 1000:03d}" if stamp.microsecond else "")


def iso_instant(micros: int | None) -> str | None:
    """µs since the Unix epoch as ISO-8601 UTC, to the µs when it has them: ``2026-11-20T09:00:05.250Z``."""
    if micros is None:
        return None
    stamp = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=int(micros))
    text = stamp.strftime("%Y-%m-%dT%H:%M:%S")
    if stamp.microsecond:
        text += f".{stamp.microsecond:06d}".rstrip("0")
    return text + "Z"
