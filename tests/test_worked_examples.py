"""000's worked example, table by table, from tests/scenarios/voltsp_worked_example.yaml."""

from pathlib import Path

import pytest
import yaml

from explorer import generate, run
from explorer.timeutil import MICROS

from conftest import make_config

SCENARIOS = yaml.safe_load((Path(__file__).parent / "scenarios" / "voltsp_worked_example.yaml").read_text())
S = MICROS["s"]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_scenario_table(scenario):
    stream = generate(scenario["stream"]["generator"], scenario=scenario["stream"]["scenario"])
    result = run(stream, make_config(scenario["config"]))

    commits = result.watermarks[result.watermarks["at"] == "commit"]
    got_marks = [[int(r.batch), r.watermark / S, r.effective / S] for r in commits.itertuples()]
    for expected, got in zip(scenario["watermarks"], got_marks, strict=True):
        assert got[0] == expected[0]
        assert got[1] == expected[1], f"raw watermark after batch {expected[0]}"
        if len(expected) == 3:
            assert got[2] == expected[2], f"effective watermark after batch {expected[0]}"

    got_emitted = [
        {"batch": int(w.emit_batch), "window": [w.start / S, w.end / S], "ids": list(w.ids), "reason": w.reason,
         "emit_time": w.emit_time / S}
        for w in result.windows.itertuples()
    ]
    assert len(got_emitted) == len(scenario["emitted"])
    for expected, got in zip(scenario["emitted"], got_emitted):
        for field, value in expected.items():
            assert got[field] == value, f"{field} of window {expected['window']}"

    late = result.events[result.events["status"].isin(["side_output", "dropped"])]["id"].tolist()
    assert late == scenario["late"]


def test_watermark_progression_examples():
    """000's "at a glance" diagrams: batches (2, 4, 9) then (5, 8, 15)."""
    import pandas as pd
    from explorer.streams import stream_from_frame

    frame = pd.DataFrame({"id": [f"e{i}" for i in range(1, 7)], "event_time": [2, 4, 9, 5, 8, 15],
                          "arrival_time": [1, 1, 1, 2, 2, 2], "batch": [1, 1, 1, 2, 2, 2]})
    stream = stream_from_frame(frame)
    minimum = run(stream, make_config({}))
    assert minimum.watermarks["watermark"].tolist() == [2 * S, 5 * S]
    assert (minimum.events["status"] == "on_time").all()

    maximum = run(stream, make_config({"strategy": "max", "lateness_rule": "timestamp"}))
    assert maximum.watermarks["watermark"].tolist() == [9 * S, 15 * S]
    statuses = dict(zip(maximum.events["id"], maximum.events["status"]))
    assert [statuses[e] for e in ("e4", "e5", "e6")] == ["side_output", "side_output", "on_time"]

    with_late = stream_from_frame(pd.concat([frame, pd.DataFrame(
        {"id": ["e_late"], "event_time": [3], "arrival_time": [3], "batch": [3]})]))
    late = run(with_late, make_config({"lateness_rule": "timestamp"}))
    assert late.events.set_index("id").loc["e_late", "status"] == "side_output"
