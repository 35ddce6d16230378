"""Flink's ContinuousEventTimeTrigger (``--continuous-event-time I``, core/continuous.py): periodic EARLY panes added
after any runner, the same on the reference engine and the compiled kernel, deciding nothing else; refused where
not modelled; a "what if" outside the flink preset; said in Flink's words by its exports and in a NOTE by the others;
explained by the inspector; and held against real Flink 2.3.0 (engines tier). Flink's own cases are in
tests/scenarios/flink_continuous_trigger.yaml."""

import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explorer import generate, preset
from explorer.cli import main
from explorer.config import Emit, Scope, WindowSpec, what_if
from explorer.core import run
from explorer.core.result import differences
from explorer.errors import InputError
from explorer.export import export
from explorer.streams import load_events, stream_from_frame
from explorer.verify import held_against, report, verify

S = 1_000_000
WINDOWS = ["tumbling:10", "sliding:10:5", "cumulate:10:5"]


def _config(window: str, every: float = 3, allowed: float = 2):
    return replace(preset("flink", delay=2 * S, allowed_lateness=round(allowed * S),
                          continuous_event_time=round(every * S)), window=WindowSpec.parse(window))


@pytest.mark.parametrize("window", WINDOWS)
def test_the_reference_engine_and_the_kernel_add_the_same_periodic_panes(window):
    stream = generate("textbook", events=600, seed=341)
    config = _config(window)
    compiled, reference = run(stream, config), run(stream, config, engine="reference")
    assert differences(compiled, reference) == []
    assert (compiled.windows["reason"] == "EARLY").sum() > 50


@pytest.mark.parametrize("window", WINDOWS)
def test_periodic_panes_change_no_decision_and_come_before_the_window_fires_at_its_end(window):
    """Without its EARLY rows (revisions moved back) the table is EventTimeTrigger's; events, assignments and the
    watermark never change; a window's periodic panes are its first rows, at the multiples of I after its first
    element, each carrying no fewer elements than the one before."""
    stream = generate("textbook", events=600, seed=342)
    config = _config(window)
    result, plain = run(stream, config), run(stream, config.with_time(continuous_event_time=None))
    for table in ("events", "assignments", "watermarks"):
        pd.testing.assert_frame_equal(getattr(result, table), getattr(plain, table))
    w = result.windows
    periodic = w["reason"] == "EARLY"
    later = w[~periodic]
    per_window = w[periodic].groupby(["key", "start", "end"]).size()
    moved = later["revision"].to_numpy() - per_window.reindex(
        pd.MultiIndex.from_frame(later[["key", "start", "end"]]), fill_value=0).to_numpy()
    by_window = ["key", "start", "end", "revision"]  # (at one instant a window's periodic pane ranks its rows first)
    pd.testing.assert_frame_equal(later.assign(revision=moved).sort_values(by_window).reset_index(drop=True),
                                  plain.windows.sort_values(by_window).reset_index(drop=True))
    for _, panes in w.groupby(["key", "start", "end"]):
        reasons = panes.sort_values("revision")["reason"].tolist()
        assert reasons == sorted(reasons, key=lambda r: r != "EARLY")  # periodic panes first
        counts = panes.sort_values("revision")["count"].to_numpy()
        assert (np.diff(counts[:len(reasons)]) >= 0).all() or "LATE_UPDATE" in reasons


def test_refused_where_not_modelled():
    stream = generate("textbook", events=100)
    with pytest.raises(InputError, match="sessions are not modelled"):
        run(stream, _config("session:5"))
    with pytest.raises(InputError, match="emit on-update already emits every update"):
        run(stream, _config("tumbling:10").with_time(emit=Emit.ON_UPDATE))
    with pytest.raises(InputError, match="two triggers"):
        run(stream, _config("tumbling:10").with_time(early_firings=S))


def test_flinks_setting_and_a_what_if_elsewhere():
    assert what_if(preset("flink", continuous_event_time=30 * S)) == []
    assert what_if(preset("beam", continuous_event_time=30 * S)) == ["--continuous-event-time 30s"]
    assert main(["run", "--synthetic", "textbook", "--events", "300", "--preset", "flink", "--window", "tumbling:10",
                 "--continuous-event-time", "2s"]) == 0


def test_flinks_exports_set_the_trigger_and_the_others_say_they_do_not():
    config = _config("tumbling:10", every=15)
    java, python = export(config, "flink-java"), export(config, "pyflink")
    assert ".trigger(ContinuousEventTimeTrigger.of(Duration.ofMillis(CONTINUOUS_MS)))" in java
    assert "CONTINUOUS_MS = 15000L;" in java and ".trigger(ContinuousEventTimeTrigger.of(Duration.ofSeconds(15)))" in java
    assert ".trigger(ContinuousEventTimeTrigger.of(Time.milliseconds(CONTINUOUS_MS)))" in python
    assert "NOTE" not in java and "NOTE" not in python
    plain = config.with_time(continuous_event_time=None)
    assert ".trigger(" not in export(plain, "flink-java") + export(plain, "pyflink")
    beam = export(replace(config, preset="beam"), "beam-java")
    assert "(Flink's ContinuousEventTimeTrigger) have no equivalent in Beam" in beam


