"""The page as people read it: controls that never go stale (a target typed again applies again; the inspector
follows the settings), numbers that read right (why a latency is negative, counts in the right number, a word
for a missing value), the upload form and the data box, and emissions that take the hover over the lines."""

import html
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from plotly.callbacks import Points

from explorer import generate, preset, run
from explorer.config import Emit
from explorer.streams import GENERATORS, stream_from_frame
from explorer.ui import Explorer
from explorer.ui.cards import cards_html
from explorer.ui.data_picker import UPLOAD
from explorer.ui.figures import REASON_LABELS, STATUSES
from explorer.ui.inspector import explain_event, explain_window

S = 1_000_000
UI = Path(__file__).parent.parent / "explorer" / "ui"


def _completeness_card(explorer: Explorer) -> str:
    return re.search(r"completeness</div><div style='font-size:18px'>([^<]+)<", explorer.cards.value)[1]


# --- 1. controls that go stale -------------------------------------------------------------------------
def test_a_target_typed_again_unchanged_applies_again_and_the_cards_agree_with_the_line():
    """The target box already read 99 (the default): typing 99 again sent nothing, and the cards stayed below
    99% while the line named the delay reaching it. The apply button applies the target as it stands."""
    explorer = Explorer(generate("textbook", events=4000), "voltsp")
    explorer.wait_for_curve()
    explorer.wait_for_suggestion()
    assert explorer.sweep.target.value == 99 and explorer.result.metrics.completeness < 0.99
    assert "smallest delay reaching 99%" in explorer.sweep.suggestion.value
    assert "<i>apply</i> moves the delay there" in explorer.sweep.suggestion.value  # the line says the cards differ
    explorer.sweep.target.value = 99.0  # typed again: the same value, no change event
    explorer.sweep.apply.click()
    explorer.wait_for_suggestion()
    explorer.wait_until_settled()
    m = explorer.result.metrics
    assert m.completeness >= 0.99
    assert _completeness_card(explorer) == f"{m.completeness:.2%}"
    found = float(re.search(r"<b>([0-9.]+) s</b>", explorer.sweep.suggestion.value)[1])
    assert 0 <= explorer.controls.delay.value - found < explorer.controls.delay.step


def test_the_inspector_explains_its_event_again_when_the_micro_batches_change():
    """It used to keep explaining an event as "batch 8225 … side output" after the micro-batches changed,
    while under the new settings the event was on time in another batch."""
    explorer = Explorer(generate("textbook", events=3000), "voltsp")
    events = explorer.result.events
    row = int(np.flatnonzero(events["status"].to_numpy() != "on_time")[0])
    event_id = events["id"].iat[row]
    before = explorer.inspect_event(row)
    explorer.controls.batches.value = "interval:10s"
    now = explorer.result
    again = int(np.flatnonzero(now.events["id"].to_numpy() == event_id)[0])
    assert explorer.inspector.value == explain_event(now, again) != before
    assert f"in batch {now.events['batch'].iat[again]}<" in explorer.inspector.value


def test_the_inspector_follows_its_window_or_says_it_is_no_longer_one():
    explorer = Explorer(generate("textbook", events=3000), "voltsp")
    windows = explorer.result.windows
    row = int(np.flatnonzero((windows["start"] == 0).to_numpy())[0])
    explorer.inspect_window(row)
    explorer.controls.delay.value = 3.0  # the same window, emitted later: explained under the new delay
    now = explorer.result
    again = int(np.flatnonzero(((now.windows["start"] == 0) & (now.windows["end"] == 10 * S)).to_numpy())[0])
    assert explorer.inspector.value == explain_window(now, again)
    explorer.controls.size.value = 7.0  # [0 s, 10 s) is no window of 7 s windows
    assert "window [0 s, 10 s) is not a window under these settings" in explorer.inspector.value
    assert "Click an event" in explorer.inspector.value


# --- 2. numbers that read wrong ------------------------------------------------------------------------
def test_a_negative_latency_card_says_why():
    cached = Explorer(generate("textbook", events=2000), "kafka-streams")  # the default: the record cache on
    assert "output: on commit: every 30s of arrival time" in cached.cards.value
    kafka = Explorer(generate("textbook", events=2000), "kafka-streams",
                     config=preset("kafka-streams", emit=Emit.ON_UPDATE))  # the cache off: every record forwards
    assert kafka.result.metrics.latency_event.p50 < 0
    assert "before the window ended: update output" in kafka.cards.value
    spark = Explorer(generate("mobile-bursts"), "spark")
    assert "before the window ended" not in spark.cards.value
    spark.controls.idle.value = 1.0
    assert spark.result.metrics.latency_event.p50 < 0
    assert "before the window ended: closed by the idle timeout before its end" in spark.cards.value
    rows = np.flatnonzero((spark.result.windows["latency_event"] < 0).to_numpy())
    said = spark.inspect_window(int(rows[0]))
    assert "before the window ended: closed by the idle timeout" in said


