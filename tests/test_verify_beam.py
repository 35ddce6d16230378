"""What you tune is what you deploy, on Beam: the exported pipeline, run by Beam's Python DirectRunner (apache-beam
2.77.0 in its own venv, ``make engines``) on the user's own file, fires the panes the beam preset predicted, in the
same order per window: the watermark after each event, a late pane per late event, accumulating or discarding.

The Kafka-like export is a small one (6 devices, 10 minutes, 3.7k events; 2-30 s a run): the DirectRunner copies a
key's whole state for every bundle, so the full export (50k events) takes 10-140 s a case (the report has them).
One engine run per case, shared by the tests that read it (a module-scoped fixture).

Sessions: Beam's Python runner never drops a fired session's state, so a later element that overlaps a session whose
end + allowed lateness the watermark has passed merges into it and fires it at once, where Beam's model and its Java
runners (a garbage-collection timer at end + allowed lateness) start a new one. ``verify`` holds the run against the
prediction with that rule (--session-state-kept) and says so; each session test also holds it against the beam
preset's default (the Java rule) and must find them different, so every stream here exercises the rule.
"""

import json
import threading
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from explorer import generate, preset
from explorer.cli import main
from explorer.config import BatchSpec, Panes, WindowSpec
from explorer.core import run
from explorer.core.result import pane_columns
from explorer.errors import InputError
from explorer.export.common import ExportSource
from explorer.export import export
from explorer.streams import load_events
from explorer.verify import Verdict, held_against, report, verify

S = 1_000_000
COLUMNS = {"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id"}


def _config(window: str, delay: float, allowed: float = 0, panes: str = "accumulating", early: float | None = None):
    return replace(preset("beam", delay=round(delay * S), allowed_lateness=round(allowed * S), panes=Panes(panes),
                          early_firings=None if early is None else round(early * S)),
                   window=WindowSpec.parse(window))


def _without_the_kept_sessions(verdict: Verdict, stream, config) -> Verdict:
    """The same run held against the beam preset's default, the Java runners' rule (a fired session dropped at end +
    allowed lateness)."""
    return held_against(verdict, run(stream, config.with_time(session_state_kept=False)))


@pytest.fixture(scope="module")
def kafka_export(tmp_path_factory):
    """A Kafka-like export as a user has it: ISO event times, epoch-ms arrivals, four partitions (the watermark is
    their min), devices that go offline and flush their backlog."""
    path = tmp_path_factory.mktemp("export") / "topic-export.csv"
    assert main(["generate", "kafka-export", "--devices", "6", "--duration", "600", "--out", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def random_stream(tmp_path_factory):
    """400 events in µs, shuffled in the file: 3 keys, 2 partitions, ties in arrival, up to 9 s late, some on a
    window edge (of windows without an offset) or 1 µs before it."""
    rng = np.random.default_rng(7)
    n = 400
    arrival = rng.choice([0, 1, 100_000, 300_000, 1_000_000], size=n).cumsum()
    t = arrival - rng.choice([0, 0, 1, 500_000, 2_000_000, 4_000_000, 9_000_000], size=n)
    edge = rng.random(n) < 0.15
    t[edge] = t[edge] // S * S - rng.choice([0, 1], size=edge.sum())
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(n)], "key": rng.choice(["a", "b", "c"], size=n),
                          "event_time": t, "arrival_time": arrival, "partition": rng.choice([0, 1], size=n)})
    path = tmp_path_factory.mktemp("random") / "random.csv"
    frame.sample(frac=1, random_state=1).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def beam_runs(kafka_export, random_stream, tmp_path_factory):
    """The verdict per (file, window, delay s, allowed lateness s, panes), run on demand and kept."""
    streams = {"kafka": lambda: load_events(kafka_export, columns=COLUMNS),
               "random": lambda: load_events(random_stream, time_unit="us")}
    runs: dict[tuple, Verdict] = {}

    def get(file: str, window: str, delay: float, allowed: float = 0, panes: str = "accumulating") -> Verdict:
        case = (file, window, delay, allowed, panes)
        if case not in runs:
            runs[case] = verify(streams[file](), _config(window, delay, allowed, panes), "beam",
                                tmp_path_factory.mktemp("beam"))
        return runs[case]
    return get


