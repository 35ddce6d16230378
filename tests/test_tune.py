"""``tune``: the smallest delay that reaches a completeness target, found by bisection to the µs."""

import json
from dataclasses import replace

import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from explorer import generate, preset
from explorer.cli import main
from explorer.config import LatePolicy, Scope, Strategy, TimeSource, WindowSpec, apply_delay
from explorer.core import run_metrics
from explorer.metrics import tune
from explorer.streams import stream_from_frame

from strategies import examples, stream_and_config

S = 1_000_000


@pytest.mark.parametrize("name", ["textbook", "voltsp", "spark", "flink", "bytewax", "storm"])
def test_tune_names_the_smallest_delay_exactly(name):
    """It reaches the target and 1 µs less does not: no grid (the old suggestion named 68.85 s where 66 s
    already reached 99%)."""
    stream = generate("textbook", events=5000)
    found = tune(stream, preset(name), 0.99)
    assert found.reached
    assert run_metrics(stream, apply_delay(preset(name), found.delay)).completeness >= 0.99
    assert run_metrics(stream, apply_delay(preset(name), found.delay - 1)).completeness < 0.99
    assert found.completeness >= 0.99 > found.below


def test_tune_says_when_no_delay_reaches_the_target():
    """A 1 s idle timeout flushes windows whatever the delay: 100% is out of reach."""
    found = tune(generate("textbook", events=3000), preset("voltsp", idle_timeout=S), 1.0)
    assert not found.reached and found.completeness < 1.0


def test_tune_on_the_command_line(capsys):
    assert main(["tune", "--synthetic", "textbook", "--events", "5000", "--preset", "textbook", "--target", "99",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reached"] and out["completeness"] >= 0.99 > out["completeness_1us_less"]
    assert out["delay"] == tune(generate("textbook", events=5000), preset("textbook"), 0.99).delay / S


@settings(max_examples=examples(150), deadline=None)
@given(stream_and_config(), st.integers(0, 20), st.integers(1, 20), st.sampled_from(["delay", "bound"]))
def test_completeness_never_falls_as_the_delay_grows(case, start, step, knob):
    """What makes the bisection exact: a later effective watermark closes no window sooner (for the delay,
    and for the bound L that the textbook and Bytewax presets turn instead). Not under Bytewax's forgotten
    clock: the next test shows it falling there."""
    stream, config = case
    assume(not (config.time.forget_clock_when_empty and config.time.scope is Scope.KEY))
    assume(not (config.time.idle_timeout is not None and config.time.idle_clock is TimeSource.EVENT))  # see below
    low, high = (config.with_time(**{knob: d * S // 2}) for d in (start, start + step))
    assert run_metrics(stream, low).completeness <= run_metrics(stream, high).completeness


def test_under_an_idle_timeout_on_the_event_clock_a_larger_delay_can_drop_what_a_smaller_one_kept():
    """Found by hypothesis (2026-11-26), and so at the base of that session too: MIN per batch, per-key watermarks,
    sessions of 2.5 s and an idle timeout of 1 s on the event clock. Key b's straggler e1 (t = 0.5 s, arriving with
    e17 at 11.5 s) is kept with a delay of 8.5 s and dropped with 9 s, so tune's bisection is not exact there. Not
    yet explained; the property above leaves this setting out and this test holds the case so it is not lost."""
    from dataclasses import replace as changed

    import pandas as pd

    from explorer.config import BatchKind, BatchSpec, RunConfig, TimeConfig
    from explorer.core import run
    from explorer.streams import stream_from_frame

    ids = [f"e{i}" for i in (10, 11, 12, 13, 14, 15, 16, 2, 3, 4, 5, 6, 7, 8, 9, 0, 17, 1)]
    frame = pd.DataFrame({"id": ids, "key": ["a"] * 6 + ["b"] + ["a"] * 9 + ["b", "b"],
                          "event_time": [0.0] * 15 + [1.0, 11.5, 0.5], "arrival_time": [0.0] * 15 + [1.0, 11.5, 11.5],
                          "batch": [1] * 17 + [2], "partition": "P0"})
    time = TimeConfig(strategy=Strategy.MIN, late_policy=LatePolicy.DROP, idle_timeout=S, idle_clock=TimeSource.EVENT,
                      heartbeat=5 * S, scope=Scope.KEY, session_close_strict=True)

    def dropped(delay: float) -> list[str]:
        config = RunConfig(window=WindowSpec.parse("session:2.5"), time=changed(time, delay=int(delay * S)),
                           batches=BatchSpec(BatchKind.EVENT))
        events = run(stream_from_frame(frame), config).events
        return events[events["status"] != "on_time"]["id"].tolist()

    assert dropped(8.5) == [] and dropped(9.0) == ["e1"]


def test_under_bytewaxs_forgotten_clock_a_larger_delay_can_drop_what_a_smaller_one_kept():
    """Key a's window (−0.5, 0] fires at once with no delay, so a forgets its clock and its straggler at 0 opens a
    fresh window; with 0.5 s of delay the window is still open when 0.5 s arrives, a keeps its clock, and the
    straggler is dropped (found by hypothesis; the README's caveat on `tune`)."""
    frame = pd.DataFrame({"id": ["e1", "e2", "e3"], "key": "a", "event_time": [0.0, 0.5, 0.0],
                          "arrival_time": [0.0, 3.5, 4.0]})
    stream = stream_from_frame(frame, name="forgetful")
    config = replace(preset("bytewax"), window=WindowSpec.parse("tumbling:0.5")).with_time(
        strategy=Strategy.MIN, end_inclusive=True, late_policy=LatePolicy.DROP)
    low, high = (run_metrics(stream, config.with_time(bound=0, delay=d)) for d in (0, S // 2))
    assert low.completeness == 1.0 and high.dropped == 1 and high.completeness < 1.0


def test_the_frontier_of_delay_and_allowed_lateness_trades_first_emission_latency_for_revisions(capsys):
    """Beside an allowed lateness A the target is reached with a smaller delay: every point reaches it, the
    first emissions come no later as A grows, and the revisions that pay for it only grow."""
    from explorer.metrics import best_point, frontier
    stream = generate("textbook", events=3000)
    config = preset("voltsp")
    points = frontier(stream, config, 0.95, "allowed-lateness", steps=4)
    alone = tune(stream, config, 0.95)
    assert points[0].second == 0 and points[0].tuning.delay == alone.delay
    assert [p.second for p in points] == sorted({p.second for p in points}) and len(points) == 5
    assert all(p.tuning.reached and p.tuning.completeness >= 0.95 for p in points)
    delays = [p.tuning.delay for p in points]
    assert delays == sorted(delays, reverse=True) and delays[-1] < delays[0]
    latencies = [p.latency for p in points]
    assert all(a >= b for a, b in zip(latencies, latencies[1:]))
    revisions = [p.tuning.metrics.updates for p in points]
    assert revisions == sorted(revisions) and revisions[0] == 0 < revisions[-1]
    assert best_point(points) is min(points, key=lambda p: (p.latency, p.second))
    assert main(["tune", "--synthetic", "textbook", "--events", "3000", "--target", "0.95",
                 "--with", "allowed-lateness"]) == 0
    out = capsys.readouterr().out
    assert out.count("← lowest latency") == 1 and out.splitlines()[2].lstrip().startswith("off")
    assert main(["tune", "--synthetic", "textbook", "--target", "0.95", "--with", "colour"]) == 2
