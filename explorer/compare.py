"""Several engines' rules over the same stream, and exactly where they disagree.

A side is a preset, optionally with overrides (``voltsp:strategy=max``), so "MIN vs MAX" and "Flink vs
Bytewax" are the same question. A window disagrees when a side never emits it, leaves it open at the end of
input, first emits it with other events or at another time, or ends with other contents; an event disagrees
when its status differs. Emissions are compared by time on the arrival clock, never by batch number: engines
batch differently.

Disagreements come in groups of one kind (``group_disagreements``): a thousand of them are usually two or
three rules, each worth one sentence and a few examples.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from explorer.compare_cause import Counterfactuals
from explorer.config import ENGINE_WORDS, FIELD_BY_OPTION, BatchSpec, RunConfig, WindowSpec, apply_delay, preset, time_option
from explorer.core import Result, run
from explorer.errors import InputError
from explorer.streams import Stream
from explorer.timeutil import format_instant, human_duration, parse_duration

EXAMPLES_PER_GROUP = 10  # kept per group; the CLI lists --limit of them, the explorer all
IDS_SHOWN = 6
CAUSES_SHOWN = 3

@dataclass
class Disagreement:
    """One window or event the sides see differently; ``seen`` says what each side did with it."""

    kind: str  # "window" or "event"
    key: str
    start: int  # window span (µs), or the event's time
    end: int | None  # None for an event
    event_id: str | None
    seen: dict[str, str]
    pattern: tuple[str, ...] = ()  # per side, what it did in a word or two: the group this belongs to
    emitted_at: tuple[int | None, ...] = ()  # per side, a window's first emission time (µs, arrival clock)
    row: int | None = None  # an event's row in the stream

    def to_dict(self, unit: float) -> dict[str, Any]:
        if self.kind == "window":
            end = None if self.end is None else self.end / unit
            return {"kind": "window", "key": self.key, "window": [self.start / unit, end],
                    "seen": self.seen}
        return {"kind": "event", "key": self.key, "event": self.event_id, "event_time": self.start / unit,
                "seen": self.seen}


@dataclass(frozen=True)
class DisagreementGroup:
    """Disagreements of one kind: what each side did, how many times, why in one line, the setting that settles
    them (``cause``), and a few examples."""

    kind: str
    pattern: dict[str, str]
    count: int
    reason: str
    cause: str
    examples: tuple[Disagreement, ...]

    @property
    def why(self) -> str:
        return f"{self.reason}. {self.cause}"

    @property
    def title(self) -> str:
        what = "; ".join(f"{label}: {seen}" for label, seen in self.pattern.items())
        return f"{self.count:,} {self.kind}{'s' if self.count != 1 else ''} — {what}"

    def to_dict(self, unit: float) -> dict[str, Any]:
        return {"kind": self.kind, "count": self.count, "pattern": self.pattern, "why": self.reason, "cause": self.cause,
                "examples": [d.to_dict(unit) for d in self.examples]}


class Outcome(NamedTuple):
    """What a side did, as a group's cause is judged: each event's status, and each window's emission."""

    status: np.ndarray
    windows: dict[tuple[str, int, int], _Emitted]

    @staticmethod
    def of(result: Result) -> Outcome:
        return Outcome(result.events["status"].to_numpy(), _window_view(result))


@dataclass
class Comparison:
    results: dict[str, Result]
    disagreements: list[Disagreement]
    stream: Stream
    outcomes: dict[str, Outcome]  # each side's statuses and windows, as the disagreements and their causes read them

    @cached_property
    def counterfactuals(self) -> Counterfactuals[Outcome]:
        return Counterfactuals(self.stream, self.results, Outcome.of)

    @cached_property
    def groups(self) -> list[DisagreementGroup]:
        return group_disagreements(self)


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
        if (field in FIELD_BY_OPTION or field in ENGINE_WORDS) and field != "delay":
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
    outcomes = {label: Outcome.of(result) for label, result in results.items()}
    disagreements = _window_disagreements(outcomes, next(iter(results.values())).absolute)
    return Comparison(results, disagreements + _event_disagreements(stream, results), stream, outcomes)


@dataclass(frozen=True)
class _Emitted:
    """A window as one side emitted it: when first, why, with which events, and what it ended with."""

    reason: str
    time: int
    first: frozenset[str]
    last: frozenset[str]


def _window_view(result: Result) -> dict[tuple[str, int, int], _Emitted]:
    """Each window's first emission and its last contents, in one pass over the emissions (the table is in
    emission order): a pandas group per window cost 0.15 s on 1,000 windows, and compare's causes make a view
    per re-run."""
    w = result.windows
    first: dict[tuple[str, int, int], tuple[str, int, Any]] = {}
    last: dict[tuple[str, int, int], Any] = {}
    for key, start, end, reason, at, ids in zip(w["key"].tolist(), w["start"].tolist(), w["end"].tolist(),
                                                w["reason"].tolist(), w["emit_time"].tolist(), w["ids"].tolist()):
        span = (key, int(start), int(end))
        if span not in first:
            first[span] = (reason, int(at), ids)
        last[span] = ids
    return {span: _Emitted(reason, at, frozenset(ids), frozenset(last[span]))
            for span, (reason, at, ids) in first.items()}