KAFKA_CASES = [("tumbling:1m", 0, "accumulating"), ("tumbling:1m", 30, "discarding"),
               ("sliding:2m:1m", 0, "discarding"), ("sliding:2m:1m", 30, "accumulating"),
               ("session:30s", 30, "accumulating"), ("session:30s", 30, "discarding"),
               ("session:30s", 0, "accumulating"), ("session:30s", 0, "discarding")]


@pytest.mark.engines
@pytest.mark.parametrize("window,allowed,panes", KAFKA_CASES)
def test_the_exported_pipeline_fires_the_predicted_panes_on_a_kafka_export(beam_runs, window, allowed, panes):
    verdict = beam_runs("kafka", window, 20, allowed, panes)
    assert verdict.identical, "\n".join(report(verdict))
    assert len(verdict.predicted) > 50
    if allowed:  # a test with late panes in it: windows that fire more than once
        assert any(w.revision > 1 for w in verdict.engine_emitted)


@pytest.mark.engines
@pytest.mark.parametrize("panes", ["accumulating", "discarding"])
def test_sessions_on_a_kafka_export_merge_into_sessions_java_would_have_dropped(beam_runs, kafka_export, panes):
    """Without allowed lateness, devices that flush a backlog merge into sessions that fired long ago: Beam's Python
    runner (identical to the prediction with --session-state-kept, above) differs from the beam preset's default."""
    verdict = beam_runs("kafka", "session:30s", 20, 0, panes)
    stream = load_events(kafka_export, columns=COLUMNS)
    java = _without_the_kept_sessions(verdict, stream, _config("session:30s", 20, 0, panes))
    assert not java.identical and java.only_engine and java.only_predicted


@pytest.mark.engines
@pytest.mark.parametrize("window,allowed,panes", [("tumbling:3s", 0, "accumulating"),
                                                  ("tumbling:3s", 1.5, "accumulating"),
                                                  ("sliding:3s:1s+250ms", 1.5, "discarding")])
def test_the_exported_pipeline_fires_the_predicted_panes_on_a_random_stream(beam_runs, window, allowed, panes):
    verdict = beam_runs("random", window, 2, allowed, panes)
    assert verdict.identical, "\n".join(report(verdict))


