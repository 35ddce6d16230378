"""Beam's early firings (``--early-firings T``, core/early.py): EARLY panes added after any runner, the same on the
reference engine and the compiled kernel, deciding nothing else; refused where they are not modelled; a "what if"
under presets whose engine has no such trigger; drawn and explained in the explorer. Beam's own cases are in
tests/scenarios/beam_early_firings.yaml, the real engine in tests/test_verify_beam.py."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from explorer import generate, preset
from explorer.cli import main
from explorer.config import Emit, Panes, WindowSpec, what_if
from explorer.core import run
from explorer.core.result import differences, pane_timing
from explorer.errors import InputError
from explorer.streams import stream_from_frame

S = 1_000_000
CASES = [("tumbling:10", Panes.ACCUMULATING, 2), ("tumbling:10", Panes.DISCARDING, 2),
         ("sliding:10:5", Panes.DISCARDING, 3), ("sliding:10:5+2s", Panes.ACCUMULATING, 1)]


def _config(window: str, panes: Panes, early: float, allowed: float = 3):
    return replace(preset("beam", delay=4 * S, allowed_lateness=round(allowed * S), panes=panes,
                          early_firings=round(early * S)), window=WindowSpec.parse(window))


@pytest.mark.parametrize("window,panes,early", CASES)
def test_the_reference_engine_and_the_kernel_add_the_same_early_panes(window, panes, early):
    stream = generate("textbook", events=600, seed=34)
    config = _config(window, panes, early)
    compiled, reference = run(stream, config), run(stream, config, engine="reference")
    assert differences(compiled, reference) == []
    assert (compiled.windows["reason"] == "EARLY").sum() > 50


@pytest.mark.parametrize("window,panes,early", CASES)
def test_early_panes_change_no_decision_and_come_before_the_on_time_pane(window, panes, early):
    """Without its EARLY rows (revisions moved back), an accumulating table is the one without early firings; the
    events, assignments and drops never change; each window's early panes are its first, fired no later than the
    watermark fires it."""
    stream = generate("textbook", events=600, seed=35)
    config = _config(window, panes, early)
    result, plain = run(stream, config), run(stream, config.with_time(early_firings=None))
    for table in ("events", "assignments", "watermarks"):
        pd.testing.assert_frame_equal(getattr(result, table), getattr(plain, table))
    w = result.windows
    early_rows = w[w["reason"] == "EARLY"]
    later = w[w["reason"] != "EARLY"]
    on_time = later.groupby(["key", "start", "end"])["emit_time"].min()
    fired = on_time.reindex(pd.MultiIndex.from_frame(early_rows[["key", "start", "end"]])).to_numpy()
    assert (early_rows["emit_time"].to_numpy() <= fired).all()  # before the watermark fires the window
    per_window = early_rows.groupby(["key", "start", "end"]).size()
    moved = later["revision"].to_numpy() - per_window.reindex(
        pd.MultiIndex.from_frame(later[["key", "start", "end"]]), fill_value=0).to_numpy()
    assert (moved >= 1).all()
    if panes is Panes.ACCUMULATING:
        pd.testing.assert_frame_equal(later.assign(revision=moved).reset_index(drop=True), plain.windows)
    else:  # each event once over a window's panes, as a downstream sum needs it
        listed = w.explode("ids").dropna(subset=["ids"])
        assert not listed.duplicated(["key", "start", "end", "ids"]).any()
    assert result.metrics.windows_emitted == plain.metrics.windows_emitted
    assert result.metrics.updates == plain.metrics.updates


def test_a_timer_due_when_an_element_arrives_fires_first():
    """T = 2 s: a's pane (arrival 1 s) fires at 3 s; b arriving at exactly 3 s opens the next pane (Beam's Python
    runner fires a timer once its clock is at it, before the element it moved for; its Java runners only past it);
    c at 4.999 s joins b's pane, which fires at 5 s; the watermark passes the end at 6 s: the ON_TIME pane. One µs
    more of delay and b joins a's pane, and c's timer is due after the ON_TIME pane."""
    frame = pd.DataFrame({"id": ["a", "b", "c", "z"], "key": "k", "event_time": [1.0, 2.0, 3.0, 20.0],
                          "arrival_time": [1.0, 3.0, 4.999, 6.0]})
    stream = stream_from_frame(frame)
    config = _config("tumbling:10", Panes.DISCARDING, 2, allowed=0)
    w = run(stream, config).windows
    w = w[w["start"] == 0]
    assert [(r.reason, r.ids, r.emit_time) for r in w.itertuples()] == [
        ("EARLY", ("a",), 3 * S), ("EARLY", ("b", "c"), 5 * S), ("WATERMARK", (), 6 * S)]
    assert [pane_timing(r) for r in w["reason"]] == ["EARLY", "EARLY", "ON_TIME"]
    longer = run(stream, config.with_time(early_firings=2 * S + 1)).windows
    assert [(r.reason, r.ids) for r in longer[longer["start"] == 0].itertuples()] == [
        ("EARLY", ("a", "b")), ("WATERMARK", ("c",))]


def test_aligned_sessions_update_output_and_forgotten_windows_are_refused_in_one_line():
    stream = generate("textbook", events=50)
    sessions = replace(_config("tumbling:10", Panes.ACCUMULATING, 1), window=WindowSpec.parse("session:5"))
    assert (run(stream, sessions).windows["reason"] == "EARLY").any()  # modelled (core/early_sessions.py)
    with pytest.raises(InputError, match="sessions with aligned early firings are not modelled"):
        run(stream, sessions.with_time(early_aligned_to=0))
    with pytest.raises(InputError, match="emit on-update"):
        run(stream, preset("kafka-streams", early_firings=S, emit=Emit.ON_UPDATE))
    with pytest.raises(InputError, match="forget-clock-when-empty"):  # Bytewax emits a window again
        run(stream, preset("bytewax", early_firings=S))


def test_early_firings_are_beams_and_a_what_if_elsewhere(capsys):
    assert what_if(preset("beam", early_firings=30 * S)) == []
    assert what_if(preset("flink", early_firings=30 * S)) == ["--early-firings 30s"]
    assert main(["run", "--synthetic", "textbook", "--events", "300", "--preset", "beam", "--early-firings", "2s",
                 "--format", "json"]) == 0
    assert '"reason": "EARLY"' in capsys.readouterr().out
    assert main(["run", "--synthetic", "textbook", "--events", "300", "--preset", "beam", "--early-firings", "2s"]) == 0
    assert "early panes 55 (before the watermark fired their window)" in capsys.readouterr().out


def test_the_figure_draws_early_panes_apart_and_the_inspector_says_what_fired_them():
    from explorer.ui import explain_window
    from explorer.ui.figures import REASON_LABELS, REASON_SYMBOLS, emission_markers
    result = run(generate("textbook", events=300), _config("tumbling:10", Panes.ACCUMULATING, 2))
    markers = emission_markers(result.windows)
    assert len(markers["EARLY"].x) == (result.windows["reason"] == "EARLY").sum() > 0
    assert REASON_SYMBOLS["EARLY"] != REASON_SYMBOLS["WATERMARK"] and "early" in REASON_LABELS["EARLY"]
    row = int(np.flatnonzero(result.windows["reason"] == "EARLY")[0])
    text = explain_window(result, row)
    assert "an early firing" in text and "processing-time timer 2 s later" in text
    assert "Beam's pane 0, timing EARLY" in text


def test_exports_say_early_firings_in_beams_words_and_note_them_elsewhere():
    from explorer.export import export
    config = _config("tumbling:10", Panes.ACCUMULATING, 10)
    java = export(config, "beam-java")
    assert ("AfterWatermark.pastEndOfWindow()\n            .withEarlyFirings(AfterProcessingTime.pastFirstElementInPane()"
            ".plusDelayOf(Duration.standardSeconds(10)))") in java and "NOTE" not in java
    assert "early firings" not in export(config.with_time(early_firings=None), "beam-java")
    flink = export(replace(preset("flink", early_firings=10 * S), window=WindowSpec.parse("tumbling:10")), "flink-java")
    assert "what if: --early-firings 10s" in flink and "(Beam's withEarlyFirings) have no equivalent in Flink" in flink


def test_the_latency_cards_explain_only_first_emissions_not_early_panes():
    """Early panes come before their window's end (a negative event-time latency), but the latency cards count the
    on-time pane, as without them: their note must not give early firings as a reason."""
    from explorer.ui.cards import early_because
    result = run(generate("textbook", events=300), _config("tumbling:10", Panes.ACCUMULATING, 2))
    assert (pd.to_numeric(result.windows["latency_event"])[result.windows["reason"] == "EARLY"] < 0).any()
    assert "early firings" not in early_because(result.windows)
