"""Completeness–latency curves: one row per delay, as 003's Output 9.4.1 reports them."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable

import numpy as np

from explorer.budget import check_sweep
from explorer.config import RunConfig, apply_delay
from explorer.core import Metrics, kstreams_sliding, run_metrics
from explorer.errors import InputError
from explorer.streams import Stream
from explorer.timeutil import MICROS, exact_duration, exact_seconds


@dataclass
class CurveRow:
    """``dropped`` counts every event a window refused (dropped or sent to the side output), as 003 does;
    ``side_output`` says how many of those were kept. Latencies are in seconds."""

    delay: float
    completeness: float
    completeness_live: float  # only windows emitted while the input runs (Metrics.completeness_live)
    open_at_end: int  # windows the watermark never closed before the input ended
    dropped: int
    side_output: int
    late_updated: int
    avg_emit_latency: float | None
    p95_latency: float | None
    processing_latency: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def in_micros(self) -> dict[str, Any]:
        """The row with each column named by its unit, every duration in µs: ``delay_us`` (an integer),
        ``avg_emit_latency_us`` … (a mean may have a fraction of a µs: kept to the ns)."""
        return {"delay_us": round(self.delay * MICROS["s"]), "completeness": self.completeness,
                "completeness_live": self.completeness_live, "open_at_end": self.open_at_end,
                "dropped": self.dropped, "side_output": self.side_output, "late_updated": self.late_updated,
                **{f"{name}_us": _us(getattr(self, name))
                   for name in ("avg_emit_latency", "p95_latency", "processing_latency")}}


def _us(seconds: float | None) -> float | int | None:
    return None if seconds is None else _plain(round(seconds * MICROS["s"], 3))


CURVE_POINTS = 21


def default_delays(stream: Stream, config: RunConfig, points: int = CURVE_POINTS) -> list[int]:
    """The delays ``curve`` sweeps when none are given (µs): ``points`` from 0 to the p99.9 of arrival − event
    time, rounded up to two significant digits so that the steps are round (0, 1.2 s, 2.4 s … 24 s for a
    p99.9 of 23.46 s). A stream without arrival lateness sweeps 0 to its window's size (or gap)."""
    ev = stream.events
    late = (ev["arrival_time"] - ev["event_time"]).to_numpy(dtype=np.int64) if len(ev) else np.zeros(1, np.int64)
    top = int(np.ceil(np.percentile(late, 99.9)))
    if top <= 0:
        top = max(config.window.size, config.window.gap, MICROS["s"])
    top = two_digits_up(top)
    step = -(-top // (points - 1))
    return [i * step for i in range(points)]


def two_digits_up(micros: int) -> int:
    """``micros`` rounded up to two significant digits, so that a grid's steps from 0 to it are round."""
    scale = 10 ** max(len(str(micros)) - 2, 0)
    rounded: int = -(-micros // scale) * scale
    return rounded


def delay_bounds(stream: Stream, config: RunConfig) -> tuple[int, int]:
    """Where a search for a delay starts its upper end (the largest arrival − event time, at least 1 s), and the
    stream's whole span (plus a window), past which no delay changes what closes."""
    ev = stream.events
    times = np.concatenate([ev["event_time"].to_numpy(), ev["arrival_time"].to_numpy()])
    span = int(times.max() - times.min()) + max(config.window.size, config.window.gap) + 1
    return max(int((ev["arrival_time"] - ev["event_time"]).max()), MICROS["s"]), span


def curve_row(delay: int, m: Metrics) -> CurveRow:
    return CurveRow(
        delay=_plain(delay / MICROS["s"]),
        completeness=m.completeness,
        completeness_live=m.completeness_live,
        open_at_end=m.end_of_stream,
        dropped=m.dropped + m.side_output,
        side_output=m.side_output,
        late_updated=m.late_updated,
        avg_emit_latency=m.latency_event.mean,
        p95_latency=m.latency_event.p95,
        processing_latency=m.latency_processing.mean,
    )


class SweepStopped(Exception):
    """The caller's ``stop`` said the sweep is no longer wanted."""


def curve(stream: Stream, config: RunConfig, delays: Iterable[int], workers: int | None = None,
          stop: Callable[[], bool] | None = None) -> list[CurveRow]:
    """Evaluate ``config`` once per delay (read in the preset's arithmetic), on ``workers`` threads (default:
    one per core; the compiled core releases the GIL while it runs). ``stop`` is asked before each evaluation;
    once it says yes the sweep raises SweepStopped (a 1M-event sweep takes ~10 s of both cores)."""
    delays = list(delays)
    return [curve_row(delay, m) for delay, m in zip(delays, sweep(stream, config, delays, workers, stop))]


def sweep(stream: Stream, config: RunConfig, delays: list[int], workers: int | None = None,
          stop: Callable[[], bool] | None = None) -> list[Metrics]:
    """The metrics at each delay: the evaluations ``curve`` (and ``tune --completeness live``) make."""
    if not delays:
        return []
    configs = [apply_delay(config, delay) for delay in delays]
    workers = workers or os.cpu_count() or 1
    check_sweep(len(stream), configs, workers, kstreams_sliding.joins(stream, config))

    def evaluate(c: RunConfig) -> Metrics:
        if stop is not None and stop():
            raise SweepStopped
        return run_metrics(stream, c)

    first = evaluate(configs[0])  # computes what the stream caches (codes, batches, window ids) once
    with ThreadPoolExecutor(max_workers=workers) as pool:
        rest = list(pool.map(evaluate, configs[1:]))
    return [first, *rest]


def format_curve_table(rows: list[CurveRow]) -> str:
    """The curve as 003's Output 9.4.1 prints it: delays exact, in seconds; latencies in seconds to the
    nearest hundredth (the header says so). Then what 003 does not print: the completeness a live job gets
    (windows the end of input flushes left out) and how many windows only that flush emits."""
    lines = [f"{'delay (s)':>9} | {'completeness':>12} | {'dropped':>8} | {'avg emit latency':>16} | "
             f"{'p95 latency':>11} | {'processing latency':>18} | {'while running':>13} | {'open at end':>11}"
             "   (latencies in s, to the nearest 0.01)"]
    lines.append("-" * len(lines[0]))
    for r in rows:
        lines.append(f"{exact_seconds(round(r.delay * MICROS['s'])):>9} | {r.completeness:>11.2%} | {r.dropped:>8} | "
                     f"{_fmt(r.avg_emit_latency):>16} | {_fmt(r.p95_latency):>11} | {_fmt(r.processing_latency):>18} | "
                     f"{r.completeness_live:>12.2%} | {r.open_at_end:>11}")
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _plain(value: float) -> float | int:
    return int(value) if value == int(value) else value


@dataclass
class Tuning:
    """The smallest delay (in the preset's arithmetic) whose completeness reaches ``target``: ``below`` is the
    completeness 1 µs less, which misses it. ``reached`` is False when no delay does (then ``delay`` is the
    largest tried, with the best completeness seen)."""

    target: float
    reached: bool
    delay: int  # µs
    completeness: float
    below: float | None
    metrics: Metrics
    evaluations: int

    def to_dict(self) -> dict[str, Any]:
        m = self.metrics
        return {"target": self.target, "reached": self.reached, "delay": self.delay / MICROS["s"],
                "delay_us": self.delay, "delay_exact": exact_duration(self.delay),
                "completeness": self.completeness, "completeness_1us_less": self.below,
                "avg_emit_latency": m.latency_event.mean, "p95_emit_latency": m.latency_event.p95,
                "processing_latency": m.latency_processing.mean, "dropped": m.dropped + m.side_output,
                "evaluations": self.evaluations}


def tune(stream: Stream, config: RunConfig, target: float) -> Tuning:
    """Bisect the delay, in whole µs, for the smallest one whose completeness reaches ``target``.

    Completeness does not fall as the delay grows: a later effective watermark closes no window sooner. (Except
    under Bytewax's forgotten clock, ``forget_clock_when_empty``: a smaller delay can close all of a key's
    windows, so the key forgets its watermark and takes a straggler a larger delay drops. The delay found then
    reaches the target but may not be the smallest: README, "Tune".) The
    upper end starts at the largest arrival − event time and doubles until the target is met, or until it
    passes the stream's whole span (then nothing the delay can do reaches it: an idle timeout or processing
    time decides, or the target is above what the late events allow)."""
    if not 0 < target <= 1:
        raise InputError(f"the completeness target is a fraction in (0, 1], not {target!r}")
    check_sweep(len(stream), [config], 1, kstreams_sliding.joins(stream, config))
    evaluations = 0

    def at(delay: int) -> Metrics:
        nonlocal evaluations
        evaluations += 1
        return run_metrics(stream, apply_delay(config, delay))

    start = at(0)
    if start.completeness >= target:
        return Tuning(target, True, 0, start.completeness, None, start, evaluations)
    hi, span = delay_bounds(stream, config)
    best = at(hi)
    while best.completeness < target and hi < span:
        hi = min(2 * hi, span)
        best = at(hi)
    if best.completeness < target:
        return Tuning(target, False, hi, best.completeness, None, best, evaluations)
    lo, below = 0, start  # completeness at lo misses, at hi reaches
    while hi - lo > 1:
        middle = (lo + hi) // 2
        m = at(middle)
        if m.completeness >= target:
            hi, best = middle, m
        else:
            lo, below = middle, m
    return Tuning(target, True, hi, best.completeness, below.completeness, best, evaluations)


COUNTS = ("final", "live")  # which completeness tune's target is for: Metrics.completeness, or completeness_live


@dataclass
class LiveTuning(Tuning):
    """``tune --completeness live``: the smallest delay found whose live completeness (windows only the end of
    input closes left out) reaches ``target``. Not exact as ``tune`` is: live completeness is not monotone in the
    delay, so the search evaluates a grid (``grid``: its delays, µs), takes the first point that reaches the
    target and refines the step before it (``bracket``: those two grid points) with grids of as many points,
    down to 1 µs. ``completeness`` and ``below`` are live completeness; when nothing reaches the target,
    ``delay`` is where the best live completeness was seen."""

    grid: tuple[int, ...] = ()
    bracket: tuple[int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "completeness_counted": "live", "completeness_final": self.metrics.completeness,
                "open_at_end": self.metrics.end_of_stream, "monotone": False, "grid_points": len(self.grid),
                "grid_us": list(self.grid), "refined_between_us": list(self.bracket) if self.bracket else None,
                "precision_us": 1}


def tune_live(stream: Stream, config: RunConfig, target: float, points: int = CURVE_POINTS,
              workers: int | None = None) -> LiveTuning:
    """The smallest delay found on a grid whose live completeness reaches ``target``.

    Live completeness leaves out the windows only the end of input closes, and a larger delay leaves more of them
    open, so it can rise and then fall as the delay grows: bisection would take any crossing (or none). Instead:
    ``points`` delays from 0 to the top (below), evaluated as ``curve`` evaluates them; the first that reaches
    the target, and the step before it searched again on a grid of ``points``, and so on until the step is 1 µs
    (so 1 µs less misses). A narrower peak between two grid points can be missed: the answer is the smallest
    found, and says so. The top is the largest arrival − event time, rounded up as the curve's delays are, and
    doubled (up to the stream's span, as ``tune`` does) while completeness itself misses the target there: live
    completeness is never above it, and it does not fall as the delay grows, so no delay below such a top can
    reach the target."""
    if not 0 < target <= 1:
        raise InputError(f"the completeness target is a fraction in (0, 1], not {target!r}")
    if not 2 <= points <= 1000:
        raise InputError(f"the live search's grid has 2 to 1,000 points, not {points}")
    seen: dict[int, Metrics] = {}

    def at(delays: list[int]) -> list[Metrics]:
        fresh = [d for d in dict.fromkeys(delays) if d not in seen]
        seen.update(zip(fresh, sweep(stream, config, fresh, workers)))
        return [seen[d] for d in delays]

    if at([0])[0].completeness_live >= target:  # nothing is smaller
        return LiveTuning(target, True, 0, seen[0].completeness_live, None, seen[0], len(seen), (0,))
    top, span = delay_bounds(stream, config)
    top = two_digits_up(top)
    while at([top])[0].completeness < target and top < span:  # below it nothing can reach the target live
        top = min(2 * top, span)
    grid = sorted({top * i // (points - 1) for i in range(points)})
    found = _first_reaching(grid, at(grid), target)
    if found is None:
        best = max(seen, key=lambda d: (seen[d].completeness_live, -d))  # the grid's points, and the tops tried
        return LiveTuning(target, False, best, seen[best].completeness_live, None, seen[best], len(seen), tuple(grid))
    lo, hi = grid[grid.index(found) - 1], found  # lo misses, hi reaches
    bracket = (lo, hi)
    steps = max(points - 1, 2)  # each step ≥ 2 µs wide gets a point strictly inside it, so the search ends
    while hi - lo > 1:
        inner = sorted({lo + (hi - lo) * i // steps for i in range(1, steps)})
        first = _first_reaching(inner, at(inner), target)
        if first is None:
            lo = inner[-1]
        else:
            lo, hi = ([lo] + inner)[inner.index(first)], first
    return LiveTuning(target, True, hi, seen[hi].completeness_live, seen[lo].completeness_live, seen[hi], len(seen),
                      tuple(grid), bracket)


def _first_reaching(delays: list[int], metrics: list[Metrics], target: float) -> int | None:
    return next((d for d, m in zip(delays, metrics) if m.completeness_live >= target), None)


SECOND_KNOBS = {"allowed-lateness": "allowed_lateness", "idle-timeout": "idle_timeout"}
FRONTIER_STEPS = 8


@dataclass(frozen=True)
class FrontierPoint:
    """A second knob's value, the smallest delay that reaches the target beside it, and what that costs: the
    first emissions' latency (what a dashboard waits for) and the revisions late events cause."""

    second: int  # µs; 0 is off
    tuning: Tuning

    @property
    def latency(self) -> float | None:
        return self.tuning.metrics.latency_event.mean


def frontier(stream: Stream, config: RunConfig, target: float, knob: str,
             steps: int = FRONTIER_STEPS) -> list[FrontierPoint]:
    """The delay alone reaches ``target`` at some d₀. Beside an allowed lateness A (late events re-emit their
    window) or an idle timeout I (a silent key's windows flush), a smaller delay may reach it too, and emit the
    first results sooner. For ``steps`` + 1 values of the second knob from 0 to d₀, the smallest such delay
    (``tune``, exact): the completeness–latency frontier of the two knobs together."""
    if knob not in SECOND_KNOBS:
        raise InputError(f"unknown second knob {knob!r}; use {' or '.join(SECOND_KNOBS)}")
    field = SECOND_KNOBS[knob]
    alone = tune(stream, config.with_time(**{field: None if field == "idle_timeout" else 0}), target)
    points = [FrontierPoint(0, alone)]
    top = alone.delay if alone.reached else alone.delay // 2
    for i in range(1, steps + 1):
        second = max(1, round(top * i / steps))
        points.append(FrontierPoint(second, tune(stream, config.with_time(**{field: second}), target)))
    return points


def best_point(points: list[FrontierPoint]) -> FrontierPoint | None:
    """The point that reaches the target with the lowest first-emission latency (ties: the smaller knob)."""
    reached = [p for p in points if p.tuning.reached and p.latency is not None]
    return min(reached, key=lambda p: (p.latency, p.second), default=None)
