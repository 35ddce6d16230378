"""Flink's own WindowOperatorTest cases (tests/scenarios/flink_window_operator.yaml) replayed through the
flink preset with scripted watermarks: every firing, with the input row it follows, the side output and the
elements a sliding window dropped silently. One interpreter runs every case; the negative tests prove it can
fail on each rule the cases exist for."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import yaml

from explorer.config import BatchKind, BatchSpec, RefusedWhen, Strategy
from explorer.core import Result, run
from explorer.streams import stream_from_frame

from conftest import make_config

CASES = yaml.safe_load((Path(__file__).parent / "scenarios" / "flink_window_operator.yaml").read_text())
MS = 1000


def replay(case: dict, engine: str = "compiled", **changes) -> Result:
    """The case's input as a stream (one batch per row), run under its config with the scripted strategy."""
    rows = case["input"] + case.get("then", [])
    frame = pd.DataFrame({
        "id": [r[0] if r[0] != "watermark" else f"w{i}" for i, r in enumerate(rows, start=1)],
        "key": [r[1] if r[0] != "watermark" else "" for r in rows],
        "event_time": [r[-1] for r in rows],
        "kind": ["watermark" if r[0] == "watermark" else "event" for r in rows],
    })
    stream = stream_from_frame(frame, name=case["test"], time_unit="ms")
    config = make_config({**case["config"], "strategy": "scripted"})
    config = replace(config.with_time(**changes), batches=BatchSpec(BatchKind.EVENT))
    return run(stream, config, engine=engine)


def outcome(result: Result) -> dict:
    """What the case file states, read from a Result (batch b is input row b: one batch per row)."""
    emitted = result.windows[result.windows["reason"] != "END_OF_STREAM"]
    fired = sorted([str(w.key), w.start // MS, w.end // MS, int(w.count), int(w.emit_batch)]
                   for w in emitted.itertuples())
    events, a = result.events, result.assignments
    refused_somewhere = set(a.loc[~a["admitted"], "event"])
    partly = [events["id"].iloc[row] for row in refused_somewhere
              if events["status"].iloc[row] not in ("side_output", "dropped")]
    return {"fired": fired, "side_output": sorted(events.loc[events["status"] == "side_output", "id"]),
            "partly_dropped": sorted(partly)}


def expected(case: dict) -> dict:
    return {"fired": sorted(case["fired"]), "side_output": sorted(case["side_output"]),
            "partly_dropped": sorted(case["partly_dropped"])}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_flinks_window_operator_cases(name, engine):
    case = CASES[name]
    result = replay(case, engine)
    assert outcome(result) == expected(case), case["test"]
    assert result.metrics.partly_dropped == len(case["partly_dropped"])
    assert len(result.events) == sum(r[0] != "watermark" for r in case["input"] + case.get("then", []))


@pytest.mark.parametrize("name, changes", [
    ("sliding_side_output", {"refused_when": RefusedWhen.ANY_WINDOW}),  # d, e would go to the side output
    ("session_with_lateness", {"session_lateness_on_merge": False}),  # g would be judged on its own span
    ("session_with_huge_lateness", {"session_lateness_on_merge": False}),  # h would re-fire at once
    ("tumbling_cleanup", {"strategy": Strategy.MAX}),  # the watermark rows ignored: nothing fires in time
])
def test_the_cases_fail_without_the_rule_they_check(name, changes):
    """A harness that cannot fail proves nothing: each case must reject the rule it was chosen for."""
    case = CASES[name]
    assert outcome(replay(case, **changes)) != expected(case)
