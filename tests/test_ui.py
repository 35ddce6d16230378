"""In-kernel tests of the explorer: set a control, check the figure's traces against the Result."""

import numpy as np
import pandas as pd
import pytest

from explorer import generate
from explorer.ui import Explorer
from explorer.ui.figures import STATUSES, compact

S = 1e6


LABELS = {"on time": "on_time", "late, updated": "late_updated", "side output": "side_output", "dropped": "dropped"}


def trace(explorer, name):
    return next(t for t in explorer.clocks.data if t.name == name)


def events_drawn(explorer) -> int:
    """Events drawn over every status trace."""
    return sum(len(trace(explorer, label).x) for label in LABELS)


@pytest.fixture
def voltsp():
    return Explorer(generate("voltsp", scenario=3), "voltsp")


def test_event_traces_match_the_result(voltsp):
    voltsp.controls.strategy.value = "max"
    events = voltsp.result.events
    labels = {"on_time": "on time", "late_updated": "late, updated", "side_output": "side output", "dropped": "dropped"}
    for status in STATUSES:
        expected = events[events["status"] == status]
        shown = trace(voltsp, labels[status])
        assert sorted(shown.y) == sorted(expected["event_time"] / S)
        assert sorted(shown.x) == sorted(expected["arrival_time"] / S)
    assert list(trace(voltsp, "side output").y) == [8.0]  # e3, as in 000's MAX table


def test_watermark_lines_follow_the_delay_slider(voltsp):
    voltsp.controls.strategy.value = "max"
    raw = [y for y in trace(voltsp, "watermark").y if not np.isnan(y)]
    assert raw == [5.0, 12.0, 12.0, 25.0]
    voltsp.controls.delay.value = 3.0
    eff = [y for y in trace(voltsp, "effective watermark").y if not np.isnan(y)]
    assert eff == [2.0, 9.0, 9.0, 22.0]
    assert len(trace(voltsp, "side output").y) == 0  # delay 3 s rescues e3
    markers = trace(voltsp, "emitted: watermark")
    assert len(markers.x) == 2 and len(trace(voltsp, "still open at end").x) == 1 == len(voltsp.result.windows) - 2
    assert "WATERMARK" in markers.text[0] and list(markers.y) == [10.0, 20.0]
    # hovering a step says whose watermark it is (one per key here)
    owner = trace(voltsp, "effective watermark").text
    keys = voltsp.result.events["key"].unique()
    assert len(keys) == 1 and set(owner) - {""} == {f"key {keys[0]}" if keys[0] else "key (empty)"}


def test_preset_fills_controls_and_keeps_delay():
    explorer = Explorer(generate("textbook", events=500), "voltsp")
    explorer.controls.delay.value = 4.0
    explorer.controls.preset.value = "textbook"
    assert explorer.controls.strategy.value == "bounded"
    assert explorer.controls.late.value == "drop"
    assert explorer.result.config.time.bound == 4_000_000 and explorer.result.config.time.delay == 0
    # the slider is L here, and the bound box it overrides is not left showing
    assert explorer.controls.delay.description == "delay = L (s)"
    assert explorer.controls.bound.layout.display == "none"
    rules = explorer.controls.rules.widgets
    assert all(w.layout.display is None for w in explorer.controls.all
               if w is not explorer.controls.bound and w not in rules.values())
    assert rules["end_inclusive"].layout.display is None and rules["session_close_strict"].layout.display == "none"
    explorer.controls.preset.value = "flink"
    assert explorer.controls.delay.description == "delay (s)" and explorer.controls.bound.layout.display is None
    assert explorer.result.config.time.delay == 4_000_000


def test_inspector_explains_a_late_event_and_a_window(voltsp):
    voltsp.controls.strategy.value = "max"
    row = int(np.flatnonzero(voltsp.result.events["id"] == "e3")[0])
    text = voltsp.inspect_event(row)
    assert "refused" in text and "window had closed" in text and "side output" in text
    window_row = int(np.flatnonzero(voltsp.result.windows["start"] == 0)[0])
    text = voltsp.inspect_window(window_row)
    assert "WATERMARK" in text and "e1, e2, e6" in text


