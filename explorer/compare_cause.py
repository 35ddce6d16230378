"""Why a group of disagreements happens, found by counterfactual: change one setting at a time on one side to
another side's value, re-run that side, and keep the changes after which the two agree on every member of the group.

Listing the settings in which the sides differ is not an explanation: Spark, Flink and Kafka Streams differ in five
settings at once, and the one that reads likeliest (the watermark's scope) was wrong when checked (the cause was
when Spark's watermark takes effect). A re-run per candidate settles it; the kernel is fast enough that a
comparison of three presets costs a few dozen runs, each cached across groups.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from itertools import permutations
from typing import Generic, TypeVar

from explorer.config import TIME_FIELDS, RunConfig
from explorer.core import Result, run
from explorer.streams import Stream

T = TypeVar("T")
BATCHES = "batches"  # the cadence, a setting beside the TimeConfig's fields


@dataclass(frozen=True)
class Change:
    """One setting of side ``side`` set to side ``like``'s value."""

    side: str
    like: str
    setting: str  # a TimeConfig field name, or BATCHES
    before: str
    after: str

    def words(self) -> str:
        option = "--batches" if self.setting == BATCHES else "--" + _option(self.setting)
        return f"{option} {self.after} on {self.side} (as {self.like}; it is {self.before})"


def _option(name: str) -> str:
    return next(spec.option for spec in TIME_FIELDS if spec.name == name).replace("_", "-")


def _text(config: RunConfig, setting: str) -> str:
    if setting == BATCHES:
        return str(config.batches) if config.batches is not None else "event"
    spec = next(spec for spec in TIME_FIELDS if spec.name == setting)
    return spec.to_text(getattr(config.time, setting))


def _changed(config: RunConfig, like: RunConfig, setting: str) -> RunConfig:
    if setting == BATCHES:
        return replace(config, batches=like.batches)
    return config.with_time(**{setting: getattr(like.time, setting)})


def candidates(a: RunConfig, b: RunConfig) -> list[str]:
    """The settings in which ``a`` differs from ``b`` (for this window kind), cadence included."""
    kind = a.window.kind.value
    out = [spec.name for spec in TIME_FIELDS
           if kind in spec.windows and getattr(a.time, spec.name) != getattr(b.time, spec.name)]
    if a.batches != b.batches:
        out.append(BATCHES)
    return out


@dataclass
class Counterfactuals(Generic[T]):
    """Re-runs of one side with one setting changed, each kept as ``summarize`` makes it (not the whole Result:
    three presets make a few dozen re-runs), all made once, on every core: every group asks about the same few."""

    stream: Stream
    results: dict[str, Result]
    summarize: Callable[[Result], T]
    runs: dict[tuple[str, str, str], T] = field(default_factory=dict)

    def _changes(self) -> list[tuple[str, str, str]]:
        """(side, like, setting) for every distinct change: one per (side, setting, value)."""
        out, seen = [], set()
        for side, like in permutations(self.results, 2):
            a, b = self.results[side].config, self.results[like].config
            for setting in candidates(a, b):
                value = (side, setting, _text(b, setting))
                if value not in seen:
                    seen.add(value)
                    out.append((side, like, setting))
        return out

    def _run_all(self) -> None:
        def one(change: tuple[str, str, str]) -> T:
            side, like, setting = change
            config = _changed(self.results[side].config, self.results[like].config, setting)
            return self.summarize(run(self.stream, config))

        changes = [c for c in self._changes() if self._key(*c) not in self.runs]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # the kernel releases the GIL
            for change, summary in zip(changes, pool.map(one, changes)):
                self.runs[self._key(*change)] = summary

    def _key(self, side: str, like: str, setting: str) -> tuple[str, str, str]:
        return side, setting, _text(self.results[like].config, setting)  # two sides may share the value

    def single_changes(self, narrows: Callable[[T, str], bool]) -> list[Change]:
        """Every change of one setting on one side, to another side's value, after which ``narrows(rerun, side)``
        holds: with that side re-run, the sides split into fewer outcomes on every member of the group (two
        sides: they agree)."""
        self._run_all()
        out: list[Change] = []
        labels = list(self.results)
        for side in labels:
            for like in labels:
                if like == side:
                    continue
                a, b = self.results[side].config, self.results[like].config
                for setting in candidates(a, b):
                    after = _text(b, setting)
                    if any((c.side, c.setting, c.after) == (side, setting, after) for c in out):
                        continue  # found already, as another side has the same value
                    if narrows(self.runs[self._key(side, like, setting)], side):
                        out.append(Change(side, like, setting, _text(a, setting), after))
        return out
