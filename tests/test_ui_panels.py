"""The explorer's panels in the kernel: Run on Spark (real Spark), compare engines, copy config as code."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from dataclasses import replace

from explorer import generate
from explorer.config import Emit, apply_delay, preset
from explorer.core import run
from explorer.streams import stream_from_frame
from explorer.export import ExportSource, export
from explorer.ui import Explorer
from explorer.ui.app import PREVIEW_LINE
from explorer.ui.figures import STATUS_LABELS
from explorer.core.result import differences

S = 1e6


def test_run_on_spark_in_the_background_then_badge_and_redraw(spark):
    explorer = Explorer(generate("voltsp", scenario=4), "voltsp")
    explorer.controls.idle.value = 30
    panel = explorer.spark_panel
    panel.run_button.click()
    assert panel.run_button.disabled  # the kernel is free while Spark runs
    panel.thread.join(300)
    assert panel.result is not None and panel.result.engine == "spark"
    assert "agrees" in panel.badge.value, panel.status.value + panel.badge.value
    assert panel.progress.value == panel.progress.max > 1
    assert explorer.result is panel.result and "computed by spark" in explorer.clocks.layout.title.text
    assert not panel.run_button.disabled and panel.cancel_button.disabled


def test_run_on_spark_with_the_spark_preset_runs_sparks_own_query(spark):
    """The spark preset's rules: the panel runs Spark's own withWatermark + window query and holds what Spark did
    against the preview; ticking "the preview's rules" runs those rules as a Spark query instead."""
    explorer = Explorer(generate("voltsp", scenario=4), "spark")
    panel = explorer.spark_panel
    panel.run_button.click()
    panel.thread.join(300)
    assert panel.result is not None and panel.result.engine == "spark-native", panel.status.value
    assert "Spark's own query agrees with the preview" in panel.badge.value, panel.status.value + panel.badge.value
    assert explorer.result is panel.result and "computed by spark-native" in explorer.clocks.layout.title.text
    assert panel.progress.value == len(panel.result.watermarks["batch"].unique())
    preview_line = next(t for t in explorer.clocks.data if t.name == PREVIEW_LINE)
    effective = next(t for t in explorer.clocks.data if t.name == "effective watermark")
    assert preview_line.showlegend and len(preview_line.y) > 1  # agreeing: the dotted line lies on Spark's
    assert np.array_equal(np.asarray(preview_line.y), np.asarray(effective.y), equal_nan=True)
    panel.rules.value = True
    panel.run_button.click()
    panel.thread.join(300)
    assert panel.result.engine == "spark" and "Spark agrees with the preview" in panel.badge.value


def test_sweep_the_curve_on_spark_draws_sparks_curve_held_against_the_previews(spark):
    explorer = Explorer(generate("textbook", events=4000), "textbook")
    explorer.wait_for_curve()
    panel = explorer.spark_panel
    panel.sweep_button.click()
    assert panel.run_button.disabled and panel.sweep_button.disabled and not panel.cancel_button.disabled
    panel.thread.join(300)
    assert len(panel.curve) == 41 and panel.curve == explorer.sweep.rows, panel.status.value
    assert "Spark's curve equals the preview's" in panel.badge.value, panel.status.value + panel.badge.value
    assert panel.progress.value == panel.progress.max == 41 and panel.progress.description == "delays"
    line = explorer.sweep.figure.data[0]
    assert "Spark's sweep" in explorer.sweep.figure.layout.title.text
    assert list(line.y) == [r.completeness * 100 for r in panel.curve]
    assert not panel.sweep_button.disabled and panel.cancel_button.disabled
    # cancelled at once: one line, no curve drawn over the preview's
    panel.curve = []
    panel.sweep_button.click()
    panel.cancel_button.click()
    panel.thread.join(300)
    assert "cancelled" in panel.status.value and panel.curve == []


def test_a_result_from_elsewhere_is_drawn_with_the_previews_watermark_beside_it():
    """Spark's Result replaces the preview in the figure, and the preview's effective watermark stays as a dotted
    line: where the two part is seen. The next preview drawn (a control moved) clears it."""
    explorer = Explorer(generate("voltsp", scenario=4), "spark")
    preview = explorer.result
    elsewhere = replace(run(explorer.stream, apply_delay(preview.config, 3 * 10**6)), engine="spark-native")
    explorer.show_result(elsewhere, beside=preview)
    traces = {t.name: t for t in explorer.clocks.data}
    line = traces[PREVIEW_LINE]
    steps = preview.watermarks.dropna(subset=["effective"])
    assert line.showlegend and set(np.asarray(line.y)[np.isfinite(line.y)]) == set(steps["effective"] / S)
    assert not np.array_equal(np.asarray(line.y), np.asarray(traces["effective watermark"].y), equal_nan=True)
    explorer.controls.delay.value = 1
    explorer.wait_until_settled()
    assert len(line.y) == 0 and not line.showlegend


def test_differences_names_the_table_and_row():
    stream = generate("voltsp", scenario=3)
    a = Explorer(stream, "voltsp").result
    b = Explorer(stream, "voltsp").result
    assert differences(a, b) == []
    b.events.loc[2, "status"] = "dropped"
    assert any(d.startswith("events.status: first at row 2") for d in differences(a, b))


def test_compare_panel_small_multiples_and_highlight():
    explorer = Explorer(generate("voltsp", scenario=3), "voltsp")
    panel = explorer.compare_panel
    # until compare is pressed: a word on how to fill the panel, no figure and no list (bare axes said nothing)
    assert "press <b>compare</b> to draw" in panel.message.value
    assert panel.plot.box.layout.display == "none" and panel.disagreements.layout.display == "none"
    panel.presets.value = ("voltsp", "spark", "storm")
    panel.button.click()
    assert panel.plot.box.layout.display is None and panel.disagreements.layout.display is None
    titles = [a.text for a in panel.figure.layout.annotations]
    assert titles == ["voltsp", "spark", "storm"]
    groups = panel.comparison.groups
    assert len(panel.disagreements.options) == sum(len(g.examples) for g in groups)
    assert all(html.escape(g.why) in panel.groups.value for g in groups)
    # the list names each example in a few words (every side's account made lines of 2,600 px); the picked
    # one's account is written out under it, one preset a line
    assert all(len(label) < 60 for label, _ in panel.disagreements.options)
    event = next(i for i, d in enumerate(panel.examples) if d.kind == "event")
    panel.disagreements.value = event
    assert all(f"<b>{name}</b>: {html.escape(seen)}" in panel.example.value
               for name, seen in panel.examples[event].seen.items())
    rings = [t for t in panel.figure.data if t.name == "highlight"]
    wanted = panel.examples[event].event_id
    row = explorer.stream.events.index[explorer.stream.events["id"] == wanted][0]
    assert len(rings) == 3 and all(list(t.y) == [explorer.stream.events["event_time"][row] / S] for t in rings)
    lo, hi = panel.figure.layout.xaxis.range  # every panel is framed on it (their x axes match)
    assert lo <= explorer.stream.events["arrival_time"][row] / S <= hi
    events = [t for t in panel.figure.data if t.name in STATUS_LABELS.values()]  # four status traces per panel
    assert len(events) == 12 and all(sum(len(t.x) for t in events[i:i + 4]) > 0 for i in (0, 4, 8))
    status_of = {label: status for status, label in STATUS_LABELS.items()}
    for i, result in enumerate(panel.comparison.results.values()):  # each panel's events, in its own status
        for t in events[4 * i:4 * i + 4]:
            ev = result.events
            assert set(t.text) <= set(ev.loc[ev["status"] == status_of[t.name], "id"])
    panel.presets.value = ("voltsp",)
    panel.button.click()
    assert "2 to 5" in panel.message.value


def test_a_picked_event_is_drawn_in_every_panel_even_in_a_crowded_stretch():
    """Each panel draws at most COMPARE_POINTS events of a stretch; it used to draw the first ones, so a picked
    event further on was ringed where no point was."""
    from explorer.ui.compare_panel import COMPARE_POINTS
    explorer = Explorer(generate("kafka-export"), "voltsp")
    panel = explorer.compare_panel
    panel.presets.value = ("flink", "voltsp")
    panel.run()
    arrival = explorer.stream.events["arrival_time"].to_numpy()
    lo, hi = int(arrival[0]), int(arrival[3 * COMPARE_POINTS])
    last = explorer.stream.events["id"].iat[3 * COMPARE_POINTS]
    panel.show_range(lo, hi, keep={last})
    drawn = [t for t in panel.figure.data if t.name in STATUS_LABELS.values()]
    per_panel = [[i for t in drawn[4 * p:4 * p + 4] for i in t.text] for p in range(2)]
    assert all(last in ids and len(ids) <= COMPARE_POINTS + 1 for ids in per_panel)


def test_copy_config_as_follows_the_controls():
    explorer = Explorer(generate("voltsp", scenario=3), "voltsp")
    panel = explorer.export_panel
    panel.target.value = "flink-java"
    explorer.controls.delay.value = 4
    assert panel.text.value == export(explorer.controls.config(), "flink-java", ExportSource.of(explorer.stream))
    assert "Duration.ofSeconds(4)" in panel.text.value
    assert np.isfinite(explorer.last_update_ms)


def test_run_on_spark_says_how_long_before_starting_a_huge_run(monkeypatch):
    """The estimate follows the micro-batch plan (many arrival batches per micro-batch): the 20k stream with one
    batch per event is four micro-batches, about 20 s; a run over the limit waits for 'run anyway'."""
    from explorer.ui import panels

    monkeypatch.setattr(panels, "MAX_SPARK_SECONDS", 20)  # the 20k stream stands in for a run of hours
    explorer = Explorer(generate("textbook", events=20_000), "textbook")  # one arrival batch per event
    panel = explorer.spark_panel
    panel.run_button.click()
    assert panel.thread is None
    assert "20,000 events in 4 micro-batches of 5,000 arrival batches: about 21.6 s" in panel.status.value


def test_a_window_still_open_at_the_end_is_never_called_emitted_and_has_no_latency():
    """END_OF_STREAM windows used to read "emitted after batch 4" with a negative latency."""
    from explorer.core.explain import why_window
    from explorer.ui import explain_window
    result = run(generate("voltsp"), preset("voltsp", delay=4 * 1_000_000))
    rows = np.flatnonzero(result.windows["reason"] == "END_OF_STREAM")
    assert len(rows)
    for row in rows:
        assert why_window(result, int(row)).latency_event is None
        text = explain_window(result, int(row))
        assert "never closed" in text and "emitted after" not in text and "latency" not in text.replace(
            "no emit latency", "")
        assert "-" not in text.split("</b>", 1)[1].replace("e-", "")  # no negative number anywhere


def test_a_tombstone_says_its_session_was_replaced_and_carries_no_result():
    """Kafka Streams on-update sessions (the record cache off) forward a null for each session a record replaces;
    the inspector must not read it as an update of its events, and the figure gives it its own legend entry."""
    from explorer.config import WindowSpec
    from explorer.ui import explain_window
    from explorer.ui.figures import REASON_LABELS
    frame = pd.DataFrame({"id": ["a", "b"], "key": ["k", "k"], "event_time": [0.0, 5.0]})
    result = run(stream_from_frame(frame), replace(preset("kafka-streams", delay=0, emit=Emit.ON_UPDATE),
                                                   window=WindowSpec.parse("session:10")))
    row = int(np.flatnonzero(result.windows["reason"] == "TOMBSTONE")[0])
    text = explain_window(result, row)
    assert "tombstone" in text and "0 events" in text and "joined it" not in text
    assert "TOMBSTONE" in REASON_LABELS


def test_each_window_of_an_event_gets_its_verdict_by_the_watermark_it_met():
    """Sliding windows with allowed lateness: a window whose end is past the effective watermark is open; one
    whose end it passed is late, kept while end + lateness is still ahead, refused after."""
    from dataclasses import replace
    from explorer.config import WindowSpec
    from explorer.core.explain import Verdict, why_event
    S = 1_000_000
    lateness = 4 * S
    config = replace(preset("voltsp", delay=0), window=WindowSpec.parse("sliding:10:5")).with_time(
        allowed_lateness=lateness)
    result = run(generate("textbook", events=400), config)
    seen = set()
    for row in range(len(result.events)):
        why = why_event(result, row)
        eff = why.effective_watermark
        for w in why.windows:
            expected = (Verdict.OPEN if eff is None or w.end > eff else
                        Verdict.KEPT_LATE if w.end + lateness > eff else Verdict.WINDOW_CLOSED)
            assert w.verdict is expected, (why.id, w)
            seen.add(w.verdict)
    assert seen == {Verdict.OPEN, Verdict.KEPT_LATE, Verdict.WINDOW_CLOSED}
