"""Several engines' rules over the same stream, and exactly where they disagree.

A side is a preset, optionally with overrides (``voltsp:strategy=max``), so "MIN vs MAX" and "Flink vs
Bytewax" are the same question. A window disagrees when a side never emits it, first emits it in another
batch or with other events, or ends with other contents; an event disagrees when its status differs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from explorer.config import FIELD_BY_OPTION, BatchSpec, RunConfig, WindowSpec, apply_delay, preset, time_option
from explorer.core import Result, run
from explorer.errors import InputError
from explorer.streams import Stream
from explorer.timeutil import parse_duration

@dataclass
class Disagreement:
    """One window or event the sides see differently; ``seen`` says what each side did with it."""

    kind: str  # "window" or "event"
    key: str
    start: int | None  # window span (µs), or the event's time
    end: int | None
    event_id: str | None
    seen: dict[str, str]

    def to_dict(self, unit: float) -> dict[str, Any]:
        if self.kind == "window":
            return {"kind": "window", "key": self.key, "window": [self.start / unit, self.end / unit],
                    "seen": self.seen}
        return {"kind": "event", "key": self.key, "event": self.event_id, "event_time": self.start / unit,
                "seen": self.seen}


@dataclass
class Comparison:
    results: dict[str, Result]
    disagreements: list[Disagreement]


def side_config(label: str, window: WindowSpec | None = None, delay: int | None = None,
                batches: BatchSpec | None = None) -> RunConfig:
    """``flink`` or ``voltsp:strategy=max:delay=5`` → a RunConfig; shared window/delay/batches apply to all."""
    name, *overrides = label.split(":")
    config = preset(name.strip())
    if window is not None:
        config = replace(config, window=window)
    if batches is not None:
        config = replace(config, batches=batches)
    if delay is not None:
        config = apply_delay(config, delay)
    for item in overrides:
        field, _, value = item.partition("=")
        field = field.strip().replace("-", "_")
        if field in FIELD_BY_OPTION and field != "delay":
            try:
                field_name, parsed = time_option(field, value)
            except InputError as error:
                raise InputError(f"{label}: {error}") from None
            config = config.with_time(**{field_name: parsed})
        elif field == "delay":
            config = apply_delay(config, parse_duration(value))
        elif field == "window":
            config = replace(config, window=WindowSpec.parse(value))
        else:
            raise InputError(f"{label}: unknown override {field!r}; use strategy, scope, delay, bound, "
                             "allowed_lateness, idle_timeout, late, lateness_rule, window, …")
    return config


def compare(stream: Stream, sides: dict[str, RunConfig]) -> Comparison:
    if len(sides) < 2:
        raise InputError("compare needs at least two presets")
    results = {label: run(stream, config) for label, config in sides.items()}
    return Comparison(results, _window_disagreements(results) + _event_disagreements(stream, results))


def _window_view(result: Result) -> dict[tuple, str]:
    """(key, start, end) → 'batch N: ids' of its first emission, plus its final contents if they changed."""
    view: dict[tuple, str] = {}
    for (key, start, end), emissions in result.windows.groupby(["key", "start", "end"], sort=False):
        first, last = emissions.iloc[0], emissions.iloc[-1]
        text = f"{first['reason'].lower()} in batch {int(first['emit_batch'])}: {', '.join(sorted(first['ids']))}"
        if len(emissions) > 1 and set(last["ids"]) != set(first["ids"]):
            text += f" → updated to {', '.join(sorted(last['ids']))}"
        view[(key, int(start), int(end))] = text
    return view


def _window_disagreements(results: dict[str, Result]) -> list[Disagreement]:
    views = {label: _window_view(result) for label, result in results.items()}
    spans = sorted(set().union(*views.values()))
    out = []
    for span in spans:
        seen = {label: view.get(span, "never emitted") for label, view in views.items()}
        if len(set(seen.values())) > 1:
            out.append(Disagreement("window", span[0], span[1], span[2], None, seen))
    return out


def _event_disagreements(stream: Stream, results: dict[str, Result]) -> list[Disagreement]:
    statuses = pd.DataFrame({label: r.events["status"].to_numpy() for label, r in results.items()})
    differs = statuses.nunique(axis=1) > 1
    ev = stream.events
    return [Disagreement("event", ev["key"].iat[i], int(ev["event_time"].iat[i]), None, ev["id"].iat[i],
                         {label: statuses[label].iat[i].replace("_", " ") for label in results})
            for i in differs[differs].index]