@pytest.mark.engines
@pytest.mark.parametrize("name,options,window,delay,allowed,panes", [
    ("textbook", {"events": 3000}, "tumbling:10", 5, 0, "accumulating"),  # 003's stream
    ("textbook", {"events": 3000}, "session:2s", 5, 0, "discarding"),  # its sessions merge into fired ones
    ("mobile-bursts", {"seed": 3, "devices": 5, "duration": 300}, "sliding:20:5", 8, 10, "accumulating"),  # offline
    ("mobile-bursts", {"seed": 3, "devices": 5, "duration": 300}, "session:2s", 8, 10, "accumulating"),
])
def test_the_exported_pipeline_fires_the_predicted_panes_on_built_in_streams(tmp_path, name, options, window, delay,
                                                                            allowed, panes):
    """003's stream (a 3,000-event textbook stream) and devices that go offline and flush their backlog: 173 to 802
    panes a run. On the textbook stream, 2 s sessions without allowed lateness merge into fired ones all the time:
    held against the beam preset's default (the Java rule), most panes differ."""
    stream, config = generate(name, **options), _config(window, delay, allowed, panes)
    verdict = verify(stream, config, "beam", tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    assert len(verdict.predicted) > 150
    if name == "textbook" and window.startswith("session"):
        java = _without_the_kept_sessions(verdict, stream, config)
        assert len(java.only_engine) > 100 and java.only_predicted


@pytest.mark.engines
def test_the_comparison_fails_against_a_prediction_for_another_delay(beam_runs, kafka_export):
    """Beam's panes for a 20 s delay held against the prediction for 5 s: DIFFERENT, both ways."""
    verdict = beam_runs("kafka", "tumbling:1m", 20, 30, "discarding")
    config = _config("tumbling:1m", 5, 30, "discarding")
    other = run(load_events(kafka_export, columns=COLUMNS), config)
    differs = held_against(verdict, other)
    assert not differs.identical and differs.only_predicted and differs.only_engine
    assert report(differs)[0].startswith("beam: DIFFERENT")


@pytest.mark.engines
def test_verify_on_the_command_line_exits_0_when_identical(tmp_path, capsys):
    status = main(["verify", "--synthetic", "voltsp", "--scenario", "3", "--preset", "beam", "--window", "tumbling:10",
                   "--allowed-lateness", "5s", "--engine", "beam", "--work", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0 and out.startswith("beam: identical — 4 firing(s) of 3 window(s)"), out


@pytest.mark.engines
def test_beams_python_runner_merges_into_a_long_fired_session_as_predicted(tmp_path):
    """Gap 10 s, no delay, no allowed lateness. a@10 s opens [10, 20); z@20.5 s (another key) moves the watermark past
    20 s, so [10, 20) fires; b@15 s is not late for its own [15, 25). Beam's Python trigger driver never drops a
    window's state (``TODO(robertwb): allowed lateness`` in GeneralTriggerDriver._output): b merges into the fired
    session, late since it fired (AfterWatermark's is_late state), which fires at once as [10, 25) {a, b}, and never
    again at 25 s. The prediction with --session-state-kept says so; the beam preset's default (Java's cleanup timer
    at end + allowed lateness) fires [15, 25) {b} when the input ends."""
    path = tmp_path / "sessions.csv"
    pd.DataFrame({"id": ["a", "z", "b"], "key": ["k", "other", "k"], "event_time": [10 * S, 20_500_000, 15 * S],
                  "arrival_time": [1, 2, 3]}).to_csv(path, index=False)
    stream, config = load_events(path, time_unit="us"), _config("session:10s", 0)
    verdict = verify(stream, config, "beam", tmp_path / "work")
    assert verdict.identical, "\n".join(report(verdict))
    assert ("k", 10 * S, 25 * S, 1, ("a", "b")) in [(w.key, w.start, w.end, w.revision, w.ids)
                                                      for w in verdict.engine_emitted]
    assert "held against the prediction with --session-state-kept true" in report(verdict)[1]
    java = _without_the_kept_sessions(verdict, stream, config)
    assert [(w.key, w.start, w.end, w.ids) for w in java.only_engine] == [("k", 10 * S, 25 * S, ("a", "b"))]
    assert [(w.key, w.start, w.end, w.ids) for w in java.only_predicted] == [("k", 15 * S, 25 * S, ("b",))]


def session_file(path, n: int, seed: int = 1):
    """``n`` events in µs for sessions, written shuffled to ``path``: 3 keys, 2 partitions, ties in arrival, pauses
    longer than the gap, most events 0-3.5 s late, some 9 s; key c goes offline three times for 5-20 s and then
    flushes what it recorded, all at one arrival."""
    rng = np.random.default_rng(seed)
    arrival = rng.choice([0, 0, 100_000, 300_000, 1_000_000, 2_500_000], size=n).cumsum()
    t = arrival - rng.choice([0, 0, 1, 200_000, 1_000_000, 2_000_000, 3_500_000, 9_000_000], size=n)
    key = rng.choice(["a", "b", "c"], size=n)
    for went in rng.choice(arrival[key == "c"], size=3, replace=False):
        back = went + rng.integers(5, 20) * S
        held = (key == "c") & (arrival >= went) & (arrival < back)
        arrival[held] = back
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(n)], "key": key, "event_time": t, "arrival_time": arrival,
                          "partition": rng.choice([0, 1], size=n)})
    frame.sample(frac=1, random_state=3).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def session_stream(tmp_path_factory):
    """400 events in µs for sessions: 3 keys, 2 partitions, ties in arrival, pauses longer than the gap, most events
    0-3.5 s late (within a 2 s gap of an older session of their key, past whose end the watermark often is), some 9 s;
    key c goes offline three times for 5-20 s and then flushes what it recorded, all at one arrival."""
    return session_file(tmp_path_factory.mktemp("sessions") / "sessions.csv", 400)