def test_clicking_a_point_inspects_its_own_event(voltsp):
    """Each status has its own trace, so a click's point index is looked up in that trace's rows."""
    from plotly.callbacks import Points

    voltsp.controls.strategy.value = "max"
    side = trace(voltsp, "side output")
    side._dispatch_on_click(Points(point_inds=[0], xs=list(side.x), ys=list(side.y), trace_name=side.name,
                                   trace_index=voltsp.clocks.data.index(side)), None)
    assert "event e3" in voltsp.inspector.value and "side output" in voltsp.inspector.value
    on_time = trace(voltsp, "on time")
    last = len(on_time.x) - 1
    on_time._dispatch_on_click(Points(point_inds=[last], xs=list(on_time.x), ys=list(on_time.y),
                                      trace_name=on_time.name, trace_index=voltsp.clocks.data.index(on_time)), None)
    events = voltsp.result.events
    expected = events[(events["arrival_time"] / S == on_time.x[last]) & (events["event_time"] / S == on_time.y[last])]
    assert f"event {expected['id'].iloc[0]}" in voltsp.inspector.value


def test_stepper_replays_batches(voltsp):
    voltsp.batch.value = 2
    shown = sum(len(trace(voltsp, label).x) for label in ("on time", "late, updated", "side output", "dropped"))
    assert shown == int((voltsp.result.events["batch"] <= 2).sum()) == 4
    assert all(x <= 8.0 for x in trace(voltsp, "watermark").x if not np.isnan(x))
    voltsp.batch.value = voltsp.batch.max
    assert sum(len(trace(voltsp, label).x) for label in ("on time", "side output")) == 6


def test_key_picker_and_bad_controls_show_words():
    explorer = Explorer(generate("idle-key", keys=2), "voltsp")
    assert "quiet" in explorer.key.options
    explorer.key.value = "quiet"
    assert len(trace(explorer, "on time").x) == int((explorer.result.events["key"] == "quiet").sum())
    explorer.controls.batches.value = "count:zero"
    assert "count:N" in explorer.message.value


def test_target_completeness_suggests_a_delay():
    explorer = Explorer(generate("textbook", events=3000), "textbook")
    explorer.wait_for_curve()
    explorer.sweep.target.value = 95
    assert "smallest delay reaching 95%" in explorer.sweep.suggestion.value
    curve = explorer.sweep.figure.data[0]
    assert len(curve.y) == 41 and list(curve.y) == sorted(curve.y)


def test_the_side_figures_follow_once_the_slider_rests_in_one_message_each():
    explorer = Explorer(generate("textbook", events=3000), "textbook")
    explorer.controls.delay.value = 5.0
    explorer.wait_for_curve()
    messages = {"curve": [], "histogram": []}
    for name in messages:
        (explorer.sweep.figure if name == "curve" else explorer.histogram).observe(
            lambda change, name=name: change["new"] and messages[name].append(change["new"]),
            names=["_py2js_restyle", "_py2js_update", "_py2js_relayout"])
    explorer.controls.delay.value = 9.5  # a delay of the sweep (41 from 0 to the slider's end, 38 s here)
    assert messages == {"curve": [], "histogram": []}  # while the slider moves, only the two clocks redraw
    explorer.wait_until_settled()
    assert explorer.histogram.layout.shapes[-1].x0 == 9.5
    curve, current = explorer.sweep.figure.data
    on_curve = list(curve.text).index("9.5")
    assert (current.x[0], current.y[0]) == pytest.approx((curve.x[on_curve], curve.y[on_curve]))
    assert current.y[0] == pytest.approx(explorer.result.metrics.completeness * 100)
    # x and y together: every message is a full redraw of its figure in the page
    assert len(messages["curve"]) == len(messages["histogram"]) == 1


def _upload(explorer, name: str, content: bytes) -> None:
    """What the page sends when a file is picked (its message, through the widget's own deserializer)."""
    explorer.upload_form.upload.set_state({"value": [{"name": name, "type": "", "size": len(content),
                                                      "content": memoryview(content), "last_modified": 0}]})


