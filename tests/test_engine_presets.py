"""The engine presets reproduce their documents' worked examples (002 Storm, 004 Bytewax) and Flink's
arithmetic (001), from tests/scenarios/engine_examples.yaml."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings

from explorer.config import BatchKind, BatchSpec, Emit, Panes, WindowSpec, preset, what_if
from explorer.core import run
from explorer.core.engine import Engine
from explorer.core.assemble import batch_rows, run_reference
from explorer.streams import stream_from_frame

from conftest import make_config
from strategies import examples, frames

EXAMPLES = yaml.safe_load((Path(__file__).parent / "scenarios" / "engine_examples.yaml").read_text())
S = 1_000_000


def clock(text: str) -> int:
    """'06:00:03' or '09:00:00.1' → µs since midnight."""
    h, m, s = text.split(":")
    return round((int(h) * 3600 + int(m) * 60 + float(s)) * S)


def test_storm_002_two_watermarks_three_windows_each():
    case = EXAMPLES["storm_002"]
    frame = pd.DataFrame(case["events"], columns=["id", "event_time", "arrival_time"])
    frame["event_time"] = frame["event_time"].map(clock) / S
    frame["arrival_time"] = frame["arrival_time"].map(clock) / S
    result = run(stream_from_frame(frame, name="storm"), make_config(case["config"]))
    commits = result.watermarks[result.watermarks["at"] == "commit"].drop_duplicates("batch", keep="last")
    assert [[int(r.batch), r.effective, r.time] for r in commits.itertuples()] == [
        [b, clock(w), clock(at)] for b, w, at in case["watermarks"]]
    evaluated = result.windows[result.windows["reason"] == "WATERMARK"]
    assert [[int(w.emit_batch), [w.start, w.end], sorted(w.ids)] for w in evaluated.itertuples()] == [
        [b, [clock(s), clock(e)], sorted(ids)] for b, [s, e], ids in case["evaluated"]]
    held = set(case["held_back"])
    assert all(not held & set(w.ids) for w in evaluated.itertuples())
    assert (result.events["status"] == "on_time").all()


def test_storm_windows_hold_the_tuple_at_their_end():
    """(end − length, end]: a tuple exactly at 10 s is in the window ending at 10 s, not the one starting."""
    frame = pd.DataFrame({"id": ["a", "b"], "event_time": [10.0, 30.0], "arrival_time": [10.0, 30.0]})
    result = run(stream_from_frame(frame), preset("storm", delay=0).__class__(
        window=WindowSpec.parse("tumbling:10"), time=preset("storm").time, batches=preset("storm").batches,
        preset="storm"))
    first = result.windows.iloc[0]
    assert (first.start, first.end, tuple(first.ids)) == (0, 10 * S, ("a",))


def test_bytewax_004_event_clock_table():
    case = EXAMPLES["bytewax_004"]
    frame = pd.DataFrame({"id": [f"i{n}" for n in range(len(case["items"]))],
                          "event_time": [clock(r[1]) / S for r in case["items"]],
                          "arrival_time": [clock(r[0]) / S for r in case["items"]]})
    stream = stream_from_frame(frame, name="bytewax")
    config = make_config(case["config"])
    result = run(stream, config)
    seen = [None if pd.isna(w) else int(w) for w in result.events["watermark"]]
    assert seen == [None if r[2] is None else clock(r[2]) for r in case["items"]]
    assert result.events["status"].tolist() == ["dropped" if r[3] else "on_time" for r in case["items"]]
    trace = result.watermarks[result.watermarks["at"] == "commit"]
    assert trace["watermark"].tolist() == [clock(r[4]) for r in case["items"]]
    # with no item, the watermark still advances with system time
    engine = Engine(config, ["0"])
    engine.step(next(iter(batch_rows(stream, config))))
    for now, set_at, watermark in case["between"]:
        engine.generator.now = clock(now)
        assert engine.generator.set_at[""] == clock(set_at)
        assert engine.generator.mark("") == clock(watermark)


def test_bytewax_windows_close_when_the_clock_passes_their_end():
    """One item at 9 s (wait 2 s) opens [0, 10); the clock reaches 10 s three seconds after it was seen, so
    the window closes then — before the next item arrives, stamped with the batch before it. The key then has
    nothing left, so Bytewax discards its state: b (9.5 s at 20 s) meets a fresh clock and is on time, where a
    kept clock (watermark 18 s at 20 s) would have called it late."""
    frame = pd.DataFrame({"id": ["a", "b"], "event_time": [9.0, 9.5], "arrival_time": [9.0, 20.0]})
    config = make_config({"preset": "bytewax", "delay": 2})
    result = run(stream_from_frame(frame), config)
    first = result.windows.iloc[0]
    assert (first.reason, first.emit_time, first.emit_batch, tuple(first.ids)) == ("WATERMARK", 12 * S, 1, ("a",))
    assert result.events["status"].tolist() == ["on_time", "on_time"]
    kept = run(stream_from_frame(frame), config.with_time(forget_clock_when_empty=False))
    assert kept.events["status"].tolist() == ["on_time", "dropped"]  # 9.5 < watermark 18 at 20 s


def flink_by_the_book(frame: pd.DataFrame, L: int, size: int, allowed: int, interval: int):
    """Flink's rules written out with its own arithmetic (ms, −1): every period each partition's watermark
    becomes max − L − 1, the operator's is the min over partitions (none until each has one); per element:
    dropped when end − 1 + allowed ≤ W; a window fires at the first period whose W ≥ end − 1 (WATERMARK), or at
    once when a late element within the allowed lateness opens it (the element fired it: LATE_UPDATE)."""
    W = None
    maxima: dict[str, int] = {}
    partitions = sorted(frame["partition"].unique())
    outcome, windows, firings, fired_once = [], set(), [], set()
    for period, (_, batch) in enumerate(frame.groupby(frame["arrival_time"] // interval, sort=True), start=1):
        for t, key in zip(batch["event_time"], batch["key"]):
            end = t // size * size + size
            if W is not None and end - 1 + allowed <= W:
                outcome.append("late")
                continue
            if W is not None and end - 1 <= W:  # EventTimeTrigger.onElement fires at once
                outcome.append("late-kept")
                if (key, end - size) not in fired_once:
                    firings.append((period, key, (end - size) * 1000, "LATE_UPDATE"))
                    fired_once.add((key, end - size))
            else:
                outcome.append("ok")
                windows.add((key, end - size))
        for t, p in zip(batch["event_time"], batch["partition"]):
            maxima[p] = max(maxima.get(p, -10**18), t)
        if len(maxima) == len(partitions):
            candidate = min(maxima[p] - L - 1 for p in partitions)
            W = candidate if W is None else max(W, candidate)
        for key, start in sorted(windows):
            if W is not None and start + size - 1 <= W:
                firings.append((period, key, start * 1000, "WATERMARK"))
                fired_once.add((key, start))
                windows.discard((key, start))
    return outcome, firings


@settings(max_examples=examples(100), deadline=None)
@given(frames(max_events=30, with_batch=False))
def test_flink_lateness_matches_flinks_arithmetic(frame):
    frame = frame.copy()
    frame["event_time"] = (frame["event_time"] * 1000).round().astype(np.int64)  # ms, as Flink
    frame["arrival_time"] = (frame["arrival_time"] * 1000).round().astype(np.int64)
    frame = frame.sort_values("arrival_time", kind="stable").reset_index(drop=True)
    L, size, allowed = 3000, 10_000, 2000
    stream = stream_from_frame(frame, time_unit="ms")
    config = preset("flink", delay=L * 1000, allowed_lateness=allowed * 1000)
    config = config.__class__(window=WindowSpec.parse("tumbling:10"), time=config.time, batches=config.batches,
                              preset="flink")
    result = run(stream, config)
    outcome, firings = flink_by_the_book(frame, L, size, allowed, 200)
    ours = result.events.set_index("id").loc[frame["id"], "status"].map(
        {"on_time": "ok", "late_updated": "late-kept", "side_output": "late"}).tolist()
    assert ours == outcome
    fired = result.windows[(result.windows["revision"] == 1) & (result.windows["reason"] != "END_OF_STREAM")]
    assert sorted(zip(fired["emit_batch"], fired["key"], fired["start"], fired["reason"])) == sorted(firings)


def test_bytewax_sessions_join_within_the_gap_and_close_past_it():
    """Gap 4 s, wait 0: a, b, c are 4 s apart and share one session [0, 8]; d is 5.5 s after c and opens its
    own. The first session closes once the clock is *past* 8 + 4 = 12 s (1 µs after), before d arrives."""
    frame = pd.DataFrame({"id": ["a", "b", "c", "d"], "event_time": [0.0, 4.0, 8.0, 13.5],
                          "arrival_time": [0.0, 4.0, 8.0, 13.5]})
    result = run(stream_from_frame(frame), make_config({"preset": "bytewax", "window": "session:4", "delay": 0}))
    closed = [(sorted(w.ids), int(w.emit_batch), w.reason, int(w.emit_time)) for w in result.windows.itertuples()]
    assert closed == [(["a", "b", "c"], 3, "WATERMARK", 12 * S + 1), (["d"], 4, "END_OF_STREAM", int(13.5 * S))]
    assert result.windows.iloc[0].end == 12 * S + 1  # [first, last + gap + 1 µs)


def test_bytewax_forgets_an_emptied_keys_clock_and_emits_a_window_twice():
    """Measured with Bytewax 0.21.1's real dataflow (dev/check_bytewax_dataflow.py, seed 1, wait 8 s, key k0,
    wake-ups on): once [30, 40) and [40, 50) have closed, k0 has nothing left and Bytewax discards its state,
    clock included. e182 (31.5 s, arriving at 66 s) meets a fresh clock: not late, and [30, 40) is emitted a
    second time, with e182 alone. Without the discard e182 would be late (watermark 58 s)."""
    rows = [("e165", 33.5, 34.5), ("e29", 30.5, 36), ("e85", 37, 38), ("e175", 40, 40.001), ("e110", 37.5, 43.5),
            ("e182", 31.5, 66), ("e116", 70.5, 71)]
    frame = pd.DataFrame({"id": [r[0] for r in rows], "key": "k0", "event_time": [r[1] for r in rows],
                          "arrival_time": [r[2] for r in rows]})
    config = make_config({"preset": "bytewax", "window": "tumbling:10", "delay": 8})
    for engine in ("compiled", "reference"):
        result = run(stream_from_frame(frame), config, engine=engine)
        emitted = [(w.start // S, sorted(w.ids)) for w in result.windows.itertuples() if w.reason == "WATERMARK"]
        assert emitted == [(30, ["e110", "e165", "e29", "e85"]), (40, ["e175"]), (30, ["e182"])]
        assert (result.events["status"] == "on_time").all()
    kept = run(stream_from_frame(frame), config.with_time(forget_clock_when_empty=False))
    assert kept.events.set_index("id").loc["e182", "status"] == "dropped"


def test_a_session_that_grew_after_it_fired_is_kept_until_its_new_end_plus_lateness():
    """Measured on Beam 2.77's DirectRunner (dev/check_beam.py): gap 10 s, allowed lateness 5 s. a@100 fires
    [100, 110) at watermark 110; b@108 grows it to [100, 118); at watermark 116 it is still within 118 + 5, so
    c@112 joins it: [100, 122) with a, b, c. The session's first purge entry (110 + 5) must not remove it."""
    rows = [("a", "event", 100), ("w1", "watermark", 110.000001), ("b", "event", 108),
            ("w2", "watermark", 116.000001), ("c", "event", 112)]
    frame = pd.DataFrame({"id": [r[0] for r in rows], "kind": [r[1] for r in rows], "event_time": [r[2] for r in rows]})
    config = replace(make_config({"preset": "beam", "window": "session:10", "allowed_lateness": "5s",
                                  "strategy": "scripted"}), batches=BatchSpec(BatchKind.EVENT))
    for engine in ("compiled", "reference"):
        result = run(stream_from_frame(frame), config, engine=engine)
        last = result.windows.iloc[-1]
        assert (last.start, last.end, sorted(last.ids)) == (100 * S, 122 * S, ["a", "b", "c"])
        assert (result.events["status"] == "late_updated").sum() == 2


