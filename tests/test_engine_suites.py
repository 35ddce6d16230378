"""Engines' own test suites, as scenario files replayed through their presets: Flink's WindowOperatorTest
(tests/scenarios/flink_window_operator.yaml) and Beam's trigger_transcripts.yaml
(tests/scenarios/beam_trigger_transcripts.yaml) with scripted watermarks, Beam's ReduceFnRunnerTest
(tests/scenarios/beam_reduce_fn_runner.yaml: a pane's timing, as the emission's reason), Bytewax's test_fold_window.py
(tests/scenarios/bytewax_fold_window.yaml) with its own clock and a live dataflow's wake-ups on the system clock
(tests/scenarios/bytewax_live_clock.yaml), Kafka Streams' SuppressScenarioTest
(tests/scenarios/kafka_streams_suppress.yaml) and its aggregates' every-update output
(tests/scenarios/kafka_streams_updates.yaml), Flink's withIdleness tests on a partitioned source with a periodic emit
(tests/scenarios/flink_idleness.yaml), Flink SQL's CUMULATE windows (tests/scenarios/flink_cumulate.yaml), Kafka
Streams' SlidingWindows (tests/scenarios/kafka_streams_sliding.yaml), sessions merging into fired ones on Beam's
Python runner (tests/scenarios/beam_python_sessions.yaml). One interpreter runs every case on both engines: every
firing with the input row it follows, the side output, the dropped items, the elements a window dropped while
another kept them.
Cases marked ``error`` (Beam's own negative transcripts) must be rejected, and the negative tests below turn
off each rule a case exists for: the harness can fail."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import yaml

from explorer.config import BatchKind, BatchSpec, Emit, Panes, RefusedWhen, Scope, Strategy
from explorer.core import Result, run
from explorer.streams import stream_from_frame
from explorer.timeutil import MICROS

from conftest import make_config

SCENARIOS = Path(__file__).parent / "scenarios"
SUITES = {suite: yaml.safe_load((SCENARIOS / file).read_text())
          for suite, file in (("flink", "flink_window_operator.yaml"),
                              ("flink-side-output", "flink_side_output_itcase.yaml"), ("beam", "beam_trigger_transcripts.yaml"),
                              ("beam-reduce-fn", "beam_reduce_fn_runner.yaml"),
                              ("beam-early", "beam_early_firings.yaml"),
                              ("bytewax", "bytewax_fold_window.yaml"),
                              ("bytewax-live", "bytewax_live_clock.yaml"),
                              ("kafka-streams", "kafka_streams_suppress.yaml"),
                              ("kafka-streams-updates", "kafka_streams_updates.yaml"),
                              ("kafka-streams-sliding", "kafka_streams_sliding.yaml"),
                              ("flink-idleness", "flink_idleness.yaml"),
                              ("flink-cumulate", "flink_cumulate.yaml"),
                              ("flink-continuous", "flink_continuous_trigger.yaml"),
                              ("flink-continuous-processing", "flink_continuous_processing_trigger.yaml"),
                              ("streaming-systems", "streaming_systems.yaml"),
                              ("beam-python-sessions", "beam_python_sessions.yaml"))}
CASES = [(suite, name) for suite, cases in SUITES.items() for name in sorted(cases)]


def replay(case: dict, engine: str = "compiled", **changes) -> Result:
    """The case's input as a stream (one batch per row), run under its config; the scripted strategy when the
    input has watermark rows."""
    rows, clock = [], []  # a [processing, T] row is no input row: it sets the arrival time of the rows after it
    for r in case["input"] + case.get("then", []):
        if r[0] == "processing":
            clock.append(r[1])
        else:
            rows.append(r)
            clock.append(None)
    arrivals = pd.Series(clock, dtype=float).ffill().fillna(0)[[c is None for c in clock]].tolist()
    frame = pd.DataFrame({
        "id": [r[0] if r[0] != "watermark" else f"w{i}" for i, r in enumerate(rows, start=1)],
        "key": [r[1] if r[0] != "watermark" else "" for r in rows],
        "event_time": [r[-1] for r in rows],
        "kind": ["watermark" if r[0] == "watermark" else "event" for r in rows],
    })
    if case.get("arrive_together"):  # a harness that takes every item within microseconds, in file order
        frame["arrival_time"] = [n / MICROS[case.get("unit", "ms")] for n in range(len(rows))]
    if any(c is not None for c in clock):  # the tester's processing time (advanceProcessingTime)
        frame["arrival_time"] = arrivals
    if len(rows[0]) == 5:  # [id, key, partition, arrival, t]: a partitioned source (flink_idleness.yaml)
        frame["partition"], frame["arrival_time"] = [r[2] for r in rows], [r[3] for r in rows]
    stream = stream_from_frame(frame, name=case["test"], time_unit=case.get("unit", "ms"))
    scripted = {"strategy": "scripted"} if any(r[0] == "watermark" for r in rows) else {}
    config = make_config({**case["config"], **scripted})
    batches = BatchSpec.parse(case["batches"]) if "batches" in case else BatchSpec(BatchKind.EVENT)
    return run(stream, replace(config.with_time(**changes), batches=batches), engine=engine)


def outcome(case: dict, result: Result) -> dict:
    """What the case file states, read from a Result (batch b is input row b: one batch per row; with the case's
    own batches, a firing's time)."""
    unit = MICROS[case.get("unit", "ms")]
    at_end = case.get("at_end") == "emits"  # the engine emits what is open when the input ends (Bytewax)
    emitted = result.windows if at_end else result.windows[result.windows["reason"] != "END_OF_STREAM"]
    fired = sorted([[str(w.key), _number(w.start / unit), _number(w.end / unit), int(w.count),
                     "end" if w.reason == "END_OF_STREAM" else
                     _number(w.emit_time / unit) if "batches" in case else int(w.emit_batch)] for w in emitted.itertuples()],
                   key=str)
    events, a = result.events, result.assignments
    refused_somewhere = set(a.loc[~a["admitted"], "event"])
    partly = [events["id"].iloc[row] for row in refused_somewhere
              if events["status"].iloc[row] not in ("side_output", "dropped")]
    if "fired" not in case:  # the suite states only what was dropped
        fired = None
    reasons = sorted([[str(w.key), _number(w.start / unit), _number(w.end / unit), str(w.reason), int(w.revision)]
                      for w in emitted.itertuples()], key=str) if "reasons" in case else None
    # each window's panes in order, with what each carries (streaming_systems.yaml)
    panes = [[_number(w.start / unit), _number(w.end / unit), str(w.reason), int(w.revision), sorted(w.ids)]
             for w in emitted.sort_values(["start", "end", "revision"], kind="stable").itertuples()]
    return {"fired": fired, "reasons": reasons, "panes": panes if "panes" in case else None,
            "side_output": sorted(events.loc[events["status"] == "side_output", "id"]),
            "dropped": sorted(events.loc[events["status"] == "dropped", "id"]), "partly_dropped": sorted(partly)}


def _number(value: float) -> int | float:
    return int(value) if value == int(value) else value


def expected(case: dict) -> dict:
    return {"fired": sorted(case["fired"], key=str) if "fired" in case else None,
            "reasons": sorted(case["reasons"], key=str) if "reasons" in case else None,
            "panes": [[*pane[:4], sorted(pane[4])] for pane in case["panes"]] if "panes" in case else None,
            "side_output": sorted(case.get("side_output", [])),
            "dropped": sorted(case.get("dropped", [])), "partly_dropped": sorted(case.get("partly_dropped", []))}


@pytest.mark.parametrize("suite, name", CASES)
@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_engine_suite_cases(suite, name, engine):
    case = SUITES[suite][name]
    result = replay(case, engine)
    if "error" in case:  # the suite's own wrong expectation: the interpreter must say no
        assert outcome(case, result) != expected(case), f"{case['test']} should fail ({case['error']})"
        return
    assert outcome(case, result) == expected(case), case["test"]
    assert result.metrics.partly_dropped == len(case.get("partly_dropped", []))
    assert len(result.events) == sum(r[0] not in ("watermark", "processing")
                                     for r in case["input"] + case.get("then", []))


@pytest.mark.parametrize("suite, name, changes", [
    ("flink", "sliding_side_output", {"refused_when": RefusedWhen.ANY_WINDOW}),  # d, e would go to the side output
    ("flink", "session_with_lateness", {"session_lateness_on_merge": False}),  # g judged on its own span
    ("flink", "session_with_huge_lateness", {"session_lateness_on_merge": False}),  # h would re-fire at once
    ("flink", "tumbling_cleanup", {"strategy": Strategy.MAX}),  # the watermark rows ignored: nothing fires in time
    ("flink-side-output", "keyed_window_late_with_lateness", {"allowed_lateness": 0}),  # 4 would be late too
    ("flink-side-output", "keyed_window_late_with_lateness", {"allowed_lateness": 3000}),  # 3 kept until 6 > 5
    ("beam", "fixed_default_late_data", {"allowed_lateness": 0}),  # with Beam's dropping, 7 is dropped
    ("bytewax", "session", {"session_close_strict": False}),  # Spark's sessions close at last + gap
    ("bytewax", "sliding", {"bound": 7_000_000}),  # a 7 s wait closes every window later than 0 s does
    ("bytewax-live", "key_ahead_is_not_woken_at_its_watermark", {"bytewax_live_wakeups": False}),  # closed at 11 s: b on time
    ("bytewax-live", "key_ahead_is_woken_at_its_held_item", {"bytewax_live_wakeups": False}),  # closed at 11 s
    ("bytewax-live", "key_behind_is_woken_at_its_watermark", {"bound": 0}),  # no wait: its watermark is at 10 s at 10.5 s
    ("bytewax-live", "first_held_item_in_arrival_order", {"bytewax_live_wakeups": False}),  # [10, 20) at 0.5 s
    ("kafka-streams", "time_windows", {"bound": 0}),  # no grace: [0, 2) closes at row 3 with 2 records
    ("kafka-streams", "session_windows", {"scope": Scope.KEY}),  # k2's record no longer closes k1's session
    ("kafka-streams", "session_windows", {"session_close_strict": False}),  # sessions [t, t + gap) end elsewhere
    ("kafka-streams", "session_nonzero_grace", {"session_close_strict": False}),  # ontime2 dropped at the edge
    ("kafka-streams", "expired_by_grace", {"bound": 91_000}),  # one ms more grace keeps [100, 110)
    ("kafka-streams-updates", "time_windows_count", {"emit": Emit.ON_CLOSE}),  # one emission per window, at close
    ("kafka-streams-updates", "hopping_every_update", {"windows_from_zero": False}),  # [-5, 5) forwards too
    ("kafka-streams-updates", "session_windows_count", {"session_close_strict": False}),  # 599 would not merge
    ("kafka-streams-updates", "multiple_sessions_cached", {"commit_interval": None}),  # a flush per record: d twice
    ("kafka-streams-updates", "multiple_sessions_cached", {"emit": Emit.ON_UPDATE}),  # the cache off: every update
    ("kafka-streams-updates", "session_windows_count_cached", {"commit_interval": 3_600_000_000}),  # one flush
    ("kafka-streams-updates", "time_windows_count_cached", {"commit_interval": 30_000_000}),  # the preset's 30 s
    ("kafka-streams-sliding", "small_input_updates", {"emit": Emit.ON_CLOSE}),  # one result per window, at close
    ("kafka-streams-sliding", "small_input_on_close", {"bound": 0}),  # no grace: [0, 10] closes at r4 (15 > 10)
    ("kafka-streams-sliding", "early_records_updates", {"emit": Emit.ON_BATCH, "commit_interval": 3_600_000_000}),
    ("kafka-streams-sliding", "early_records_on_close", {"bound": 20_000}),  # stream time − 20 closes none by 70
    ("kafka-streams-sliding", "expired_by_grace_updates", {"bound": 100_000}),  # k0's [90, 100] is kept
    ("kafka-streams-sliding", "expired_by_grace_on_close", {"bound": 100_000}),  # k0 … k5 kept
    ("kafka-streams-sliding", "random_input_on_close", {"bound": 90_000}),  # the store keeps starts from 62: 77, 78 too
    ("kafka-streams-sliding", "count_sliding_windows", {"bound": 0}),  # a3 at 500 expires key 2's: b10, b20 dropped
    ("beam-early", "early_pane_before_the_watermark", {"early_firings": None}),  # no pane before the input ends
    ("beam-early", "panes_follow_the_first_element", {"early_firings": 3_000_000}),  # other panes
    ("beam-early", "panes_follow_the_first_element", {"panes": Panes.ACCUMULATING}),  # 2, 4, 6, 7, 7 elements
    ("flink-cumulate", "cumulative_assigner", {"end_inclusive": True}),  # 5000 would close [0, 5000)
    ("flink-cumulate", "cumulative_assigner_offset", {"end_inclusive": True}),  # 5100 would close [100, 5100)
    ("flink-cumulate", "event_time_cumulative_windows", {"refused_when": RefusedWhen.ANY_WINDOW}),  # i, j dropped
    ("flink-cumulate", "event_time_cumulative_windows", {"strategy": Strategy.MAX}),  # rows ignored: fired later
    ("flink-continuous", "window_separation_and_firing", {"end_inclusive": True}),  # 2 would close (0, 2)
    ("flink-continuous", "late_element_triggers_immediately", {"allowed_lateness": 0}),  # a to the side output
    ("flink-continuous", "periodic_then_at_the_end", {"continuous_event_time": None}),  # one firing, at the end
    ("flink-continuous", "panes_repeat_without_new_elements", {"continuous_event_time": 3_000}),  # 3, 6, then 9
    ("flink-continuous", "first_element_sets_the_boundaries", {"continuous_event_time": 2_000}),  # 6 and 8
    ("flink-continuous", "timer_behind_the_watermark_fires_at_the_next_advance",
     {"continuous_event_time": 3_000}),  # 3 and 6 at W = 6, then 9 alone
    ("flink-continuous-processing", "window_firing", {"continuous_processing_time": None}),  # at the ends only
    ("flink-continuous-processing", "window_firing", {"continuous_processing_time": 3_000}),  # 3 and 6, not 5
    ("flink-continuous-processing", "watermark_purges_without_firing", {"continuous_processing_time": None}),
    ("flink-continuous-processing", "watermark_purges_without_firing", {"allowed_lateness": 5_000}),  # 8 fires
    ("flink-continuous-processing", "due_at_once_past_max_timestamp", {"continuous_processing_time": None}),
    ("streaming-systems", "example_2_8_allowed_lateness", {"allowed_lateness": 0}),  # the 6 dropped: no LATE 11
    ("beam-python-sessions", "late_data_merges_fired_sessions", {"allowed_lateness": 0}),  # x, y, z dropped
    ("beam-python-sessions", "merges_into_a_session_past_its_allowed_lateness", {"session_state_kept": False}),  # [15, 25)
    ("streaming-systems", "example_2_7_perfect_watermark", {"early_firings": 90_000_000}),  # other early panes
])
def test_the_cases_fail_without_the_rule_they_check(suite, name, changes):
    """A harness that cannot fail proves nothing: each case must reject the rule it was chosen for."""
    case = SUITES[suite][name]
    assert outcome(case, replay(case, **changes)) != expected(case)