def test_upload_is_parsed_as_data_mapped_by_its_names_and_used():
    frame = pd.DataFrame({"ts": [1.0, 2.0, 12.0], "ingest_ts": [1.5, 2.5, 12.5], "device_id": ["a", "a", "b"]})
    explorer = Explorer(generate("voltsp"), "voltsp")
    form = explorer.upload_form
    _upload(explorer, "mine.csv", frame.to_csv(index=False).encode())
    assert form.columns() == {"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id"}
    form.use_file()
    assert explorer.stream.name == "mine.csv" and len(explorer.result.events) == 3
    assert explorer.key.options == ("(all keys)", "a", "b") or "a" in explorer.key.options
    assert "ts → event_time: seconds (relative, detected)" in explorer.message.value
    explorer.export_panel.target.value = "pyspark"  # the snippet reads the file's own columns
    assert "EVENT_TIME = ('ts', 'number', 's', '')" in explorer.export_panel.text.value
    assert "KEY = 'device_id'" in explorer.export_panel.text.value
    for name, content, says in [("evil.pkl", b"\x80\x04", "unknown file type"), ("empty.csv", b"", "empty"),
                                ("junk.parquet", b"PAR1 not really", "cannot be read as PARQUET")]:
        _upload(explorer, name, content)
        assert says in explorer.message.value and form.use.disabled


def test_a_failed_upload_leaves_nothing_to_use_and_the_same_file_can_be_uploaded_again():
    good = pd.DataFrame({"event_time": [1, 2, 3]}).to_csv(index=False).encode()
    explorer = Explorer(generate("voltsp"), "voltsp")
    form = explorer.upload_form
    _upload(explorer, "a.csv", good)
    form.use_file()
    assert explorer.stream.name == "a.csv"
    _upload(explorer, "b.parquet", b"PAR1 broken")
    assert form.use.disabled and "b.parquet" in explorer.message.value
    form.use_file()  # a click that gets through anyway must not reload the previous file over the error
    assert "b.parquet" in explorer.message.value and "cannot be read" in explorer.message.value
    _upload(explorer, "a.csv", good)
    assert not form.use.disabled and "a.csv: 3 rows" in explorer.message.value
    explorer.source.value = "voltsp"
    explorer._on_load()
    explorer.source.value = "(uploaded file)"
    _upload(explorer, "a.csv", good)  # the same file again: it reaches the form only if its last value was cleared
    assert "a.csv: 3 rows" in explorer.message.value


def test_upload_advice_names_the_forms_boxes_not_cli_flags():
    frame = pd.DataFrame({"when": ["2026-11-20T09:00:00Z", "2026-11-20T09:00:01Z"], "got": [5.0, 6.0]})
    explorer = Explorer(generate("voltsp"), "voltsp")
    form = explorer.upload_form
    _upload(explorer, "mine.csv", frame.to_csv(index=False).encode())
    form.use_file()
    assert explorer.message.value.endswith("choose the column that holds event time in the event_time box</span>")
    form.mapping["event_time"].value, form.mapping["arrival_time"].value = "when", "got"
    form.use_file()
    assert "set arrival_time to ms in the box beside arrival_time (what its numeric times count)" in \
        explorer.message.value
    assert "--" not in explorer.message.value


def test_each_time_columns_unit_can_be_set_in_the_form():
    from explorer.timeutil import MICROS
    frame = pd.DataFrame({"t": [1000, 2000, 12000], "seen": [1500, 2500, 12500]})  # milliseconds since the start
    explorer = Explorer(generate("voltsp"), "voltsp")
    form = explorer.upload_form
    _upload(explorer, "ms.csv", frame.to_csv(index=False).encode())
    form.mapping["event_time"].value, form.mapping["arrival_time"].value = "t", "seen"
    form.units["event_time"].value = form.units["arrival_time"].value = "ms"
    form.use_file()
    assert explorer.stream.events["event_time"].tolist() == [1 * MICROS["s"], 2 * MICROS["s"], 12 * MICROS["s"]]
    assert "milliseconds (relative, given)" in explorer.message.value