def _window_disagreements(outcomes: dict[str, Outcome], absolute: bool) -> list[Disagreement]:
    views = {label: outcome.windows for label, outcome in outcomes.items()}
    out = []
    for span in sorted(set().union(*views.values())):
        found = {label: view.get(span) for label, view in views.items()}
        pattern = _window_pattern(found)
        if len(set(pattern)) > 1:
            seen = {label: _describe_emission(e, absolute) for label, e in found.items()}
            times = tuple(None if e is None else e.time for e in found.values())
            out.append(Disagreement("window", span[0], span[1], span[2], None, seen, pattern, times))
    return out


def _window_pattern(found: dict[str, _Emitted | None]) -> tuple[str, ...]:
    """Per side, a word for what it did with the window; sides that emitted it are told apart by contents
    first, then by time (the earliest is 'first', the others 'later')."""
    emitted = [e for e in found.values() if e is not None and e.reason != "END_OF_STREAM"]
    contents = {(e.first, e.last) for e in emitted}
    most = max(contents, key=lambda c: len(c[1]), default=None)
    earliest = min((e.time for e in emitted), default=None)
    words = []
    for e in found.values():
        if e is None:
            words.append("never emitted")
        elif e.reason == "END_OF_STREAM":
            words.append("still open at the end")
        elif len(contents) > 1:
            words.append("most events" if (e.first, e.last) == most else "other events")
        else:
            words.append("emitted first" if e.time == earliest else "emitted later")
    return tuple(words)


def _describe_emission(e: _Emitted | None, absolute: bool) -> str:
    if e is None:
        return "never emitted"
    ids = sorted(e.first)
    shown = ", ".join(ids[:IDS_SHOWN]) + (f" … {len(ids) - IDS_SHOWN} more" if len(ids) > IDS_SHOWN else "")
    if e.reason == "END_OF_STREAM":
        return f"still open at the end: {shown}"
    text = f"{e.reason.lower().replace('_', ' ')} at {format_instant(e.time, absolute)}: {shown}"
    if e.last != e.first:
        text += f" → updated to {len(e.last)} event{'' if len(e.last) == 1 else 's'}"
    return text


def _event_disagreements(stream: Stream, results: dict[str, Result]) -> list[Disagreement]:
    columns = {label: r.events["status"].to_numpy() for label, r in results.items()}
    statuses = pd.DataFrame(columns)
    differs = statuses.nunique(axis=1) > 1
    ev = stream.events
    keys, times, ids = ev["key"].to_numpy(), ev["event_time"].to_numpy(), ev["id"].to_numpy()
    out = []
    for i in np.flatnonzero(differs.to_numpy()):
        seen = {label: str(columns[label][i]).replace("_", " ") for label in results}
        out.append(Disagreement("event", keys[i], int(times[i]), None, ids[i], seen, tuple(seen.values()), row=int(i)))
    return out


def group_disagreements(comparison: Comparison) -> list[DisagreementGroup]:
    """Disagreements grouped by what each side did, largest group first, each with the reason in one line."""
    labels = list(comparison.results)
    members: dict[tuple[str, tuple[str, ...]], list[Disagreement]] = {}
    for d in comparison.disagreements:
        members.setdefault((d.kind, d.pattern), []).append(d)
    groups = [DisagreementGroup(kind, dict(zip(labels, pattern)), len(found),
                                _why(kind, dict(zip(labels, pattern)), found), _cause(comparison, kind, found),
                                tuple(found[:EXAMPLES_PER_GROUP]))
              for (kind, pattern), found in members.items()]
    return sorted(groups, key=lambda g: (-g.count, g.kind, g.title))


def _sides(pattern: dict[str, str], *words: str) -> str:
    return " and ".join(label for label, seen in pattern.items() if seen in words)


def _verb(pattern: dict[str, str], words: tuple[str, ...], one: str, many: str) -> str:
    """'spark drops' but 'flink and voltsp keep'."""
    return one if sum(seen in words for seen in pattern.values()) == 1 else many


REFUSED, TAKEN = ("side output", "dropped"), ("on time", "late updated")


