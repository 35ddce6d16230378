"""Flink's ContinuousProcessingTimeTrigger (``--continuous-processing-time I``, core/continuous_processing.py): each
window's rows replaced by its periodic panes on processing (arrival) time, the same on the reference engine and the
compiled kernel, deciding no drop; refused where not modelled; a "what if" outside the flink preset; set by the
Flink exports with a NOTE (the wall clock cannot be replayed, so verify refuses it); explained by the inspector.
Flink's own cases are in tests/scenarios/flink_continuous_processing_trigger.yaml."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from explorer import generate, preset
from explorer.cli import main
from explorer.config import BatchSpec, Emit, TimeSource, WindowSpec, what_if
from explorer.core import run
from explorer.core.result import differences
from explorer.errors import InputError
from explorer.export import export
from explorer.streams import stream_from_frame
from explorer.verify import verify

S = 1_000_000
MS = 1_000
WINDOWS = ["tumbling:10", "sliding:10:5", "cumulate:10:5"]


def _config(window: str, every: float = 3, source: TimeSource = TimeSource.EVENT):
    return replace(preset("flink", delay=2 * S, allowed_lateness=2 * S, continuous_processing_time=round(every * S),
                          time_source=source), window=WindowSpec.parse(window))


@pytest.mark.parametrize("source", list(TimeSource))
@pytest.mark.parametrize("window", WINDOWS)
def test_the_reference_engine_and_the_kernel_fire_the_same_panes(window, source):
    stream = generate("textbook", events=600, seed=351)
    config = _config(window, source=source)
    compiled, reference = run(stream, config), run(stream, config, engine="reference")
    assert differences(compiled, reference) == []
    assert len(compiled.windows) > 50


@pytest.mark.parametrize("window", WINDOWS)
def test_every_row_is_a_periodic_pane_on_the_arrival_clock_and_no_drop_changes(window):
    """Events, assignments and the watermark are EventTimeTrigger's; every row is EARLY, due at a multiple of I
    after its window's first arrival or, at most, at maxTimestamp; a window's panes only grow (accumulating), and
    each carries exactly the window's elements that arrived before it fired."""
    stream = generate("textbook", events=600, seed=352)
    config = _config(window)
    result, plain = run(stream, config), run(stream, config.with_time(continuous_processing_time=None))
    for table in ("events", "assignments", "watermarks"):
        pd.testing.assert_frame_equal(getattr(result, table), getattr(plain, table))
    w, events = result.windows, result.events
    assert (w["reason"] == "EARLY").all()
    arrival = dict(zip(events["id"], events["arrival_time"]))
    held = {(k, s, e): set().union(*map(set, ids)) for (k, s, e), ids in plain.windows.groupby(
        ["key", "start", "end"])["ids"]}
    for (key, start, end), panes in w.groupby(["key", "start", "end"]):
        panes = panes.sort_values("revision")
        first = min(arrival[i] for i in held[(key, start, end)])
        due = panes["emit_time"].to_numpy()
        assert all(d == end - MS or d % (3 * S) == 0 and d > first for d in due.tolist())
        assert (np.diff(panes["count"].to_numpy()) >= 0).all()
        for d, ids in zip(due.tolist(), panes["ids"]):
            assert set(ids) == {i for i in held[(key, start, end)] if arrival[i] < d or d == end - MS == first}


def test_with_an_hour_interval_each_window_fires_once_at_its_max_timestamp_and_late_arrivals_are_lost():
    """An hour is past every window's end: each holds maxTimestamp, fires there once (or right after its first
    element, when that arrives later) and is purged unfired by the watermark; the elements that arrive after
    maxTimestamp, which EventTimeTrigger's firing at the watermark carries, are never emitted."""
    stream = generate("textbook", events=300, seed=353)
    config = _config("tumbling:10", every=3600)
    result, plain = run(stream, config), run(stream, config.with_time(continuous_processing_time=None))
    w = result.windows
    assert (w.groupby(["key", "start", "end"]).size() == 1).all() and (w["emit_time"] >= w["end"] - MS).all()
    emitted = set().union(*map(set, w["ids"]))
    lost = set().union(*map(set, plain.windows["ids"])) - emitted
    arrival = dict(zip(result.events["id"], result.events["arrival_time"]))
    assert lost and all(arrival[i] >= min(w["end"]) - MS for i in lost)