@pytest.mark.parametrize("name", sorted(__import__("explorer.config", fromlist=["PRESETS"]).PRESETS))
def test_every_preset_fills_the_controls_and_draws(name):
    """One contract over the family: picking any preset fills every control with its rules, the controls
    read back the same configuration, and the figure is drawn from it."""
    from explorer.config import preset as make_preset

    explorer = Explorer(generate("voltsp", scenario=3), "voltsp")
    explorer.controls.preset.value = name
    config = explorer.controls.config()
    expected = make_preset(name, delay=0)
    for field in ("strategy", "scope", "late_policy", "lateness_rule", "end_inclusive", "session_close_strict",
                  "source_idle_timeout", "schedule"):
        assert getattr(config.time, field) == getattr(expected.time, field), field
    assert explorer.result.config == config and explorer.message.value == ""  # no error shown
    assert events_drawn(explorer) == 6


def test_a_moving_control_draws_a_light_frame_then_every_event():
    explorer = Explorer(generate("textbook", events=20_000), "textbook")
    assert events_drawn(explorer) == 20_000  # opening: the full budget
    explorer.controls.delay.value = 6.0
    assert events_drawn(explorer) <= 5_000
    assert "showing 5,000 of 20,000 events" in explorer.figure_note
    assert trace(explorer, "emitted: watermark").text is None  # no hover text in a light frame
    light = trace(explorer, "on time")
    exact = explorer.result.events["arrival_time"].to_numpy()[explorer.clocks_view.rows["on_time"]] / 1e6
    assert light.x.dtype == np.float32 and np.abs(light.x - exact).max() < 1e-3  # half the bytes, within 1 ms
    explorer.wait_until_settled()
    assert trace(explorer, "on time").x.dtype == np.float64
    assert "WATERMARK" in trace(explorer, "emitted: watermark").text[0]
    assert events_drawn(explorer) == 20_000 and "events" not in explorer.figure_note


def test_the_title_says_what_the_figure_leaves_out_in_lines_that_fit_a_1280_px_page():
    """The Kafka-like export (50k events) under Beam with early firings leaves out events, watermark steps and
    emissions: on one small line those notes ran to ~300 characters and the emissions' one was cut off at the
    figure's edge in a 1280 px page (seen in Chromium). Each line now holds at most TITLE_LINE_CHARS."""
    import re

    from explorer.ui.clocks import TITLE_LINE_CHARS

    explorer = Explorer(generate("kafka-export"), "beam")
    explorer.controls.rules.widgets["early_firings"].value = "2s"
    explorer.wait_until_settled()
    title = explorer.clocks.layout.title.text
    lines = [re.sub("<[^>]+>", "", line).replace("&#x27;", "'") for line in title.split("<br>")[1:]]
    assert "emissions drawn" in " ".join(lines) and "events (all late ones" in " ".join(lines)  # all three notes
    assert len(lines) >= 2 and all(len(line) <= TITLE_LINE_CHARS for line in lines), lines


def test_a_settled_frame_that_samples_events_still_has_hover_text():
    explorer = Explorer(generate("textbook", events=45_000), "textbook")  # over the 40,000-event budget
    assert events_drawn(explorer) == 40_000 and "showing 40,000 of 45,000 events" in explorer.figure_note
    assert "WATERMARK" in trace(explorer, "emitted: watermark").text[0]
    assert set(trace(explorer, "watermark").text) == {"global", ""}
    assert trace(explorer, "on time").x.dtype == np.float64


def test_an_update_leaves_out_traces_that_did_not_change(voltsp):
    """The delay moves the effective watermark, not the raw one or the diagonal: those are not resent."""
    sent = []  # the update messages to the page
    voltsp.clocks.observe(lambda change: change["new"] and sent.append(change["new"]), names="_py2js_update")
    voltsp.controls.delay.value = 2.0
    names = [voltsp.clocks.data[i].name for i in sent[0]["style_traces"]]
    assert "effective watermark" in names and "watermark" not in names and "ideal (event = arrival)" not in names
    raw = [y for y in trace(voltsp, "watermark").y if not np.isnan(y)]
    assert [y for y in trace(voltsp, "effective watermark").y if not np.isnan(y)] == [max(0.0, y - 2.0) for y in raw]
    sent.clear()
    voltsp.refresh()  # the same settings again: nothing to send
    assert sent == []