def test_the_output_line_names_the_early_panes_and_the_window_boxes_their_kind():
    """Seen in Chromium: under Beam with early firings typed in the engine rules, the cards' output line said only
    "a window when the watermark closes it" beside an inspector full of EARLY panes; and with the window kind set
    to cumulate, its step was typed in a box labelled "slide"."""
    beam = Explorer(generate("kafka-export"), "beam")
    assert "early pane" not in beam.cards.value
    beam.controls.rules.widgets["early_firings"].value = "2s"
    beam.wait_until_settled()
    assert (beam.result.windows["reason"] == "EARLY").any()
    assert "before that, an early pane 2s of processing time after each pane's first element " \
           "(--early-firings 2s)" in html.unescape(beam.cards.value)
    controls = beam.controls
    said = {}
    for kind in ("tumbling", "sliding", "session", "cumulate"):
        controls.window_kind.value = kind
        said[kind] = (controls.size.description, controls.slide.description)
    assert said == {"tumbling": ("size (s)", "slide (s)"), "sliding": ("size (s)", "slide (s)"),
                    "session": ("gap (s)", "slide (s)"), "cumulate": ("size (s)", "step (s)")}


def test_a_window_fired_by_a_partition_going_idle_says_so():
    """withIdleness decides idleness at the periodic emit between batches, and the trace has an 'idle check' row
    where that moved the merged watermark. A window fired there read, in the inspector, like one fired by a
    record's watermark, at a time no record arrived; it says the idle check now, and no other window does."""
    flink = Explorer(generate("skewed-partitions"), "flink")
    flink.controls.window_kind.value = "tumbling"
    flink.controls.size.value = 10
    flink.controls.source_idle.value = 1.0
    flink.wait_until_settled()
    trace, windows = flink.result.watermarks, flink.result.windows
    at_check = windows["emit_time"].isin(trace.loc[trace["at"] == "idle check", "time"]).to_numpy()
    fired = np.flatnonzero(at_check & (windows["reason"] == "WATERMARK").to_numpy())
    assert len(fired) and (~at_check).any()
    said = "moved at the periodic emit's idle check: a partition silent for more than 1 s left the merge"
    assert said in flink.inspect_window(int(fired[0]))
    assert said not in flink.inspect_window(int(np.flatnonzero(~at_check)[0]))


def test_the_two_clocks_write_seconds_past_ten_thousand_whole():
    """Seen in Chromium on skewed-partitions (40,000 events, 20,000 s): the seconds axes read "10.03k", Plotly's
    SI suffix, which says no duration; they read "10,030" now."""
    explorer = Explorer(generate("textbook", events=200), "flink")
    for axis in (explorer.clocks.layout.xaxis, explorer.clocks.layout.yaxis):
        assert (axis.exponentformat, axis.separatethousands) == ("none", True)


def test_counts_agree_with_their_nouns_and_a_missing_value_is_a_word():
    """"first results after 5 s instead of -", "1 revisions", "1 event(s)"."""
    explorer = Explorer(generate("voltsp", scenario=3), "voltsp")
    best = SimpleNamespace(latency=5.0, second=2 * S, tuning=SimpleNamespace(delay=0, metrics=SimpleNamespace(updates=1)))
    alone = SimpleNamespace(metrics=SimpleNamespace(latency_event=SimpleNamespace(mean=None)))
    explorer.sweep.suggestion.value = ""
    explorer.sweep._say_lateness(best, alone)
    said = explorer.sweep.suggestion.value
    assert "first results after 5 s instead of none emitted" in said and "at the cost of 1 revision " in said
    assert "instead of -" not in said

    frame = pd.DataFrame({"id": ["a"], "key": ["k"], "event_time": [1.0], "arrival_time": [2.0]})
    lone = run(stream_from_frame(frame), replace(preset("kafka-streams", delay=0)))
    assert "1 event: a" in explain_window(lone, 0)
    assert "the commit at 30 s (one every 30 s of arrival time) forwarded" in explain_window(lone, 0)  # the cache
    uncached = run(stream_from_frame(frame), preset("kafka-streams", delay=0, emit=Emit.ON_UPDATE))
    assert "a joined it and the engine forwarded its new result at once" in explain_window(uncached, 0)
    never = run(stream_from_frame(frame), preset("voltsp", delay=60 * S))  # nothing emitted: no latency
    assert never.metrics.latency_event.p50 is None
    cards = cards_html(never.metrics, never.config, never.windows)
    assert ">none emitted<" in cards and ">-<" not in cards


def test_no_text_of_the_ui_says_a_count_with_an_s_in_brackets():
    """Counts are worded by words.plural ("1 event", "2 events"), never "event(s)" or "kind(s)"."""
    for path in sorted(UI.glob("*.py")):
        assert not re.search(r"[a-z]\(s\)", path.read_text()), path.name