def test_beam_keeps_a_late_element_while_the_watermark_is_exactly_at_end_plus_lateness():
    """Measured on Beam 2.77's DirectRunner: 10 s windows, no allowed lateness, a@1, watermark to 10 s, b@5: Beam
    fires [0, 10) with a, then a late pane with a and b (it drops only once the watermark is past end + 0). One
    µs later b is dropped. Flink drops it at the horizon itself."""
    def late_pane(watermark: float, preset_name: str = "beam") -> list:
        frame = pd.DataFrame({"id": ["a", "w", "b"], "kind": ["event", "watermark", "event"],
                              "event_time": [1, watermark, 5]})
        config = replace(make_config({"preset": preset_name, "window": "tumbling:10", "allowed_lateness": "0s",
                                      "strategy": "scripted", "delay": "0s"}), batches=BatchSpec(BatchKind.EVENT))
        return [sorted(w.ids) for w in run(stream_from_frame(frame), config).windows.itertuples()]

    assert late_pane(10) == [["a"], ["a", "b"]]
    assert late_pane(10.000001) == [["a"]]
    assert late_pane(10, "flink") == [["a"]]


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_flink_fires_a_passed_window_for_each_late_element_where_beam_fires_once_a_bundle(engine):
    """Flink's EventTimeTrigger.onElement fires a window the watermark has passed as each element lands in it, so two
    late elements between the same two periodic watermarks (here 200 ms apart) make two firings, each at its
    element's arrival with the window so far; Beam fires one late pane for the bundle they came in."""
    frame = pd.DataFrame({"id": ["a", "x", "b", "c"], "event_time": [1, 12, 3, 4],
                          "arrival_time": [1.0, 12.0, 13.05, 13.1]})

    def firings(preset_name: str, batches: BatchSpec) -> list:
        config = replace(make_config({"preset": preset_name, "window": "tumbling:10", "allowed_lateness": "5s",
                                      "delay": "0s"}), batches=batches)
        result = run(stream_from_frame(frame), config, engine=engine)
        return [(w.reason, w.emit_time / S, tuple(w.ids)) for w in result.windows.itertuples() if w.start == 0]

    assert firings("flink", BatchSpec(BatchKind.INTERVAL, interval=200_000)) == [
        ("WATERMARK", 12.2, ("a",)), ("LATE_UPDATE", 13.05, ("a", "b")), ("LATE_UPDATE", 13.1, ("a", "b", "c"))]
    assert firings("beam", BatchSpec(BatchKind.INTERVAL, interval=200_000)) == [
        ("WATERMARK", 12.2, ("a",)), ("LATE_UPDATE", 13.2, ("a", "b", "c"))]