def test_light_frames_use_float32_only_where_it_moves_no_point_by_a_millisecond():
    small = np.array([0.0, 0.0005, 9_999.9995, np.nan])
    assert compact(small).dtype == np.float32 and np.isnan(compact(small)[-1])
    assert np.nanmax(np.abs(compact(small) - small)) < 1e-3
    epoch = np.array([1.7e9, 1.7e9 + 0.25])  # times in seconds since 1970: float32 would round them to 128 s
    assert compact(epoch).dtype == np.float64 and list(compact(epoch)) == list(epoch)


def test_a_sweep_for_settings_that_changed_stops():
    """A 1M-event sweep takes ~10 s of both cores: once another control makes it moot it stops, and the
    curve of the settings that stay is drawn once the controls rest."""
    from explorer.ui import Explorer
    from explorer import generate

    explorer = Explorer(generate("textbook", events=20_000), "voltsp")
    explorer.wait_for_curve()
    explorer.controls.idle.value = 30
    explorer.wait_until_settled()
    running = explorer.sweep.generation
    explorer.controls.idle.value = 31  # before that sweep is done: it is told to stop
    assert explorer.sweep.generation > running and explorer.sweep.key is None
    explorer.wait_for_curve()
    assert explorer.sweep.rows and explorer.sweep.key[1].time.idle_timeout == 31_000_000


def test_the_curve_held_against_spark_is_the_one_swept_for_those_settings():
    """While the sweep for new settings runs, the rows shown are the old settings': they are not these settings'
    curve (Spark's sweep is held against rows_for, and stale rows made a false "differ")."""
    from explorer.ui import Explorer
    from explorer import generate

    explorer = Explorer(generate("textbook", events=20_000), "voltsp")
    explorer.wait_for_curve()
    before = explorer.controls.config()
    assert explorer.sweep.rows_for(explorer.stream, before) == explorer.sweep.rows != []
    explorer.controls.idle.value = 30
    explorer.wait_until_settled()  # the new sweep starts (about 0.5 s of work at 20k events)
    after = explorer.controls.config()
    assert explorer.sweep.rows_for(explorer.stream, after) is None
    explorer.wait_for_curve()
    assert explorer.sweep.rows_for(explorer.stream, after) == explorer.sweep.rows
    assert explorer.sweep.rows_for(explorer.stream, before) is None


def test_a_wall_clock_stream_is_drawn_and_explained_in_date_times():
    """A Kafka export's times are instants: date axes (Plotly reads ms since 1970), date-times in the hover
    text and the inspector, durations in words; a relative stream keeps seconds. (The axes used to read
    "1.7320897B" and the inspector "1.73209e+09 s".)"""
    from explorer import generate
    from explorer.ui import Explorer

    explorer = Explorer(generate("kafka-export", devices=3, duration=300), "voltsp")
    layout = explorer.clocks.layout
    assert layout.xaxis.type == layout.yaxis.type == "date"
    events = explorer.clocks_view.trace("on_time")
    first = explorer.result.events["arrival_time"].min()
    assert min(events.x) == pytest.approx(first / 1_000)  # ms since 1970
    assert "%{x|%Y-%m-%d %H:%M:%S.%L}" in events.hovertemplate
    said = explorer.inspect_event(0)
    assert "event time 2026-11-20 09:0" in said and "e+" not in said
    assert "[2026-11-20 09:0" in explorer.inspect_window(0)
    assert "e+" not in explorer.cards.value

    relative = Explorer(generate("voltsp", scenario=3), "voltsp")
    assert relative.clocks.layout.xaxis.type == "linear"
    assert "event time 2 s, arrived 7 s" in relative.inspect_event(0)


