"""Beam's aligned early firings (``--early-firings T --early-aligned-to O``, core/early.py): Java's
``AfterProcessingTime.pastFirstElementInPane().alignedTo(T, O)``, its AlignFn arithmetic, panes due at the same
instants for every window, refused without a period, Beam's own words in its exports and the program's own timer in
Beam Python (which has no alignedTo), held against the real DirectRunner (engines tier). The book's example 2-4 is in
tests/scenarios/streaming_systems.yaml."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from explorer import generate, preset
from explorer.config import Panes, WindowSpec, what_if
from explorer.core import run
from explorer.core.early import aligned
from explorer.core.result import differences
from explorer.errors import InputError
from explorer.export import export
from explorer.streams import load_events, stream_from_frame
from explorer.verify import held_against, report, verify

from test_verify_beam import early_file

S = 1_000_000


def _config(window: str = "tumbling:10", every: float = 2, offset: float = 0, panes: Panes = Panes.DISCARDING):
    return replace(preset("beam", delay=4 * S, allowed_lateness=0, panes=panes, early_firings=round(every * S),
                          early_aligned_to=round(offset * S)), window=WindowSpec.parse(window))


def test_javas_align_fn_takes_the_multiple_at_or_after_p_and_from_before_the_offset_the_one_after():
    """AlignFn: m = (p − O) % T with Java's remainder (the dividend's sign); p when m is 0, else p + T − m."""
    assert aligned(301, 120, 300) == 420 and aligned(419, 120, 300) == 420
    assert aligned(300, 120, 300) == 300 and aligned(420, 120, 300) == 420  # on a multiple: p itself
    assert aligned(299, 120, 300) == 420 and aligned(181, 120, 300) == 420  # before O: the second after p
    assert aligned(180, 120, 300) == 180


def test_aligned_panes_fire_at_the_same_instants_in_every_window_and_a_timer_due_on_arrival_right_after_it():
    """T = 2 s from O = 1 s: a (arriving at 1.5 s) and x (1.9 s, another key) both fire at 3 s; b arrives exactly
    at 3 s, after those panes; its own timer is due at once (3 s is a multiple) and fires right after it, as Beam's
    Python runner fires it (its next look at the timers, before the next bundle), so c, arriving at 3 s too, is in
    a pane of its own, fired at 3 s; d at 4 s opens a pane due at 5 s, after the watermark's on-time pane at 4.5 s.
    Unaligned (plusDelayOf 2 s), a's pane would fire at 3.5 s with b and c in it."""
    frame = pd.DataFrame({"id": ["a", "x", "b", "c", "d", "z"], "key": ["k", "q", "k", "k", "k", "k"],
                          "event_time": [1.0, 1.0, 2.0, 2.5, 3.0, 20.0],
                          "arrival_time": [1.5, 1.9, 3.0, 3.0, 4.0, 4.5]})
    config = _config(every=2, offset=1).with_time(bound=10 * S)
    for engine in ("compiled", "reference"):
        w = run(stream_from_frame(frame), config, engine=engine).windows
        w = w[w["start"] == 0].sort_values(["key", "revision"])
        assert [(r.key, r.reason, r.ids, r.emit_time) for r in w.itertuples()] == [
            ("k", "EARLY", ("a",), 3 * S), ("k", "EARLY", ("b",), 3 * S), ("k", "EARLY", ("c",), 3 * S),
            ("k", "WATERMARK", ("d",), 4_500_000), ("q", "EARLY", ("x",), 3 * S), ("q", "WATERMARK", (), 4_500_000)]
    plain = run(stream_from_frame(frame), config.with_time(early_aligned_to=None)).windows
    assert plain[(plain["key"] == "k") & (plain["start"] == 0)]["ids"].tolist()[0] == ("a", "b", "c")