def test_flink_with_idleness_lets_a_silent_partition_leave_the_min():
    """Partition P keeps sending; Q sends once at 1 s and falls silent. Without withIdleness the operator's
    watermark is held at Q's 1 s − L and P's windows wait for the end of input; with withIdleness(5 s), Q
    leaves the min at the first 200 ms emit strictly past 5 s after the first emit without its record (at 6.6 s) and
    P's windows fire as P's watermark passes them."""
    times = [float(t) for t in range(0, 40)]
    frame = pd.DataFrame({"id": [f"p{t:g}" for t in times] + ["q1"], "partition": ["P"] * len(times) + ["Q"],
                          "event_time": times + [1.0], "arrival_time": times + [1.0]})
    stream = stream_from_frame(frame)
    held = run(stream, make_config({"preset": "flink", "delay": 1}))
    assert set(held.windows["reason"]) == {"END_OF_STREAM"}
    idle = run(stream, make_config({"preset": "flink", "delay": 1}).with_time(source_idle_timeout=5 * S))
    fired = idle.windows[idle.windows["reason"] == "WATERMARK"]
    assert [(w.start, w.end) for w in fired.itertuples()] == [(0, 10 * S), (10 * S, 20 * S), (20 * S, 30 * S)]
    first = fired.iloc[0]  # fires at the end of the 200 ms period in which P's max reaches 10 s + L
    assert (first.emit_time, first.watermark, first.effective_watermark) == (11.2 * S, 11 * S, 10 * S)
    trace = idle.watermarks[idle.watermarks["scope"] == "*"]["watermark"].dropna().tolist()
    assert trace == sorted(trace)  # the merged watermark never goes back