def test_the_target_box_names_the_exact_delay_and_sets_the_slider_so_the_cards_agree():
    """The suggestion is tune's exact delay, not a point of the sweep's grid; the slider moves to its first
    step at or above it, and the cards then show the target reached."""
    from explorer import generate
    from explorer.metrics import tune
    from explorer.timeutil import exact_seconds
    from explorer.ui import Explorer

    explorer = Explorer(generate("textbook", events=5000), "textbook")
    explorer.wait_for_curve()
    explorer.sweep.target.value = 98.5
    explorer.wait_for_suggestion()
    explorer.wait_until_settled()
    found = tune(explorer.stream, explorer.controls.config(delay=0), 0.985)
    assert f"<b>{exact_seconds(found.delay)} s</b>" in explorer.sweep.suggestion.value
    assert 0 <= explorer.controls.delay.value * 1_000_000 - found.delay < explorer.controls.delay.step * 1_000_000
    assert explorer.result.metrics.completeness >= 0.985


def test_switching_streams_clears_what_the_old_one_showed():
    explorer = Explorer(generate("textbook", events=2000), "textbook")
    explorer.wait_for_curve()
    explorer.wait_for_suggestion()
    explorer.inspect_event(0)
    explorer.compare_panel.run()
    old_curve = list(explorer.sweep.figure.data[0].y)
    assert explorer.compare_panel.disagreements.options and "event e" in explorer.inspector.value
    explorer._load_stream(generate("voltsp"), reset=True)
    assert "Click an event" in explorer.inspector.value
    assert explorer.compare_panel.comparison is None and not explorer.compare_panel.disagreements.options
    assert "computing" in explorer.sweep.suggestion.value
    assert "computing" in explorer.sweep.figure.layout.title.text or list(explorer.sweep.figure.data[0].y) != old_curve
    explorer.wait_for_curve()
    explorer.wait_for_suggestion()
    assert explorer.sweep.figure.layout.title.text == "completeness vs latency"
    assert list(explorer.sweep.figure.data[0].y) != old_curve and "smallest delay" in explorer.sweep.suggestion.value
    assert explorer.clocks.layout.uirevision == f"stream-{explorer._stream_generation}"


def _json_safe_messages(figure) -> list[str]:
    """Every message the figure sends from now on, checked as the kernel packs it (json, allow_nan=False);
    returns the errors. A NaN in a list (not a binary array) made the page show "Out of range float values
    are not JSON compliant"."""
    import json
    from ipywidgets.widgets.widget import _remove_buffers
    from plotly.serializers import _py_to_js
    errors = []

    def check(change):
        state, _, _ = _remove_buffers({"m": _py_to_js(change["new"], None)})
        try:
            json.dumps(state, allow_nan=False)
        except ValueError as exc:
            errors.append(f"{change['name']}: {exc}")

    figure.observe(check, names=["_py2js_restyle", "_py2js_update", "_py2js_relayout", "_py2js_addTraces"])
    return errors


def test_no_figure_message_carries_a_nan_the_page_cannot_read():
    four = pd.DataFrame({"id": ["e1", "e2", "e3", "e4"], "event_time": [2, 4, 8, 15], "arrival_time": [3, 5, 13, 9]})
    from explorer.streams import stream_from_frame
    explorer = Explorer(generate("voltsp"), "voltsp")
    errors = [_json_safe_messages(fig) for fig in (explorer.clocks, explorer.histogram, explorer.sweep.figure)]
    explorer._load_stream(stream_from_frame(four, name="four events"), reset=True)
    explorer.wait_for_curve()
    assert any(r.avg_emit_latency is None for r in explorer.sweep.rows)  # the case: a delay emitting nothing
    explorer.controls.delay.value = 12.0
    explorer.wait_for_curve()
    assert errors == [[], [], []]