@pytest.mark.parametrize("window,panes", [("tumbling:10", Panes.DISCARDING), ("sliding:10:5", Panes.ACCUMULATING)])
def test_the_reference_engine_and_the_kernel_add_the_same_aligned_panes_at_multiples_of_the_period(window, panes):
    stream = generate("textbook", events=600, seed=24)
    config = _config(window, every=2, offset=0.25, panes=panes)
    compiled, reference = run(stream, config), run(stream, config, engine="reference")
    assert differences(compiled, reference) == []
    early = compiled.windows[compiled.windows["reason"] == "EARLY"]
    assert len(early) > 50 and ((early["emit_time"] - S // 4) % (2 * S) == 0).all()


def test_refused_without_a_period_and_a_what_if_off_beam():
    stream = generate("textbook", events=50)
    with pytest.raises(InputError, match="--early-aligned-to .* needs --early-firings T"):
        run(stream, preset("beam", early_aligned_to=S))
    assert what_if(_config()) == []
    assert what_if(preset("flink", early_firings=2 * S, early_aligned_to=0)) == ["--early-firings 2s",
                                                                                "--early-aligned-to 0s"]


def test_exports_write_aligned_to_in_java_and_their_own_timer_in_python():
    config = _config(every=120, offset=300)
    java = export(config, "beam-java")
    assert (".withEarlyFirings(AfterProcessingTime.pastFirstElementInPane().alignedTo(Duration.standardMinutes(2), "
            "new Instant(300000L)))") in java and "NOTE" not in java
    python = export(config, "beam-python")
    assert "trigger=trigger.AfterWatermark(early=AlignedAfterProcessingTime(first), late=trigger.AfterCount(1))" in python
    assert "ALIGNED_US = 300000000" in python and "NOTE" not in python
    compile(python, "job.py", "exec")
    assert "early=AlignedAfterProcessingTime" not in export(config.with_time(early_aligned_to=None), "beam-python")
    flink = export(replace(config, preset="flink"), "flink-java")
    assert "early firings every 2m of processing time, aligned to 5m (Beam's withEarlyFirings)" in flink


@pytest.fixture(scope="module")
def tied_stream(tmp_path_factory):
    """400 events, 3 keys, 2 partitions, arrivals on a 0.1 s grid: with T = 1 s many a pane's first element arrives
    exactly on a multiple (its timer due at once), and many a timer when another element arrives."""
    return early_file(tmp_path_factory.mktemp("aligned") / "tied.csv")


@pytest.mark.engines
@pytest.mark.parametrize("window,panes,offset", [("sliding:4s:2s+500ms", Panes.DISCARDING, 0),
                                                 ("tumbling:3s", Panes.ACCUMULATING, 0.3)])
def test_the_exported_pipelines_own_aligned_timer_fires_the_predicted_panes(tied_stream, tmp_path, window, panes,
                                                                            offset):
    """Beam Python's DirectRunner with the program's AlignedAfterProcessingTime: every pane as predicted (measured:
    792 firings of 209 windows, 548 early, 136 of them due at their element's arrival; 414 of 133, 270 early);
    held against the unaligned prediction, DIFFERENT."""
    stream = load_events(tied_stream, time_unit="us")
    config = _config(window, every=1, offset=offset, panes=panes).with_time(bound=2 * S, allowed_lateness=1_500_000)
    verdict = verify(stream, config, "beam", tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    assert not held_against(verdict, run(stream, config.with_time(early_aligned_to=None))).identical


def test_the_inspector_says_an_aligned_timer_fired_the_pane():
    from explorer.ui import explain_window
    result = run(generate("textbook", events=300), _config(every=2, offset=0.25))
    text = explain_window(result, int(np.flatnonzero(result.windows["reason"] == "EARLY")[0]))
    assert "a processing-time timer at the next multiple of 2 s from 0.25 s (--early-aligned-to" in text
    assert "which fired at 2.25 s" in text


def test_the_command_line_says_when_aligned_panes_fire(capsys):
    from explorer.cli import main
    assert main(["run", "--synthetic", "textbook", "--events", "200", "--preset", "beam", "--window", "tumbling:10",
                 "--early-firings", "2s", "--early-aligned-to", "250ms"]) == 0
    out = capsys.readouterr().out
    assert "an early pane at the next multiple of 2s of processing time from 250ms after each pane's first" in out
    assert "early panes 53" in out
