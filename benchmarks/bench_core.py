"""Speed of the local core, printed as figures and as ratios against baselines measured in the same run.

    .venv/bin/python benchmarks/bench_core.py            # or: make bench

Goals (on the 2-core machine; the reference engine is the plain loop that is the specification): one config over the
20k textbook stream ≤ 20 ms; 003's six-row table ≤ 0.2 s; a 41-delay sweep ≤ 0.5 s; 1M events ≤ 2 s (peak memory stated).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Callable

from explorer import generate, preset
from explorer.core import run, run_metrics
from explorer.metrics import curve

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the textbook oracle lives with the tests
from textbook_loop import textbook_loop  # noqa: E402

S = 1_000_000


def timed(fn: Callable[[], object], repeat: int = 7) -> float:
    """Median wall time in seconds (one warm-up call first)."""
    fn()
    samples = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def line(label: str, seconds: float, goal: float | None = None, extra: str = "") -> None:
    verdict = "" if goal is None else ("  ok" if seconds <= goal else "  OVER GOAL")
    goal_text = "" if goal is None else f" (goal ≤ {goal * 1000:.0f} ms)"
    print(f"{label:<58} {seconds * 1000:9.1f} ms{goal_text}{verdict}{extra}")


def main() -> None:
    stream = generate("textbook")
    pairs = list(zip((stream.events["event_time"] / S).tolist(), (stream.events["arrival_time"] / S).tolist()))
    table_delays = [0, 2, 5, 10, 20, 40]
    config = preset("textbook", delay=5 * S)

    print(f"20k textbook stream ({len(stream)} events), tumbling:10")
    line("one config, full Result (compiled core)", timed(lambda: run(stream, config)), 0.020)
    line("one config, metrics only (what a sweep needs)", timed(lambda: run_metrics(stream, config)), 0.020)
    reference = timed(lambda: run(stream, config, engine="reference"), repeat=3)
    line("one config, full Result (reference engine)", reference)

    table = timed(lambda: curve(stream, preset("textbook"), [d * S for d in table_delays]))
    baseline = timed(lambda: [textbook_loop(pairs, 10, d) for d in table_delays], repeat=3)
    line("six-row table of 003 (curve)", table, 0.2)
    line("six-row table, 003's per-event loop (baseline)", baseline, extra=f"  → curve is {baseline / table:.1f}× faster")

    sweep = timed(lambda: curve(stream, preset("textbook"), [d * S for d in range(41)]), repeat=3)
    line("41-delay sweep (0…40 s)", sweep, 0.5)
    voltsp = timed(lambda: curve(stream, preset("voltsp"), [d * S for d in range(41)]), repeat=3)
    line("41-delay sweep, voltsp preset (MIN per event batch)", voltsp)

    print("\n1M events (textbook generator, --events 1000000)")
    big = generate("textbook", events=1_000_000)
    line("one config, metrics only", timed(lambda: run_metrics(big, config), repeat=3), 2.0)
    full = timed(lambda: run(big, config), repeat=3)
    tracemalloc.start()
    run(big, config)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    line("one config, full Result", full, 2.0, extra=f"  peak traced memory {peak / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
