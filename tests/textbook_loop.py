"""003's rule as a plain per-arrival loop, stated independently of the engines.

It is the baseline of ``benchmarks/bench_core.py`` (how much faster the vectorised engine is) and the
oracle of ``tests/test_textbook.py`` (the engines agree with it on any seed, size and delay). It lives with
the tests, not in the package: no user-facing code runs it.
"""

from __future__ import annotations

from collections.abc import Iterable


def textbook_loop(pairs: Iterable[tuple[float, float]], width: float, bound: float) -> tuple[float, int, float]:
    """(completeness, dropped, mean emit latency) for (event_time, arrival_time) pairs in arrival order:
    T = max seen − L per arrival; an event whose window end ≤ T is dropped; each window whose end ≤ T
    closes, with latency max seen − end."""
    counts: dict[float, int] = {}
    closed: set[float] = set()
    lags: list[float] = []
    newest, dropped, total = float("-inf"), 0, 0
    for t, _ in pairs:
        total += 1
        newest = max(newest, t)
        mark = newest - bound
        start = (t // width) * width
        if start + width <= mark:
            dropped += 1
            continue
        counts[start] = counts.get(start, 0) + 1
        for s in [s for s in counts if s + width <= mark and s not in closed]:
            closed.add(s)
            lags.append(newest - (s + width))
    return sum(counts.values()) / total, dropped, sum(lags) / max(len(lags), 1)