def test_an_upload_too_big_for_memory_is_refused_before_it_is_parsed(monkeypatch):
    """An upload was size-checked only once parsed: a 0.42 MB Parquet upload took 1.3 GB in the kernel."""
    import io
    from explorer import budget
    from explorer.streams.upload import read_upload
    buffer = io.BytesIO()
    pd.DataFrame({"event_time": np.arange(50_000.0)}).to_parquet(buffer)
    monkeypatch.setattr(budget, "available_bytes", lambda: 10 * 1024**2)  # a machine with 10 MB to spare
    monkeypatch.setattr(pd, "read_parquet", lambda *a, **k: pytest.fail("parsed before the check"))
    with pytest.raises(Exception, match=r"big.parquet: reading its 50,000 rows needs about .* GiB but 0.0 GiB"):
        read_upload("big.parquet", buffer.getvalue())


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_kafka_export_uploaded_in_any_of_its_time_formats_gives_the_clis_result(tmp_path, suffix):
    """ts and ingest_ts as ISO + epoch ms, both epoch ms, or both ISO with offsets: uploaded with the guessed
    mapping and no unit set, each gives the Result the CLI's loader gives the mixed file."""
    from explorer import preset, run
    from explorer.cli import main
    from explorer.streams import load_events
    columns = {"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id", "partition": "partition",
               "offset": "offset"}
    config = preset("voltsp", delay=5_000_000)
    explorer = Explorer(generate("voltsp"), "voltsp", config=config)
    expected = None
    for times in ("mixed", "epoch-ms", "iso"):
        path = tmp_path / f"{times}{suffix}"
        assert main(["generate", "kafka-export", "--times", times, "--devices", "5", "--duration", "600",
                     "--out", str(path)]) == 0
        if expected is None:
            expected = run(load_events(path, columns=columns), config)
        _upload(explorer, path.name, path.read_bytes())
        assert explorer.upload_form.columns() == columns
        explorer.upload_form.use_file()
        assert explorer.stream.absolute and explorer.clocks.layout.xaxis.type == "date"
        assert explorer.result.metrics == expected.metrics, times
        pd.testing.assert_frame_equal(explorer.result.events, expected.events, obj=times)


def test_where_the_engine_has_allowed_lateness_the_target_box_offers_it_as_a_second_knob():
    """voltsp keeps closed windows for late events; Spark cannot: only the first is offered the frontier."""
    from explorer.metrics import best_point, frontier
    from explorer.timeutil import human_duration
    stream = generate("textbook", events=3000)
    for name, offered in (("voltsp", True), ("spark", False)):
        explorer = Explorer(stream, name)
        explorer.wait_for_curve()
        explorer.sweep.target.value = 95
        explorer.wait_for_suggestion()
        text = explorer.sweep.suggestion.value
        assert ("with allowed lateness" in text) is offered, name
    voltsp = Explorer(stream, "voltsp")
    voltsp.wait_for_curve()
    voltsp.sweep.target.value = 95
    voltsp.wait_for_suggestion()
    best = best_point(frontier(stream, voltsp.controls.config(), 0.95, "allowed-lateness", steps=4))
    assert f"with allowed lateness {human_duration(best.second)}" in voltsp.sweep.suggestion.value


def test_each_slider_says_its_value_as_a_duration():
    """A Kafka export's delays run to minutes: the slider's 316.0 is said as 5 min 16 s beside it."""
    explorer = Explorer(generate("kafka-export", devices=3, duration=300), "voltsp")
    controls = explorer.controls
    controls.delay.max = 400.0
    controls.delay.value = 316.0
    controls.allowed.value = 2.5
    said = {name: box.value for name, box in controls.durations.items()}
    assert "5 min 16 s" in said["delay"] and "2.5 s" in said["allowed"] and "off" in said["idle"]
    controls.idle.value = 90.0
    assert "1 min 30 s" in controls.durations["idle"].value