@pytest.mark.engines
@pytest.mark.parametrize("allowed,panes", [(0, "accumulating"), (0, "discarding"), (1.5, "accumulating"),
                                           (1.5, "discarding")])
def test_sessions_merge_into_fired_ones_as_predicted_on_a_random_stream(session_stream, tmp_path, allowed, panes):
    """Gap 2 s, delay 1 s: identical to the prediction with --session-state-kept, late panes of merged sessions
    included; and different from the beam preset's default, so the stream merges into sessions Java would have
    dropped."""
    stream, config = load_events(session_stream, time_unit="us"), _config("session:2s", 1, allowed, panes)
    verdict = verify(stream, config, "beam", tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    assert len(verdict.predicted) > 150 and any(w.revision > 1 for w in verdict.engine_emitted)
    java = _without_the_kept_sessions(verdict, stream, config)
    assert not java.identical and java.only_engine and java.only_predicted


def test_a_prediction_with_larger_batches_is_refused_before_beam_starts(tmp_path):
    with pytest.raises(InputError, match="one event per batch"):
        verify(generate("voltsp", scenario=3), replace(preset("beam"), batches=BatchSpec.parse("count:3")), "beam",
               tmp_path)
    assert not (tmp_path / "job.py").exists()


def test_the_exported_program_compiles_and_names_its_settings():
    """The whole program, without running Beam: valid Python that imports nothing of the explorer and carries the
    watermark's lag, the window, the allowed lateness, the panes and the deployment note."""
    config = _config("sliding:1m:10s", 2, 30, "discarding")
    text = export(config, "beam-python", ExportSource(partition="kafka_partition"))
    compile(text, "job.py", "exec")
    assert "explorer" not in "\n".join(line for line in text.splitlines() if "import" in line)
    for setting in ("LAG_US = 2000000", "ALLOWED_LATENESS_US = 30000000", "PANES = 'discarding'",
                    "WINDOW_FN = window.SlidingWindows(us(60000000), us(10000000))",
                    "trigger=trigger.AfterWatermark(late=trigger.AfterCount(1))", "CustomTimestampPolicyWithLimitedDelay",
                    "advance_watermark_to_infinity", "PARTITION = 'kafka_partition'"):
        assert setting in text, setting
    assert "NOTE" not in text
    session = export(_config("session:30s", 20), "beam-python")
    assert "WINDOW_FN = window.Sessions(us(30000000))" in session and "SESSIONS = True" in session
    assert "NOTE: " in export(replace(config, batches=BatchSpec.parse("count:3")), "beam-python")
    offset = export(replace(config, window=WindowSpec.parse("tumbling:1m+10s")), "beam-python")
    assert "WINDOW_FN = window.FixedWindows(us(60000000), at(10000000))" in offset and "NOTE" not in offset
    early = export(_config("tumbling:1m", 2, 30, "discarding", early=10), "beam-python")
    assert ("trigger=trigger.AfterWatermark(early=trigger.AfterProcessingTime(EARLY_US * CLOCK_SCALE / 1_000_000), "
            "late=trigger.AfterCount(1))") in early and "EARLY_US = 10000000" in early and "NOTE" not in early
    compile(early, "job.py", "exec")
    sessions = export(_config("session:30s", 2, early=10), "beam-python")
    assert "EARLY_US = 10000000" in sessions and "NOTE: --early" not in sessions
    aligned = _config("session:30s", 2, early=10).with_time(early_aligned_to=0)
    assert "NOTE: --early-aligned-to with sessions" in export(aligned, "beam-python")


def early_file(path):
    """400 events in µs, written shuffled to ``path``: 3 keys, 2 partitions, arrivals on a 0.1 s grid (so a pane's
    timer, a whole number of seconds after its first element, is often due exactly when another element arrives),
    up to 9 s late."""
    rng = np.random.default_rng(34)
    n = 400
    arrival = rng.choice([0, 100_000, 300_000, 1_000_000], size=n).cumsum()
    t = arrival - rng.choice([0, 1, 500_000, 2_000_000, 4_000_000, 9_000_000], size=n)
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(n)], "key": rng.choice(["a", "b", "c"], size=n),
                          "event_time": t, "arrival_time": arrival, "partition": rng.choice([0, 1], size=n)})
    frame.sample(frac=1, random_state=2).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def early_stream(tmp_path_factory):
    """A random stream of its own seed for early firings: 400 events, 3 keys, 2 partitions, arrivals on a 0.1 s
    grid (so a pane's timer, 1 s after its first element, is often due exactly when another element arrives), up to
    9 s late."""
    return early_file(tmp_path_factory.mktemp("early") / "early.csv")


