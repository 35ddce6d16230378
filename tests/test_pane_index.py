"""Beam's pane index of a merged session: a merge makes a new window (Java's ``ReduceFnRunner.onMerge`` and Python's
``GeneralTriggerDriver`` clear the merged-away windows' pane state), so its first pane is index 0 whatever the
session's revision. The JSON Result and windows.csv say so alike; measured on Beam in tests/test_verify_beam.py."""

import json

import pandas as pd

import explorer.cli
from explorer.cli import main

S = 1_000_000
ARGS = ["--time-unit", "us", "--preset", "beam", "--window", "session:10s", "--delay", "0", "--allowed-lateness",
        "30s", "--session-state-kept", "true"]


def test_a_merged_session_starts_its_pane_index_at_0_in_the_json_and_in_windows_csv(tmp_path, capsys, monkeypatch):
    """[10, 20) {a} fires on time; b@15 s merges it into [10, 25): pane 0 (revision 2), EARLY as the watermark
    (20.5 s) is before its end; c@12 s keeps [10, 25): pane 1; d@11 s after y@40 s: pane 2, LATE. windows.csv is
    written a slice at a time (one id a slice here): each row's index still counts from its window's first row."""
    path = tmp_path / "sessions.csv"
    pd.DataFrame({"id": ["a", "z", "b", "c", "y", "d"], "key": ["k", "other", "k", "k", "other", "k"],
                  "event_time": [10 * S, 20_500_000, 15 * S, 12 * S, 40 * S, 11 * S],
                  "arrival_time": [1, 2, 3, 4, 5, 6]}).to_csv(path, index=False)
    assert main(["run", str(path), *ARGS, "--format", "json"]) == 0
    rows = [w for w in json.loads(capsys.readouterr().out)["windows"] if w["key"] == "k"]
    assert [(w["end"], w["revision"], w["pane_index"], w["pane_timing"]) for w in rows] == [
        (20 * S, 1, 0, "ON_TIME"), (25 * S, 2, 0, "EARLY"), (25 * S, 3, 1, "EARLY"), (25 * S, 4, 2, "LATE")]
    monkeypatch.setattr(explorer.cli, "IDS_PER_WRITE", 1)
    assert main(["run", str(path), *ARGS, "--out", str(tmp_path / "out")]) == 0
    table = pd.read_csv(tmp_path / "out" / "windows.csv")
    table = table[table["key"] == "k"]
    assert table["pane_index"].tolist() == [0, 0, 1, 2]
    assert table["pane_timing"].tolist() == ["ON_TIME", "EARLY", "EARLY", "LATE"]


def test_the_inspector_names_a_merged_sessions_pane_as_the_json_does(tmp_path):
    """The inspector's 'Beam's pane N' for each of k's rows is the JSON's pane_index and timing (0, 0, 1, 2), not
    revision − 1 (0, 1, 2, 3)."""
    from explorer import load_events, run
    from explorer.ui.inspector import explain_window

    from conftest import make_config

    path = tmp_path / "sessions.csv"
    pd.DataFrame({"id": ["a", "z", "b", "c", "y", "d"], "key": ["k", "other", "k", "k", "other", "k"],
                  "event_time": [10 * S, 20_500_000, 15 * S, 12 * S, 40 * S, 11 * S],
                  "arrival_time": [1, 2, 3, 4, 5, 6]}).to_csv(path, index=False)
    config = make_config({"preset": "beam", "window": "session:10s", "delay": "0", "allowed_lateness": "30s",
                          "session_state_kept": "true"})
    result = run(load_events(path, time_unit="us"), config)
    rows = [i for i, key in enumerate(result.windows["key"]) if key == "k"]
    said = [explain_window(result, i).split("(Beam's pane ")[1].split(")")[0] for i in rows]
    assert said == ["0, timing ON_TIME", "0, timing EARLY", "1, timing EARLY", "2, timing LATE"]