def test_the_inputs_watermark_rows_are_drawn_and_the_scripted_strategy_follows_them():
    """Flink's sliding test as a file: the rows are drawn whatever the strategy; picking 'scripted' makes them the
    watermark (one side output, two elements partly dropped, shown on a card); the stepper shows those arrived."""
    from explorer import load_events

    explorer = Explorer(load_events("data/flink-sliding-scripted.csv", "ms"), "flink")
    assert list(trace(explorer, "watermark rows (input)").y) == [2.0, 3.001, 6.001, 25.001]
    explorer.controls.batches.value = "event"
    explorer.controls.delay.value = 0
    explorer.controls.window_kind.value = "sliding"
    explorer.controls.size.value, explorer.controls.slide.value = 3.0, 1.0
    explorer.controls.strategy.value = "scripted"
    assert explorer.result.metrics.side_output == 1 and explorer.result.metrics.partly_dropped == 2
    assert "partly dropped" in explorer.cards.value
    steps = [y for y in dict.fromkeys(trace(explorer, "watermark").y) if not np.isnan(y)]
    assert steps == [2.0, 3.001, 6.001, 25.001]  # the raw watermark is the rows'
    explorer.batch.value = 4  # rows 1–4: two events, two watermark rows
    assert list(trace(explorer, "watermark rows (input)").y) == [2.0, 3.001]
    other = Explorer(generate("voltsp"), "voltsp")
    other.controls.strategy.value = "scripted"
    assert "watermark rows" in other.message.value and len(trace(other, "watermark rows (input)").x) == 0


def test_each_engine_rule_has_a_control_and_switching_one_changes_only_what_it_decides():
    """Flink sends an element to the side output only when every sliding window refused it; switched to "any
    window" in the explorer, the side output gains the elements a later window kept (what the flink preset
    wrongly did before). A rule of sessions is hidden under a sliding window; a duration typed wrong is refused
    in the option's words."""
    from explorer.config import preset
    from explorer.ui.rule_controls import RULE_FIELDS
    assert {spec.name for spec in RULE_FIELDS} >= {"refused_when", "session_lateness_on_merge",
                                                   "forget_clock_when_empty", "late_kept_at_horizon", "watermark_unit"}
    explorer = Explorer(generate("textbook", events=3000), "flink")
    controls = explorer.controls
    controls.window_kind.value = "sliding"
    controls.size.value, controls.slide.value = 10, 5
    controls.delay.value = 1
    rules = controls.rules.widgets

    def side_output() -> int:
        return int((explorer.result.events["status"] == "side_output").sum())

    every = side_output()
    assert rules["refused_when"].value == "every-window" and every > 0
    rules["refused_when"].value = "any-window"
    assert controls.config().time.refused_when.value == "any-window"
    assert side_output() > every
    assert rules["session_lateness_on_merge"].layout.display == "none" and rules["refused_when"].layout.display is None
    controls.show(preset("spark"))  # a preset fills the rules: Spark's whole-millisecond watermark
    assert rules["watermark_unit"].value == "1ms" and rules["schedule"].value == "backlog"
    rules["heartbeat"].value = "soon"
    assert "--heartbeat" in explorer.message.value


def test_every_figure_of_the_page_is_fitted_to_its_box_and_the_sliders_sit_over_the_two_clocks():
    """The page-side half is tests/test_browser_page.py; here, that it is wired: every FigureWidget of the page is
    in fit_width's list (one left out keeps plotly's default 700 px), none has a width of its own, and the sliders
    are in the row right above the two clocks."""
    import plotly.graph_objects as go

    explorer = Explorer("voltsp", "voltsp")
    page = explorer.widget()

    def figures_in_page() -> list[go.FigureWidget]:
        figures, stack = [], [page]
        while stack:
            widget = stack.pop()
            if isinstance(widget, go.FigureWidget):
                figures.append(widget)
            stack.extend(getattr(widget, "children", ()))
        return figures

    # the compare and job-log panels make theirs when first used: each FigureWidget costs the page a load of
    # plotly.js's widget bundle (~5 MB) at Run All
    assert len(figures_in_page()) == 3
    for panel in (explorer.compare_panel, explorer.job_log_panel):
        assert panel.plot.made is None
        panel.figure  # noqa: B018  (made on first use)
    figures = figures_in_page()
    assert len(figures) == 5 and {id(f) for f in figures} == {id(f) for f in explorer.fit_width.figures}
    assert all(f.layout.width is None for f in figures)
    column = page.children[1].children
    at = next(i for i, w in enumerate(column) if getattr(w, "children", None) == (explorer.clocks,))
    sliders = column[at - 1].children
    assert [row.children[0] for row in sliders] == [explorer.controls.delay, explorer.controls.allowed,
                                                     explorer.controls.idle]