def _why(kind: str, pattern: dict[str, str], found: list[Disagreement]) -> str:
    """One plain sentence for the rule behind a group."""
    seen = set(pattern.values())
    drop, keep = ("dropped",), ("side output",)
    if kind == "event" and seen == set(REFUSED):
        why = (f"the same late events are refused by every side; {_sides(pattern, *drop)} "
               f"{_verb(pattern, drop, 'drops', 'drop')} them where {_sides(pattern, *keep)} "
               f"{_verb(pattern, keep, 'keeps', 'keep')} them in a side output")
    elif kind == "event" and seen & set(REFUSED) and seen & set(TAKEN):
        why = (f"{_sides(pattern, *REFUSED)} {_verb(pattern, REFUSED, 'refuses', 'refuse')} events that "
               f"{_sides(pattern, *TAKEN)} {_verb(pattern, TAKEN, 'takes', 'take')}: the refusing side's watermark had "
               "passed the window (or the event's time) when the event arrived")
    elif kind == "event":
        why = (f"{_sides(pattern, 'late updated')} {_verb(pattern, ('late updated',), 'takes', 'take')} these late "
               "events within the allowed lateness; the others had them on time")
    elif "never emitted" in seen:
        why = (f"{_sides(pattern, 'never emitted')} {_verb(pattern, ('never emitted',), 'never opens', 'never open')} "
               "these windows: every event of theirs was refused there (or, for sessions, merged into another window)")
    elif "still open at the end" in seen:
        words = ("still open at the end",)
        why = (f"{_sides(pattern, *words)} {_verb(pattern, words, 'still holds', 'still hold')} these windows open "
               "when the input runs out: the watermark never passed their end (no idle timeout, or no flush at the "
               "end of input)")
    elif "other events" in seen:
        why = "the windows hold other events: some sides refused (or had not yet received) events the others counted"
    else:
        words = ("emitted later",)
        why = (f"{_sides(pattern, *words)} {_verb(pattern, words, 'emits', 'emit')} the same contents later, by "
               f"{_median_lag(found)} at the median: the watermark passes the end later")
    return why


def _median_lag(found: list[Disagreement]) -> str:
    """The median, over a group's windows, of how much later the last side emitted than the first."""
    lags = [max(t for t in d.emitted_at if t is not None) - min(t for t in d.emitted_at if t is not None)
            for d in found]
    return human_duration(int(np.median(lags)))


def _narrows(comparison: Comparison, kind: str, found: list[Disagreement]) -> Callable[[Outcome, str], bool]:
    """Whether, with ``side`` re-run, the sides split into fewer outcomes on every member of the group than they
    do now. A change on a side that already agrees with another cannot pass by keeping that agreement."""
    outcomes = comparison.outcomes
    if kind == "event":
        rows = [d.row for d in found if d.row is not None]
        seen = {status.replace(" ", "_") for d in found[:1] for status in d.seen.values()}
        # a group of taken against refused events is about that split, not about where refused events go
        split = bool(seen & {"on_time", "late_updated"}) and bool(seen & {"side_output", "dropped"})

        def outcome(status: np.ndarray) -> np.ndarray:
            return np.isin(status[rows], ["on_time", "late_updated"]) if split else status[rows]

        labels = list(outcomes)
        before = np.stack([outcome(outcomes[label].status) for label in labels], axis=1)
        split_before = _distinct_per_row(before)

        def fewer_outcomes_of_events(rerun: Outcome, side: str) -> bool:
            after = before.copy()
            after[:, labels.index(side)] = outcome(rerun.status)
            return bool((_distinct_per_row(after) < split_before).all())
        return fewer_outcomes_of_events
    views = {label: outcome.windows for label, outcome in outcomes.items()}

    def ways(now: dict[str, dict[tuple[str, int, int], _Emitted]], span: tuple[str, int, int]) -> int:
        return len(set(_window_pattern({label: view.get(span) for label, view in now.items()})))

    ways_before = {(d.key, d.start, d.end): ways(views, (d.key, d.start, d.end)) for d in found if d.end is not None}

    def fewer_outcomes(rerun: Outcome, side: str) -> bool:
        now = dict(views, **{side: rerun.windows})
        return all(ways(now, span) < before for span, before in ways_before.items())
    return fewer_outcomes


def _distinct_per_row(table: np.ndarray) -> np.ndarray:
    """How many different values each row holds (sorted, then counted where a value changes): pandas'
    ``nunique(axis=1)`` runs a Python function per row, 11 s for the causes of one compare of 20,000 events."""
    ordered = np.sort(table, axis=1)
    distinct: np.ndarray = 1 + (ordered[:, 1:] != ordered[:, :-1]).sum(axis=1)
    return distinct


def _cause(comparison: Comparison, kind: str, found: list[Disagreement]) -> str:
    """The setting that removes the group, found by changing one at a time on one side (:mod:`compare_cause`)."""
    changes = comparison.counterfactuals.single_changes(_narrows(comparison, kind, found))
    if changes:
        shown = "; or ".join(c.words() for c in changes[:CAUSES_SHOWN])
        more = f" (and {len(changes) - CAUSES_SHOWN} other single changes)" if len(changes) > CAUSES_SHOWN else ""
        return f"One setting changed on one side settles them all: {shown}{more}"
    return "No one setting changed on one side settles them all: they come from several settings together"