EARLY_CASES = [("random", "tumbling:3s", 1.5, "accumulating", 1), ("random", "sliding:4s:2s+500ms", 1.5, "discarding", 1),
               ("kafka", "tumbling:1m", 30, "discarding", 10), ("kafka", "sliding:2m:1m", 0, "accumulating", 20)]


@pytest.mark.engines
@pytest.mark.parametrize("file,window,allowed,panes,early", EARLY_CASES)
def test_the_exported_pipeline_fires_the_predicted_early_panes(early_stream, kafka_export, tmp_path, file, window,
                                                              allowed, panes, early):
    """withEarlyFirings(AfterProcessingTime(T)) on Beam's DirectRunner, the TestStream's processing clock following
    the arrivals: the same panes as predicted, each with its index and timing (EARLY, ON_TIME, LATE); held against
    the prediction without early firings, DIFFERENT."""
    stream = (load_events(early_stream, time_unit="us") if file == "random" else
              load_events(kafka_export, columns=COLUMNS))
    delay = 2 if file == "random" else 20
    config = _config(window, delay, allowed, panes, early)
    verdict = verify(stream, config, "beam", tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    assert "each pane's index and timing the same" in report(verdict)[0]
    timings = [w.pane_timing for w in verdict.engine_emitted]
    assert timings.count("EARLY") > 20 and "ON_TIME" in timings
    without = held_against(verdict, run(stream, config.with_time(early_firings=None)))
    assert not without.identical and without.only_engine


@pytest.mark.engines
def test_a_merged_sessions_panes_are_numbered_from_0_as_beam_numbers_them(tmp_path):
    """Gap 10 s, no delay, allowed lateness 30 s. [10, 20) {a} fires on time (pane 0); b@15 s merges it into
    [10, 25), a new window to Beam, whose first pane is index 0 (not the session's revision − 1 = 1), EARLY since the
    watermark (20.5 s) is before its end; c@12 s lies inside [10, 25), which keeps its pane state: index 1; after
    y@40 s, d@11 s fires index 2, LATE by the watermark the prediction has (40 s), EARLY on Beam's Python runner,
    whose output watermark the merged session's hold keeps before 25 s for good: so verify compares each pane's
    index, and its timing with EARLY and LATE as one, for sessions."""
    path = tmp_path / "sessions.csv"
    pd.DataFrame({"id": ["a", "z", "b", "c", "y", "d"], "key": ["k", "other", "k", "k", "other", "k"],
                  "event_time": [10 * S, 20_500_000, 15 * S, 12 * S, 40 * S, 11 * S],
                  "arrival_time": [1, 2, 3, 4, 5, 6]}).to_csv(path, index=False)
    stream, config = load_events(path, time_unit="us"), _config("session:10s", 0, allowed=30)
    verdict = verify(stream, config, "beam", tmp_path / "work")
    assert verdict.identical, "\n".join(report(verdict))
    assert "each pane's index and timing the same" in report(verdict)[0]
    merged = [(row["window_end"], row["pane"], row["timing"]) for row in
              map(json.loads, (tmp_path / "work" / "out" / "emissions.jsonl").read_text().splitlines())
              if row["key"] == "k"]
    assert merged == [(20 * S, 0, "ON_TIME"), (25 * S, 0, "EARLY"), (25 * S, 1, "EARLY"), (25 * S, 2, "EARLY")]
    predicted = run(stream, config.with_time(session_state_kept=True)).windows
    panes = pane_columns(predicted)[predicted["key"] == "k"]
    assert list(zip(panes["pane_index"], panes["pane_timing"])) == [(0, "ON_TIME"), (0, "EARLY"), (1, "EARLY"),
                                                                    (2, "LATE")]


@pytest.fixture(scope="module")
def early_session_stream(tmp_path_factory):
    """100 events for sessions with early firings, as ``session_stream`` draws them (3 keys, 2 partitions, ties in
    arrival, pauses, events late into older sessions; key c offline and flushing): sessions merge while their early
    timers are pending. Small, since the export moves Beam's clock to every arrival for sessions."""
    return session_file(tmp_path_factory.mktemp("early-sessions") / "early-sessions.csv", 100)


@pytest.mark.engines
@pytest.mark.parametrize("allowed,panes", [(0, "accumulating"), (1.5, "discarding")])
def test_sessions_fire_the_predicted_early_panes_through_their_merges(early_session_stream, tmp_path, allowed, panes):
    """Gap 2 s, delay 1 s, early firings 3 s: Beam's Python runner fires each session's early panes as predicted
    (core/early_sessions.py: every merged part's timer kept, a new one on the first part's, none once a part fired
    by the watermark), each pane's index and timing included; held against the prediction without early firings,
    DIFFERENT. Sessions merge here while more than one part's timer is pending (Java's rule, the earliest timer
    only, predicts other panes on this stream)."""
    stream, config = load_events(early_session_stream, time_unit="us"), _config("session:2s", 1, allowed, panes, 3)
    verdict = verify(stream, config, "beam", tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    predicted = run(stream, config.with_time(session_state_kept=True)).windows
    assert (predicted["reason"] == "EARLY").sum() > 20
    without = held_against(verdict, run(stream, config.with_time(early_firings=None)))
    assert not without.identical and without.only_engine


@pytest.mark.engines
def test_sessions_with_early_firings_end_and_match_on_a_longer_stream(tmp_path):
    """300 events (another seed), gap 2 s, delay 1 s, early firings 2 s. Two things the exported program must do
    that the 100-event stream above does not need: move Beam's clock past every timer at the end (the timers of
    sessions merged away stay pending and the DirectRunner busy-waited on them for ever: cancelled here after
    5 minutes; it takes seconds), and give a key's elements a bundle each (Beam merges a bundle's sessions before its
    elements reach the trigger: two elements of key a arriving at 8.5 s, the second bridging the first's session
    and a later one, made one early pane of [4 s, 11.6 s) where the prediction has two)."""
    path = session_file(tmp_path / "sessions.csv", 300, seed=1795724570)
    stream, config = load_events(path, time_unit="us"), _config("session:2s", 1, 0, "accumulating", 2)
    cancel = threading.Event()
    timer = threading.Timer(300, cancel.set)
    timer.start()
    try:
        verdict = verify(stream, config, "beam", tmp_path / "work", cancel=cancel)
    finally:
        timer.cancel()
    assert verdict.identical, "\n".join(report(verdict))
    assert len(verdict.engine_emitted) > 200