def test_the_upload_button_says_no_count_of_files():
    """FileUpload writes "description (files held)": after the form cleared the file it read "upload a file (0)".
    The page hides that text and shows the tooltip, which the form keeps as the label."""
    explorer = Explorer(generate("voltsp"), "voltsp")
    form = explorer.upload_form
    assert "wx-upload" in form.upload._dom_classes and form.upload.tooltip == "upload a file"
    css = next(w.value for w in form.box.children if "<style>" in getattr(w, "value", ""))
    assert ".wx-upload{font-size:0" in css and "content:attr(title)" in css
    content = pd.DataFrame({"id": ["a"], "event_time": [1.0]}).to_csv(index=False).encode()
    form.upload.set_state({"value": [{"name": "mine.csv", "type": "", "size": len(content), "content": content,
                                      "last_modified": 0}]})
    assert form.loaded is not None and form.upload.value == () and form.upload.tooltip == "upload another file"


def test_an_upload_hides_the_generators_options():
    explorer = Explorer(generate("textbook", events=500), "voltsp")
    data = explorer.data
    assert data.seed.layout.display is None and data.size.layout.display is None
    data.source.value = UPLOAD
    assert data.options.layout.display == "none" and data.load_button.layout.display == "none"
    assert data.upload_form.box.layout.display is None
    data.source.value = "textbook"
    assert data.options.layout.display is None and data.load_button.layout.display is None
    for name in GENERATORS:  # a generator shows the options it takes, and only those
        data.source.value = name
        takes = GENERATORS[name].make.__code__.co_varnames
        assert (data.seed.layout.display is None) == ("seed" in takes), name
        assert (data.size.layout.display is None) == ("events" in takes), name


def test_the_upload_form_names_each_column_once():
    explorer = Explorer(generate("voltsp"), "voltsp")

    def descriptions(widget):
        own = [widget.description] if getattr(widget, "description", "") else []
        return own + [d for child in getattr(widget, "children", ()) for d in descriptions(child)]

    said = descriptions(explorer.upload_form.box)
    for name in ("event_time", "arrival_time"):
        assert said.count(name) == 1, said


# --- 3. emissions clickable above the lines ------------------------------------------------------------
def test_the_emission_and_event_markers_take_the_hover_and_the_click_over_the_watermark_lines():
    """Plotly ranks an SVG line's vertex within 3 px nearer than a WebGL marker's centre: the effective
    watermark's step took the hover and the click meant for the emission diamond sitting on it."""
    explorer = Explorer(generate("kafka-export"), "kafka-streams")
    view = explorer.clocks_view
    assert explorer.clocks.layout.hovermode == "closest"
    for line in ("watermark", "effective", "preview"):
        assert view.trace(line).hoverinfo == "skip" and view.trace(line).hovertemplate is None, line
    for name in (*REASON_LABELS, *STATUSES):
        trace = view.trace(name)
        assert trace.hoverinfo != "skip" and trace.hovertemplate, name
    drawn = [name for name in REASON_LABELS if len(view.trace(name).x)]
    assert drawn  # the Kafka export's emissions are drawn, and clicking one inspects its window
    name = drawn[0]
    trace = view.trace(name)
    trace._dispatch_on_click(Points(point_inds=[0], xs=list(trace.x), ys=list(trace.y), trace_name=trace.name,
                                    trace_index=explorer.clocks.data.index(trace)), None)
    assert "emitted after batch" in explorer.inspector.value


@pytest.mark.parametrize("text", ["-", "none"])
def test_words_duration_says_a_missing_value_in_the_word_asked(text):
    from explorer.ui.words import duration, plural
    assert duration(None, text) == text and duration(float("nan"), text) == text and duration(1_500_000) == "1.5 s"
    assert plural(1, "event") == "1 event" and plural(2_000, "batch", "batches") == "2,000 batches"


def test_a_window_a_late_event_opened_reads_as_a_first_late_result_not_a_replacement():
    """Its first emission is a LATE_UPDATE at revision 1: there is no earlier result to replace."""
    from explorer.config import WindowSpec

    frame = pd.DataFrame({"id": ["a", "b", "c"], "key": "k", "event_time": [25, 3, 26], "arrival_time": [0, 5, 6]})
    config = replace(preset("beam", delay=0, allowed_lateness=60_000_000), window=WindowSpec.parse("tumbling:10"))
    result = run(stream_from_frame(frame), config)
    row = int(np.flatnonzero(result.windows["start"].to_numpy() == 0)[0])
    assert (result.windows["reason"].iloc[row], result.windows["revision"].iloc[row]) == ("LATE_UPDATE", 1)
    text = explain_window(result, row)
    assert "its first result is a late one" in text and "replaces the earlier one" not in text
    assert "re-emitted" not in REASON_LABELS["LATE_UPDATE"]
