"""Completeness–latency curves: one row per delay, as 003's Output 9.4.1 reports them."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Callable, Iterable

from explorer.config import RunConfig, apply_delay
from explorer.core import Metrics, run_metrics
from explorer.streams import Stream
from explorer.timeutil import MICROS


@dataclass
class CurveRow:
    """``dropped`` counts every event a window refused (dropped or sent to the side output), as 003 does;
    ``side_output`` says how many of those were kept. Latencies are in seconds."""

    delay: float
    completeness: float
    dropped: int
    side_output: int
    late_updated: int
    avg_emit_latency: float | None
    p95_latency: float | None
    processing_latency: float | None

    def to_dict(self) -> dict:
        return asdict(self)


def curve_row(delay: int, m: Metrics) -> CurveRow:
    return CurveRow(
        delay=_plain(delay / MICROS["s"]),
        completeness=m.completeness,
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
    if not delays:
        return []
    configs = [apply_delay(config, delay) for delay in delays]

    def evaluate(c: RunConfig) -> Metrics:
        if stop is not None and stop():
            raise SweepStopped
        return run_metrics(stream, c)

    first = evaluate(configs[0])  # computes what the stream caches (codes, batches, window ids) once
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        rest = list(pool.map(evaluate, configs[1:]))
    return [curve_row(delay, m) for delay, m in zip(delays, [first, *rest])]


def format_curve_table(rows: list[CurveRow]) -> str:
    lines = [f"{'delay':>7} | {'completeness':>12} | {'dropped':>8} | {'avg emit latency':>16} | "
             f"{'p95 latency':>11} | {'processing latency':>18}", "-" * 90]
    for r in rows:
        lines.append(f"{r.delay:>7g} | {r.completeness:>11.2%} | {r.dropped:>8} | {_fmt(r.avg_emit_latency):>16} | "
                     f"{_fmt(r.p95_latency):>11} | {_fmt(r.processing_latency):>18}")
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _plain(value: float) -> float | int:
    return int(value) if value == int(value) else value