@pytest.mark.parametrize("engine", [run, run_reference], ids=["compiled", "reference"])
def test_a_partition_going_idle_between_batches_shows_in_the_trace_where_it_fires(engine):
    """P's events run 10 s ahead of their arrival; Q sends once at 1 s. At the silent 6.6 s emit (no record since
    6.0 s) Q goes idle, the merge jumps to P's 16 s − L and [0, 10 s) fires there: the trace has the merged
    watermark's move at that emit, so the chart shows the watermark that fired it (before, the move showed only
    at the next commit, 7.2 s)."""
    times = [float(t) for t in range(0, 40)]
    frame = pd.DataFrame({"id": [f"p{t:g}" for t in times] + ["q1"], "partition": ["P"] * len(times) + ["Q"],
                          "event_time": [t + 10 for t in times] + [1.0], "arrival_time": times + [1.0]})
    result = engine(stream_from_frame(frame),
                    make_config({"preset": "flink", "delay": 1}).with_time(source_idle_timeout=5 * S))
    first = result.windows.iloc[0]
    assert (first.start, first.end, first.emit_time, first.reason) == (0, 10 * S, 6.6 * S, "WATERMARK")
    merged = result.watermarks[result.watermarks["scope"] == "*"]
    at = merged[merged["time"] == first.emit_time]
    assert at[["watermark", "effective", "at"]].values.tolist() == [[16 * S, 15 * S, "idle check"]]