def test_refused_where_not_modelled():
    stream = generate("textbook", events=100)
    with pytest.raises(InputError, match="sessions are not modelled"):
        run(stream, _config("session:5"))
    with pytest.raises(InputError, match="emit on-update emits every update"):
        run(stream, _config("tumbling:10").with_time(emit=Emit.ON_UPDATE))
    with pytest.raises(InputError, match="--continuous-event-time are two triggers"):
        run(stream, _config("tumbling:10").with_time(continuous_event_time=S))
    with pytest.raises(InputError, match="--early-firings are two triggers"):
        run(stream, _config("tumbling:10").with_time(early_firings=S))


def test_flinks_setting_and_a_what_if_elsewhere():
    assert what_if(preset("flink", continuous_processing_time=30 * S)) == []
    assert what_if(preset("beam", continuous_processing_time=30 * S)) == ["--continuous-processing-time 30s"]
    assert main(["run", "--synthetic", "textbook", "--events", "300", "--preset", "flink", "--window", "tumbling:10",
                 "--continuous-processing-time", "2s"]) == 0


def test_flinks_exports_set_the_trigger_with_a_note_and_verify_refuses_it(tmp_path):
    config = _config("tumbling:10", every=15)
    java, python = export(config, "flink-java"), export(config, "pyflink")
    assert ".trigger(ContinuousProcessingTimeTrigger.of(Duration.ofMillis(PROCESSING_MS)))" in java
    assert "PROCESSING_MS = 15000L;" in java
    assert ".trigger(ContinuousProcessingTimeTrigger.of(Duration.ofSeconds(15)))" in java
    assert ".trigger(ContinuousProcessingTimeTrigger.of(Time.milliseconds(PROCESSING_MS)))" in python
    for text in (java, python):
        assert "NOTE: ContinuousProcessingTimeTrigger fires every 15s of the wall clock" in text
    plain = config.with_time(continuous_processing_time=None)
    assert ".trigger(" not in export(plain, "flink-java") + export(plain, "pyflink")
    beam = export(replace(config, preset="beam"), "beam-java")
    assert "(Flink's ContinuousProcessingTimeTrigger) have no equivalent in Beam" in beam
    for engine in ("flink", "flink-java"):
        with pytest.raises(InputError, match="fires on the wall clock"):
            verify(generate("textbook", events=50), config, engine, tmp_path)


def test_the_inspector_says_the_watermark_never_fires_the_window():
    from explorer.ui import explain_window
    result = run(generate("textbook", events=300, seed=35), _config("tumbling:10"))
    text = explain_window(result, 0)
    assert "ContinuousProcessingTimeTrigger.of(3 s)" in text and "the watermark never fires it" in text


def test_the_metrics_count_a_window_emitted_by_its_first_pane_and_only_the_pairs_a_pane_carried():
    """windows_emitted is the windows with a pane (the common arithmetic would count none: every row is EARLY),
    the latencies are the first panes', and completeness drops below EventTimeTrigger's by the (event, window)
    pairs no pane carried (textbook seed 354: 0.55 against 0.83)."""
    stream = generate("textbook", events=600, seed=354)
    config = _config("tumbling:10")
    result, plain = run(stream, config), run(stream, config.with_time(continuous_processing_time=None))
    w, m = result.windows, result.metrics
    assert m.windows_emitted == w.groupby(["key", "start", "end"]).ngroups == (w["revision"] == 1).sum() > 20
    assert m.updates == len(w) - m.windows_emitted and m.end_of_stream == 0
    assert m.latency_processing.max is not None and m.latency_processing.max < 0  # (here every first pane comes before its end)
    carried = sum(len(set(ids)) for ids in w.groupby(["key", "start", "end"])["ids"].sum())
    assert m.completeness == m.completeness_live == carried / len(result.assignments) < plain.metrics.completeness


def test_a_timer_due_by_the_watermark_emit_that_purges_the_window_fires_first():
    """Flink's periodic watermark emit is a processing-time timer too: the window's timer at 4 s fires before the
    emit at 4 s whose watermark (12 s) purges (0, 10), though no element arrives between 3.5 s and 6 s."""
    frame = pd.DataFrame({"id": ["a", "b", "c"], "key": ["k", "j", "j"], "event_time": [1.0, 12.0, 13.0],
                          "arrival_time": [1.0, 3.5, 6.0]})
    config = replace(preset("flink", delay=0, allowed_lateness=0, continuous_processing_time=4 * S),
                     window=WindowSpec.parse("tumbling:10"), batches=BatchSpec.parse("interval:1s"))
    w = run(stream_from_frame(frame, name="purge", time_unit="s"), config).windows
    k = w[w["key"] == "k"]
    assert k["ids"].tolist() == [("a",)] and k["emit_time"].tolist() == [4 * S]
    assert w[w["key"] == "j"]["ids"].tolist() == [("b",)]  # (10, 20)'s timer at 8 s: no arrival reaches it