def test_the_inspector_names_the_boundary_that_fired_a_periodic_pane():
    from explorer.ui import explain_window
    result = run(generate("textbook", events=300, seed=34), _config("tumbling:10"))
    text = explain_window(result, 0)
    assert "a periodic firing at the boundary 3 s, before the window's end 10 s" in text
    assert "ContinuousEventTimeTrigger.of(3 s)" in text and "3.5 s ≥ 3 s + 1 ms" in text
    assert "a periodic firing at the boundary 6 s" in explain_window(result, 1)


@pytest.mark.engines
@pytest.mark.parametrize("engine", ["flink-java", "flink"])
def test_real_flink_fires_the_periodic_panes_predicted_on_a_random_stream(engine, tmp_path):
    stream = generate("textbook", events=400, seed=3436)
    config = _config("sliding:20:10", every=4, allowed=5)
    verdict = verify(stream, config, engine, tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    assert len(verdict.engine_emitted) > 2 * len({(w.key, w.start) for w in verdict.engine_emitted})  # periodic
    without = held_against(verdict, run(stream, config.with_time(continuous_event_time=None)))
    assert not without.identical and without.only_engine


@pytest.mark.engines
@pytest.mark.parametrize("engine", ["flink-java", "flink"])
def test_real_flink_fires_the_periodic_panes_predicted_on_a_kafka_like_export(engine, tmp_path):
    path = Path(tempfile.mkdtemp()) / "topic-export.csv"
    assert main(["generate", "kafka-export", "--devices", "6", "--duration", "1200", "--out", str(path)]) == 0
    stream = load_events(path, columns={"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id"})
    config = replace(preset("flink", delay=20 * S, allowed_lateness=30 * S, continuous_event_time=15 * S),
                     window=WindowSpec.parse("sliding:2m:30s"))
    verdict = verify(stream, config, engine, tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    without = held_against(verdict, run(stream, config.with_time(continuous_event_time=None)))
    assert not without.identical and without.only_engine


def test_a_periodic_panes_event_time_latency_is_its_own_watermarks_largest_event_time():
    """Per-key watermarks: key a's pane at the boundary 3 s fires when a's 7 s arrives (at the 200 ms emit after);
    by then b's 50 s has been seen too, but not by a's watermark. The pane's event-time latency is a's largest event
    time − the end (7 − 10), as the window's own firing (and Beam's early panes, core/triggers.pane_rows) measure it,
    not 50 − 10."""
    frame = pd.DataFrame({"id": ["a1", "b1", "a2", "b2"], "key": ["a", "b", "a", "b"],
                          "event_time": [1.0, 50.0, 7.0, 51.0], "arrival_time": [1.0, 1.5, 2.0, 3.0]})
    config = _config("tumbling:10").with_time(scope=Scope.KEY)
    for engine in ("compiled", "reference"):
        w = run(stream_from_frame(frame), config, engine=engine).windows
        pane = w[(w["key"] == "a") & (w["revision"] == 1)]
        assert pane[["reason", "ids", "emit_time"]].values.tolist() == [["EARLY", ("a1", "a2"), 2_200_000]]
        assert pane["latency_event"].tolist() == [-3 * S]


@pytest.mark.parametrize("flag", ["--continuous-event-time", "--continuous-processing-time"])
def test_an_interval_too_short_for_the_memory_is_refused_with_the_figure_before_any_pane_is_made(capsys, flag,
                                                                                                 monkeypatch):
    """1 µs on the textbook stream's 10 s windows would make ten billion panes (event time: a pane per µs of
    each window; processing time: per µs from each window's first arrival), which hung the run for ever; now one
    line with the figure. The bound is not a blanket refusal: at 100 ms, with the memory said to be 5 GiB, the run
    goes ahead, and the bound lies between the panes made and three times as many."""
    from explorer.core import triggers

    argv = ["run", "--synthetic", "textbook", "--preset", "flink", flag, "1us"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {flag} 1us on this run (1,000 windows, up to ") and "periodic panes) needs " \
        "about" in err and "use a longer interval" in err and err.count("\n") == 1, err
    made = []
    monkeypatch.setattr(triggers, "check_panes", lambda panes, listed, what, ways: made.append(panes))
    monkeypatch.setattr("explorer.budget.available_bytes", lambda: 5 * 1024**3)
    stream = generate("textbook")
    config = preset("flink").with_time(**{flag[2:].replace("-", "_"): 100_000})
    panes = len(run(stream, config).windows)
    assert made and panes <= made[0] < 3 * panes  # the bound holds, and is within a few times the truth