def test_kafka_streams_stream_time_is_each_partitions_own():
    """Kafka Streams' stream time moves only when a partition's records arrive, and it is that partition's: a
    partition that falls silent keeps its keys' windows open ("my window never emits", with emitStrategy
    onWindowClose or suppress) while the other partition's close. Under Flink's min over partitions the silent one holds
    back both."""
    frame = pd.DataFrame({"id": ["p1", "q1", "p2", "p3"], "key": ["busy", "quiet", "busy", "busy"],
                          "partition": ["P", "Q", "P", "P"], "event_time": [1.0, 2.0, 30.0, 60.0]})
    stream = stream_from_frame(frame, name="two-partitions")
    window = WindowSpec.parse("tumbling:10s")
    emitted = {}
    for name in ("kafka-streams", "flink"):
        windows = run(stream, replace(preset(name, delay=0, emit=Emit.ON_CLOSE), window=window)).windows
        emitted[name] = sorted(windows.loc[windows["reason"] == "WATERMARK", "key"] + "@" +
                               (windows.loc[windows["reason"] == "WATERMARK", "start"] // S).astype(str))
    assert emitted["kafka-streams"] == ["busy@0", "busy@30"]  # quiet@0 waits for Q's next record
    assert emitted["flink"] == []  # Q's watermark (2 s) is the min: nothing reaches an end


def test_a_key_in_two_partitions_is_refused_under_a_watermark_per_partition(tmp_path):
    import subprocess
    import sys
    path = tmp_path / "wandering.csv"
    path.write_text("id,key,partition,event_time\na,k,0,1\nb,k,1,2\n")
    proc = subprocess.run([sys.executable, "-m", "explorer", "run", str(path), "--preset", "kafka-streams"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "key 'k' is in partitions 0, 1" in proc.stderr
    ok = subprocess.run([sys.executable, "-m", "explorer", "run", str(path), "--preset", "kafka-streams",
                         "--scope", "partition-min"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr


def _panes(result) -> list[tuple[str, float, float, tuple[str, ...], str]]:
    return [(w.key, w.start / S, w.end / S, tuple(w.ids), w.reason) for w in result.windows.itertuples()]


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_beam_discarding_panes_carry_only_what_came_since_the_last_one(engine):
    """Beam's discardingFiredPanes: the state is cleared when a pane fires, so a late pane holds the late element
    alone, where an accumulating one repeats the window. A session a late element merges into likewise carries
    only what is new. The decisions (what fires when, what is dropped) are the same either way."""
    frame = pd.DataFrame({"id": ["a", "b", "c", "d", "e"], "key": "k",
                          "event_time": [1.0, 2.0, 12.0, 3.0, 4.0], "arrival_time": [1.0, 2.0, 12.0, 13.0, 14.0]})
    stream = stream_from_frame(frame, name="late-elements")
    for window, accumulating, discarding in (
            ("tumbling:10s", [("k", 0, 10, ("a", "b"), "WATERMARK"), ("k", 0, 10, ("a", "b", "d"), "LATE_UPDATE"),
                              ("k", 0, 10, ("a", "b", "d", "e"), "LATE_UPDATE")],
             [("k", 0, 10, ("a", "b"), "WATERMARK"), ("k", 0, 10, ("d",), "LATE_UPDATE"),
              ("k", 0, 10, ("e",), "LATE_UPDATE")]),
            ("session:2s", [("k", 1, 4, ("a", "b"), "WATERMARK"), ("k", 1, 5, ("a", "b", "d"), "LATE_UPDATE"),
                            ("k", 1, 6, ("a", "b", "d", "e"), "LATE_UPDATE")],
             [("k", 1, 4, ("a", "b"), "WATERMARK"), ("k", 1, 5, ("d",), "LATE_UPDATE"),
              ("k", 1, 6, ("e",), "LATE_UPDATE")])):
        config = replace(preset("beam", delay=0, allowed_lateness=20 * S), window=WindowSpec.parse(window))
        whole = run(stream, config, engine=engine)
        new = run(stream, config.with_time(panes=Panes.DISCARDING), engine=engine)
        assert [p for p in _panes(whole) if p[4] != "END_OF_STREAM"] == accumulating, window
        assert [p for p in _panes(new) if p[4] != "END_OF_STREAM"] == discarding, window
        assert new.windows["count"].tolist() == new.windows["ids"].map(len).tolist()
        assert new.metrics == whole.metrics and new.assignments.equals(whole.assignments)


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_kafka_streams_forwards_every_update_and_nothing_at_close(engine):
    """Kafka Streams' default emit strategy with the record cache off (as the TopologyTestDriver shows it): each
    record a window takes forwards the window's new count at once (a revision, carrying that record); closing
    forwards nothing, and an expired record forwards nothing. Drops are the same as with
    emitStrategy(onWindowClose), which emits each window once at close instead."""
    frame = pd.DataFrame({"id": ["a", "b", "c", "d", "e"], "key": ["k", "k", "j", "k", "k"],
                          "event_time": [1.0, 4.0, 2.0, 15.0, 3.0]})
    stream = stream_from_frame(frame, name="updates")
    config = replace(preset("kafka-streams", delay=2 * S, emit=Emit.ON_UPDATE), window=WindowSpec.parse("tumbling:10s"))
    updates = run(stream, config, engine=engine)
    rows = [(w.key, w.start / S, w.count, w.ids, w.emit_batch, w.revision, w.reason)
            for w in updates.windows.itertuples()]
    assert rows == [("k", 0, 1, ("a",), 1, 1, "UPDATE"), ("k", 0, 2, ("b",), 2, 2, "UPDATE"),
                    ("j", 0, 1, ("c",), 3, 1, "UPDATE"), ("k", 10, 1, ("d",), 4, 1, "UPDATE")]
    assert updates.events["status"].tolist() == ["on_time"] * 4 + ["dropped"]  # [0, 10) ends ≤ 15 − 2
    assert updates.metrics.windows_emitted == 3 and updates.metrics.updates == 1
    assert updates.metrics.latency_event.max == -5.0  # forwarded 5 s before [10, 20) ends: d at 15
    at_close = run(stream, config.with_time(emit=Emit.ON_CLOSE), engine=engine)
    assert at_close.events.equals(updates.events) and at_close.assignments.equals(updates.assignments)
    assert [(w.key, w.start / S, w.count, w.emit_batch, w.reason) for w in at_close.windows.itertuples()] == [
        ("j", 0, 1, 4, "WATERMARK"), ("k", 0, 2, 4, "WATERMARK"), ("k", 10, 1, 5, "END_OF_STREAM")]


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_kafka_streams_tombstones_every_session_a_record_replaces(engine):
    """KStreamSessionWindowAggregate with the record cache off, emitting on every update: a record that joins
    sessions first forwards a null for each session it replaces (here both of k's, which it merges), then the merged
    session. A record inside an unchanged span [t, t] replaces nothing; sessions of other keys are untouched.
    Metrics count the sessions' first updates and their revisions (the merge is one: a revision of the sessions it
    joined), not the tombstones."""
    frame = pd.DataFrame({"id": ["a", "b", "j", "c", "d"], "key": ["k", "k", "j", "k", "j"],
                          "event_time": [0.0, 20.0, 5.0, 10.0, 5.0]})
    config = replace(preset("kafka-streams", delay=60 * S, emit=Emit.ON_UPDATE), window=WindowSpec.parse("session:10"))
    result = run(stream_from_frame(frame, name="merges"), config, engine=engine)
    rows = [(w.key, w.start / S, round(w.end / S), w.count, w.ids, w.emit_batch, w.reason)
            for w in result.windows.itertuples()]
    assert rows == [("k", 0, 10, 1, ("a",), 1, "UPDATE"), ("k", 20, 30, 1, ("b",), 2, "UPDATE"),
                    ("j", 5, 15, 1, ("j",), 3, "UPDATE"),
                    ("k", 0, 10, 0, (), 4, "TOMBSTONE"), ("k", 20, 30, 0, (), 4, "TOMBSTONE"),
                    ("k", 0, 30, 3, ("c",), 4, "UPDATE"),
                    ("j", 5, 15, 2, ("d",), 5, "UPDATE")]  # j@[5, 5] again: the same span, no tombstone
    assert result.metrics.windows_emitted == 3 and result.metrics.updates == 2


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_kafka_streams_default_is_the_record_cache_flushed_at_each_30_s_commit(engine):
    """Production Kafka Streams runs with its record cache on (statestore.cache.max.bytes, 10 MB): a window's
    updates coalesce in the cache and are forwarded at each commit (commit.interval.ms, 30 s). So the preset,
    unchanged, emits each window once per 30 s of arrival time that updated it, at the interval's end, with its
    count then; --emit on-update (the cache off) forwards every record. Fails if the default goes back to
    on-update, or to a flush per batch (one record here)."""
    frame = pd.DataFrame({"id": ["a", "b", "c", "d", "e"], "key": ["k"] * 5,
                          "event_time": [1.0, 4.0, 12.0, 2.0, 45.0], "arrival_time": [1.0, 5.0, 20.0, 40.0, 50.0]})
    stream = stream_from_frame(frame, name="commits")
    config = replace(preset("kafka-streams", delay=60 * S), window=WindowSpec.parse("tumbling:10s"))
    cached = run(stream, config, engine=engine).windows
    assert sorted((w.emit_time / S, w.start / S, w.count, w.ids, w.revision) for w in cached.itertuples()) == [
        (30, 0, 2, ("a", "b"), 1), (30, 10, 1, ("c",), 1), (60, 0, 3, ("a", "b", "d"), 2), (60, 40, 1, ("e",), 1)]
    assert set(cached["reason"]) == {"UPDATE"} and what_if(config) == []
    off = config.with_time(emit=Emit.ON_UPDATE)
    assert run(stream, off, engine=engine).windows["emit_time"].tolist() == [1 * S, 5 * S, 20 * S, 40 * S, 50 * S]
    assert what_if(off) == []


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_beam_sessions_that_only_touch_stay_two(engine):
    """Measured on Beam 2.77's DirectRunner (dev/check_beam.py --probe): gap 10 s, a@10, b@20, watermark past
    both: Beam fires [10, 20) {a} and [20, 30) {b}, as Sessions.mergeWindows joins overlapping windows only.
    Spark merges windows that touch: [10, 30) {a, b}. One µs of overlap joins them in Beam too."""
    def sessions(b_at: float, preset_name: str) -> list:
        frame = pd.DataFrame({"id": ["a", "b", "w"], "kind": ["event", "event", "watermark"],
                              "event_time": [10, b_at, 100]})
        config = replace(make_config({"preset": preset_name, "window": "session:10", "strategy": "scripted",
                                      "delay": "0s"}), batches=BatchSpec(BatchKind.EVENT))
        windows = run(stream_from_frame(frame), config, engine=engine).windows
        return [(w.start / S, w.end / S, w.ids) for w in windows.itertuples()]

    assert sessions(20, "beam") == [(10, 20, ("a",)), (20, 30, ("b",))]
    assert sessions(19.999999, "beam") == [(10, 29.999999, ("a", "b"))]
    assert sessions(20, "spark") == [(10, 30, ("a", "b"))]


@pytest.mark.parametrize("engine", ["compiled", "reference"])
@pytest.mark.parametrize("name", ["beam", "flink", "voltsp", "textbook"])  # the presets with allowed lateness
def test_a_window_a_late_element_opens_fires_as_a_late_update(name, engine):
    """a@25 moves the watermark to 25 s; b@3 is late for [0, 10) but within 60 s of allowed lateness, and opens it.
    Its first emission was caused by b, not by the watermark (Beam's first pane is LATE, Flink's onElement fires
    it): LATE_UPDATE at revision 1. c@26 joins the open [20, 30), which stays a plain window; a second late
    element d@4 re-fires [0, 10) as revision 2. Counted as one window emitted and one update."""
    frame = pd.DataFrame({"id": ["a", "b", "c", "d"], "key": "k", "event_time": [25, 3, 26, 4],
                          "arrival_time": [0, 5, 6, 7]})
    config = replace(preset(name, delay=0, allowed_lateness=60 * S), window=WindowSpec.parse("tumbling:10"),
                     batches=BatchSpec(BatchKind.EVENT))
    result = run(stream_from_frame(frame), config, engine=engine)
    first = result.windows[result.windows["start"] == 0]
    assert [(w.reason, w.revision, w.ids) for w in first.itertuples()] == [
        ("LATE_UPDATE", 1, ("b",)), ("LATE_UPDATE", 2, ("b", "d"))]
    assert result.events["status"].tolist() == ["on_time", "late_updated", "on_time", "late_updated"]
    assert (result.metrics.windows_emitted, result.metrics.updates) == (1, 1)
