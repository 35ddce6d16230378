"""In-kernel speed of the explorer: a delay-slider change → Result recomputed → figures updated.

    .venv/bin/python benchmarks/bench_ui.py

Goal (issue 4): ≤ 100 ms for the 20k textbook stream, ≤ 1 s for 1M events. This measures the kernel side
(compute + figure update + widget serialisation, no browser attached); the browser test
(tests/test_browser.py, run with -s) prints keydown → plot-data-changed in a real page.
The baseline is the bare compute (``run``) of the same configurations, in the same process. Steps are timed
twice: with the Result computed in the step, and with the neighbouring frames computed ahead as the
explorer does once the page has drawn (streams up to 200k events). Last, the cost of handing one frame
computed ahead to the page (page_frames.py), which the prefetch thread pays, off the slider's path.
"""

from __future__ import annotations

import statistics
import time

from explorer import generate, preset
from explorer.core import run
from explorer.ui import Explorer
from explorer.ui.app import PREFETCH_MAX_EVENTS

S = 1_000_000


def slider_ms(explorer: Explorer, values: list[float], ahead: bool) -> float:
    """Median step time. ``ahead``: as in the browser, the neighbouring frames are computed between steps
    (the page's "frame drawn" report starts that); otherwise every step computes its Result."""
    samples = []
    for value in values:
        if ahead:
            explorer.prefetch_neighbours()
            explorer.wait_for_prefetch()
        start = time.perf_counter()
        explorer.controls.delay.value = value
        samples.append(time.perf_counter() - start)
        explorer.wait_until_settled(30)  # the full frame after the step is not part of the step
    return statistics.median(samples) * 1000


def page_frame_cost(explorer: Explorer) -> tuple[float, float]:
    """Median ms to build one light frame's message and send it to the page, and its binary size in KB."""
    sizes: list[int] = []
    send = explorer.page_frames.send

    def measured_send(content, buffers=None):
        sizes.append(sum(len(b) for b in buffers or []))
        send(content, buffers)

    explorer.page_frames.send = measured_send
    frame, samples = explorer._frame, []
    for number in range(9):
        start = time.perf_counter()
        update = explorer._clocks_update(frame.result, frame.light, None)
        explorer.page_frames.push(("benchmark", number), explorer.controls.delay, 5.0, update)
        samples.append(time.perf_counter() - start)
    explorer.page_frames.send = send
    return statistics.median(samples) * 1000, statistics.median(sizes) / 1000


def compute_ms(stream, values: list[float]) -> float:
    samples = []
    for value in values:
        start = time.perf_counter()
        run(stream, preset("textbook", delay=round(value * S)))
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    for events, goal in ((20_000, 100), (1_000_000, 1000)):
        stream = generate("textbook", events=events)
        explorer = Explorer(stream, "textbook")
        explorer.wait_for_curve(timeout=600)
        explorer.controls.delay.value = 5.0
        explorer.wait_for_curve(timeout=600)
        values = [5.5 + 0.5 * i for i in range(9)]
        cold = slider_ms(explorer, values, ahead=False)
        prefetched = events <= PREFETCH_MAX_EVENTS
        ahead = slider_ms(explorer, [v + 5 for v in values], ahead=True) if prefetched else cold
        bare = compute_ms(stream, values)
        verdict = "ok" if ahead <= goal else "OVER GOAL"
        shown = f"{ahead:7.1f} ms computed ahead" if prefetched else "not computed ahead above 200k events"
        print(f"{events:>9,} events: slider → figures updated {cold:7.1f} ms computed in the step, {shown} "
              f"(goal ≤ {goal} ms) {verdict}; bare compute {bare:6.1f} ms")
        if prefetched:
            push_ms, kb = page_frame_cost(explorer)
            print(f"{'':>9}  one frame handed to the page: {push_ms:.1f} ms on the prefetch thread, {kb:.0f} KB")


if __name__ == "__main__":
    main()
