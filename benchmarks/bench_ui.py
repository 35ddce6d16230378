"""In-kernel speed of the explorer: a slider change → Result recomputed → figures updated.

    .venv/bin/python benchmarks/bench_ui.py

Goal (issues 4 and 13): ≤ 100 ms for the 20k textbook stream, ≤ 1 s for 1M events, for the delay slider under
the textbook, spark and bytewax presets and for the idle-timeout slider. This measures the kernel side
(compute + figure update + widget serialisation, no browser attached); the browser test
(tests/test_browser.py, run with -s) prints keydown → plot-data-changed in a real page.
The baseline is the bare compute (``run``) of the same configurations, in the same process. Steps are timed
twice: with the Result computed in the step, and with the neighbouring frames computed ahead as the
explorer does once the page has drawn (wherever memory allows, ``frames_to_keep``). Last, the cost of
handing one frame computed ahead to the page (page_frames.py), which the prefetch thread pays, off the
slider's path.
"""

from __future__ import annotations

import statistics
import time

from explorer import generate
from explorer.core import run
from explorer.ui import Explorer
from explorer.ui.app import SETTLE_SECONDS, frames_to_keep
from explorer.ui.clocks import View

from bench_families import keyed_stream

S = 1_000_000


def slider_ms(explorer: Explorer, values: list[float], ahead: bool, slider: str = "delay") -> float:
    """Median step time. ``ahead``: as in the browser, the neighbouring frames are computed between steps
    (the page's "frame drawn" report starts that); otherwise every step computes its Result."""
    samples = []
    for value in values:
        if ahead:
            explorer.prefetch_neighbours()
            explorer.wait_for_prefetch()
        start = time.perf_counter()
        getattr(explorer.controls, slider).value = value
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
    frame, samples = explorer._shown.frame, []
    for number in range(9):
        start = time.perf_counter()
        update = explorer.clocks_view.update(View(explorer.stream, frame.result, frame.key, frame=frame), frame.light)
        explorer.page_frames.push(("benchmark", number), explorer.controls.delay, 5.0, update)
        samples.append(time.perf_counter() - start)
    explorer.page_frames.send = send
    return statistics.median(samples) * 1000, statistics.median(sizes) / 1000


def compute_ms(explorer: Explorer, slider: str, values: list[float]) -> float:
    samples = []
    for value in values:
        config = explorer.controls.config(**{slider: value})
        start = time.perf_counter()
        run(explorer.stream, config)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


# (preset, slider, first value, step): the delay slider of three presets, and the idle-timeout slider
CASES = [("textbook", "delay", 5.0, 0.5), ("spark", "delay", 5.0, 0.5), ("bytewax", "delay", 5.0, 0.5),
         ("voltsp", "idle", 30.0, 1.0)]


def curve_seconds(explorer: Explorer, preset_name: str) -> float:
    """From the controls resting on a preset to the explorer's curve figure holding the new sweep's 41 points."""
    explorer.controls.preset.value = preset_name
    start = time.perf_counter()
    explorer.wait_for_curve(timeout=600)
    assert len(explorer.sweep.figure.data[0].x) == 41
    return time.perf_counter() - start - SETTLE_SECONDS  # the sweep starts once the controls rest


def main() -> None:
    keyed = keyed_stream(200_000)
    explorer = Explorer(keyed, "voltsp")
    explorer.wait_for_curve(timeout=600)
    print(f"completeness curve at {len(keyed):,} events (keyed, partitioned), sweep start → curve drawn (goal ≤ 2 s):")
    for name in ("textbook", "spark", "flink", "bytewax", "storm", "voltsp"):
        seconds = curve_seconds(explorer, name)
        print(f"  {name:>8} {seconds:5.2f} s {'ok' if seconds <= 2 else 'OVER GOAL'}")
    for events, goal in ((20_000, 100), (1_000_000, 1000)):
        stream = generate("textbook", events=events)
        explorer = Explorer(stream, "textbook")
        ahead_kept = frames_to_keep(events) > 1
        print(f"{events:>9,} events ({'frames computed ahead' if ahead_kept else 'memory too short to compute ahead'})")
        for name, slider, start, step in CASES:
            explorer.controls.preset.value = name
            getattr(explorer.controls, slider).value = start
            explorer.wait_for_curve(timeout=600)
            values = [start + step * (i + 1) for i in range(9)]
            cold = slider_ms(explorer, values, ahead=False, slider=slider)
            ahead = slider_ms(explorer, [v + 10 * step for v in values], ahead=True, slider=slider) if ahead_kept \
                else cold
            bare = compute_ms(explorer, slider, values)
            verdict = "ok" if ahead <= goal else "OVER GOAL"
            print(f"  {name:>8} {slider:>5} slider → figures updated {cold:7.1f} ms computed in the step, "
                  f"{ahead:7.1f} ms computed ahead (goal ≤ {goal} ms) {verdict}; bare compute {bare:6.1f} ms")
        if ahead_kept:
            push_ms, kb = page_frame_cost(explorer)
            print(f"{'':>9}  one frame handed to the page: {push_ms:.1f} ms on the prefetch thread, {kb:.0f} KB")


if __name__ == "__main__":
    main()
