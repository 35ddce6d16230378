"""Kafka Streams' SlidingWindows (--window kstreams-sliding:D). Kafka's own cases are scenario files
(tests/scenarios/kafka_streams_sliding.yaml, run by test_engine_suites.py); here: Kafka's randomized test over many
shuffles, what the order of records does to the windows, the record cache, the spec, refusals, presets and exports."""

import random
from collections import defaultdict
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import preset
from explorer.config import Emit, Panes, RefusedWhen, WindowKind, WindowSpec, what_if
from explorer.core import run
from explorer.errors import InputError
from explorer.export import TARGETS, export
from explorer.streams import stream_from_frame

from strategies import NO_TRIGGERS, examples, stream_and_config

MS = 1000

# KStreamSlidingWindowAggregateTest.testAggregateRandomInput: these 21 records in a random order, then V at 181;
# SlidingWindows.ofTimeDifferenceAndGrace(10 ms, 100 ms), an aggregator that sorts the letters it holds
RANDOM_INPUT = [("A", 10), ("B", 15), ("C", 16), ("D", 18), ("E", 30), ("F", 40), ("G", 55), ("H", 56), ("I", 58),
                ("J", 58), ("K", 62), ("L", 63), ("M", 63), ("N", 63), ("O", 76), ("P", 77), ("Q", 80), ("R", 2),
                ("S", 3), ("T", 5), ("U", 8)]
# its verifyRandomTestResults: each window's last result, by start (ms)
EVERY_UPDATE = {0: "ARSTU", 3: "ASTU", 4: "ATU", 5: "ABTU", 6: "ABCU", 8: "ABCDU", 9: "ABCD", 11: "BCD", 16: "CD",
                17: "D", 20: "E", 30: "EF", 31: "F", 45: "G", 46: "GH", 48: "GHIJ", 52: "GHIJK", 53: "GHIJKLMN",
                56: "HIJKLMN", 57: "IJKLMN", 59: "KLMN", 63: "LMN", 66: "O", 67: "OP", 70: "OPQ", 77: "PQ", 78: "Q",
                171: "V"}
# ... and with emitStrategy(onWindowClose): "only non-expired records" (the store keeps 2·D + grace of starts)
ON_CLOSE = {start: EVERY_UPDATE[start] for start in (52, 53, 56, 57, 59, 63, 66, 67, 70)}


def stream_of(rows: list[tuple[str, str, int]]):
    frame = pd.DataFrame({"id": [r[0] for r in rows], "key": [r[1] for r in rows], "event_time": [r[2] for r in rows]})
    return stream_from_frame(frame, name="kafka", time_unit="ms")


def kafka(window: str, grace_ms: int, emit: Emit, **time):
    config = replace(preset("kafka-streams", delay=grace_ms * MS), window=WindowSpec.parse(window))
    return config.with_time(emit=emit, **time)


def last_results(rows: list[tuple[str, str, int]], emit: Emit, **time) -> dict[int, str]:
    """Each window's last emitted result, by start (ms), as Kafka's test reads them (END_OF_STREAM is no output)."""
    w = run(stream_of(rows), kafka("kstreams-sliding:10ms", 100, emit, **time)).windows
    w = w[w["reason"] != "END_OF_STREAM"]
    return {int(s) // MS: "".join(sorted(ids)) for s, ids in zip(w["start"], w["ids"])}


@pytest.mark.parametrize("seed", range(40))
def test_kafkas_randomized_case_in_any_order(seed):
    """Whatever order the records come in, the windows end with what Kafka's test expects, on every update and
    on close (where the windows that left the store before stream time closed them are never emitted)."""
    rows = [(letter, "A", t) for letter, t in RANDOM_INPUT]
    random.Random(seed).shuffle(rows)
    rows.append(("V", "A", 181))
    assert last_results(rows, Emit.ON_UPDATE) == EVERY_UPDATE
    assert last_results(rows, Emit.ON_CLOSE) == ON_CLOSE


def test_a_window_made_from_an_expired_one_misses_what_that_one_refused():
    """The order of records decides a window's contents, not only the records in it: Kafka makes a record's left
    window from the aggregate of the window before it, and that one may have expired before a late record reached
    it. D = 10 ms, no grace: x at 103 comes when stream time (key k2) is 108, so its left window [93, 103] has
    expired; r at 108 then makes [98, 108] from a's [90, 100] plus itself: a and r, without x, which lies in it."""
    rows = [("a", "k", 100), ("s", "k2", 108), ("x", "k", 103), ("r", "k", 108)]
    w = run(stream_of(rows), kafka("kstreams-sliding:10ms", 0, Emit.ON_UPDATE)).windows
    made = w[(w["key"] == "k") & (w["start"] == 98 * MS)]
    assert made[["end", "count"]].values.tolist() == [[109 * MS, 2]] and tuple(made["ids"].iloc[0]) == ("a", "r")
    events = run(stream_of(rows), kafka("kstreams-sliding:10ms", 0, Emit.ON_UPDATE)).events
    assert events.set_index("id")["status"].to_dict() == {"a": "on_time", "s": "on_time", "x": "dropped",
                                                         "r": "on_time"}  # x: its own window was skipped


def test_the_record_cache_forwards_each_window_once_per_commit_with_its_whole_aggregate():
    """With the cache on, a commit forwards each window it changed once, with the aggregate then, copied records
    included (a right window holds records it never took); a flush per record gives every update, as Kafka's
    cached driver tests show."""
    rows = [(f"r{i}", "A", t) for i, t in enumerate([10, 10, 14, 15, 20, 22, 30], start=1)]
    every = run(stream_of(rows), kafka("kstreams-sliding:10ms", 5, Emit.ON_UPDATE)).windows
    per_record = run(stream_of(rows), kafka("kstreams-sliding:10ms", 5, Emit.ON_BATCH, commit_interval=None)).windows
    assert per_record[["key", "start", "end", "count", "ids", "emit_batch"]].equals(
        every[["key", "start", "end", "count", "ids", "emit_batch"]])
    once = run(stream_of(rows), kafka("kstreams-sliding:10ms", 5, Emit.ON_BATCH, commit_interval=3_600_000_000)).windows
    assert sorted((int(s) // MS, int(n), "".join(sorted(ids))) for s, n, ids in
                  zip(once["start"], once["count"], once["ids"])) == [
        (0, 2, "r1r2"), (4, 3, "r1r2r3"), (5, 4, "r1r2r3r4"), (10, 5, "r1r2r3r4r5"), (11, 3, "r3r4r5"),
        (12, 4, "r3r4r5r6"), (15, 3, "r4r5r6"), (16, 2, "r5r6"), (20, 3, "r5r6r7"), (21, 2, "r6r7"), (23, 1, "r7")]
    assert set(once["revision"]) == {1}


def test_the_spec_is_written_once_and_read_back_and_refused_in_one_line():
    spec = WindowSpec.parse("kstreams-sliding:5m")
    assert (spec.kind, spec.size) == (WindowKind.KSTREAMS_SLIDING, 300 * 10**6) and str(spec) == "kstreams-sliding:5m"
    assert WindowSpec.parse(str(spec)) == spec
    with pytest.raises(InputError, match=r"^window kstreams-sliding:10500us: Kafka Streams' time difference is a "
                                         r"whole number of milliseconds"):
        WindowSpec.parse("kstreams-sliding:10.5ms")
    with pytest.raises(InputError, match="have no offset"):
        WindowSpec.parse("kstreams-sliding:10s+1s")


@pytest.mark.parametrize("trigger", [{"early_firings": 10**6}, {"continuous_event_time": 10**6},
                                     {"continuous_processing_time": 10**6}])
def test_beams_and_flinks_triggers_are_refused_with_it(trigger):
    rows = [("a", "k", 100)]
    with pytest.raises(InputError, match=r"^--window kstreams-sliding:10ms \(Kafka Streams' SlidingWindows\) has no "
                                         "triggers"):
        run(stream_of(rows), kafka("kstreams-sliding:10ms", 0, Emit.ON_CLOSE, **trigger))


@pytest.mark.parametrize("name", ["voltsp", "flink", "spark", "beam", "bytewax", "storm", "textbook"])
def test_it_is_kafka_streams_own_and_a_what_if_elsewhere(name):
    window = WindowSpec.parse("kstreams-sliding:10s")
    assert what_if(replace(preset("kafka-streams"), window=window)) == []
    assert what_if(replace(preset(name), window=window)) == ["--window kstreams-sliding:10s"]


def test_the_exports_write_kafkas_sliding_windows_or_say_what_they_run_instead():
    config = replace(preset("kafka-streams", delay=5 * 10**6), window=WindowSpec.parse("kstreams-sliding:10s"))
    java = export(config, "kafka-streams-java")
    assert ".windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(5)))" in java
    assert "NOTE" not in java
    for target in sorted(set(TARGETS) - {"kafka-streams-java"}):
        text = export(config, target)
        assert "has no windows made by records' time differences (Kafka Streams' kstreams-sliding:10s" in text, target
        assert "the program runs tumbling:10s" in text, target


def test_the_window_control_offers_it_with_the_size_box_as_its_time_difference():
    """The explorer's window kind takes kstreams-sliding: the size box, labelled "difference (s)", is D; the offset
    of a window shown before does not follow it (its windows have none)."""
    from explorer.ui.controls import Controls

    controls = Controls()
    controls.show(replace(preset("kafka-streams"), window=WindowSpec.parse("tumbling:1m+10s")))
    controls.window_kind.value = "kstreams-sliding"
    controls.size.value = 30
    assert controls.size.description == "difference (s)"
    assert controls.config().window == WindowSpec.parse("kstreams-sliding:30s")
    controls.show(replace(preset("kafka-streams"), window=WindowSpec.parse("kstreams-sliding:5s")))
    assert (controls.window_kind.value, controls.size.value) == ("kstreams-sliding", 5)
    assert controls.config().window == WindowSpec.parse("kstreams-sliding:5s")


def _sliding(config, half_seconds: int):
    """``config`` with Kafka Streams' sliding windows of D = ``half_seconds`` / 2 s, and no trigger (refused)."""
    window = WindowSpec(WindowKind.KSTREAMS_SLIDING, size=half_seconds * 500 * MS, slide=half_seconds * 500 * MS)
    return replace(config, window=window).with_time(**NO_TRIGGERS)


@settings(max_examples=examples(150), deadline=None)
@given(stream_and_config(), st.integers(1, 10))
def test_every_record_is_accounted_for_and_every_window_holds_what_it_took(case, half_seconds):
    """Under any preset's rules (what-ifs too: idle timeouts, processing time, Bytewax's clock, scripted
    watermarks, allowed lateness), each record's status follows from the windows that took or skipped it, and a
    window's emissions together hold every record it took, each once (and the records it was made from)."""
    stream, config = case
    config = _sliding(config, half_seconds)
    result = run(stream, config)
    m, a = result.metrics, result.assignments
    assert m.on_time + m.late_updated + m.side_output + m.dropped == m.events == len(stream)
    assert set(a["event"]) == set(range(len(stream)))
    status = result.events["status"].to_numpy()
    refused_somewhere, taken_somewhere = set(a[~a["admitted"]]["event"]), set(a[a["admitted"]]["event"])
    refused = (refused_somewhere - taken_somewhere if config.time.refused_when is RefusedWhen.EVERY_WINDOW
               else refused_somewhere)
    assert set(np.flatnonzero(np.isin(status, ["side_output", "dropped"]))) == refused
    ids, keys = result.events["id"].to_numpy(), result.events["key"].to_numpy()
    took = defaultdict(set)
    for row, start, end in a[a["admitted"]][["event", "start", "end"]].itertuples(index=False):
        took[(keys[row], start, end)].add(ids[row])
    held: dict[tuple, list] = defaultdict(list)
    last_batch: dict[tuple, int] = {}
    for w in result.windows.itertuples():
        assert len(w.ids) <= w.count and len(set(w.ids)) == len(w.ids)
        last_batch[(w.key, w.start, w.end)] = w.emit_batch
        if config.time.panes is Panes.DISCARDING:
            held[(w.key, w.start, w.end)].extend(w.ids)
        else:  # accumulating: a window's every emission holds all of it
            held[(w.key, w.start, w.end)] = list(w.ids)
    batch_of = dict(zip(ids, result.events["batch"]))
    for window, records in took.items():
        if config.time.continuous_processing_time is None and window in held:
            # a record taken after the window's last emission (an idle flush emitted it, the record reopened it)
            # is in no emission only when Kafka's store dropped the window before the watermark closed it
            before = {r for r in records if batch_of[r] <= last_batch[window]}
            assert before <= set(held[window]), window
        assert len(held[window]) == len(set(held[window]))


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 60)), min_size=1, max_size=25), st.integers(1, 12))
def test_with_grace_for_every_record_each_window_holds_the_records_in_it(records, d):
    """Kafka's design, which testAggregateRandomInput checks on one input: when no record comes too late, in
    whatever order they come, a key's windows end holding exactly its records in [start, start + D], and each
    record has its window ending at it ([0, D] for a record before D)."""
    rows = [(f"e{i}", key, t) for i, (key, t) in enumerate(records)]
    config = replace(preset("kafka-streams", delay=1000 * MS), window=WindowSpec.parse(f"kstreams-sliding:{d}ms"))
    w = run(stream_of(rows), config.with_time(emit=Emit.ON_UPDATE)).windows
    last = w.sort_values("revision", kind="stable").groupby(["key", "start", "end"]).tail(1)
    for key, start, end, ids in last[["key", "start", "end", "ids"]].itertuples(index=False):
        assert end == start + (d + 1) * MS
        inside = {i for i, k, t in rows if k == key and start <= t * MS < end}
        assert set(ids) == inside, (key, start // MS)
    starts = set(zip(last["key"], last["start"] // MS))
    assert all((key, max(t - d, 0)) in starts for _, key, t in rows)


def test_a_run_whose_records_would_join_too_many_windows_is_refused_with_the_figure(capsys, monkeypatch):
    """How many windows a record joins depends on how densely its key's records lie, not on the window alone:
    20,000 textbook events in one key, D = 1 h, make up to 236,172,800 (event, window) pairs (the kernel would map
    ~40 GB), which a machine with 1 GiB is refused in one line before anything runs, as a curve is; D = 10 s
    (819,580 pairs) runs. Counting a window per event, as for tumbling windows, let the 1 h run start."""
    from explorer.cli import main
    from explorer.metrics import curve
    from explorer.streams import generate

    monkeypatch.setattr("explorer.budget.available_bytes", lambda: 1024**3)
    argv = ["run", "--synthetic", "textbook", "--preset", "kafka-streams", "--window", "kstreams-sliding:1h"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: this run (20,000 events, up to 236,172,800 (event, window) pairs") and \
        "within 1h" in err and "GiB but 1.0 GiB is available" in err and err.count("\n") == 1, err
    stream = generate("textbook", events=20_000)
    config = replace(preset("kafka-streams"), window=WindowSpec.parse("kstreams-sliding:1h"))
    with pytest.raises(InputError, match=r"this sweep \(1 evaluation at once of 20,000 events, up to 236,172,800"):
        curve(stream, config, [0, 1_000_000], workers=1)
    assert main(["run", "--synthetic", "textbook", "--preset", "kafka-streams", "--window",
                 "kstreams-sliding:10s"]) == 0


def test_a_windows_updates_share_one_listing_of_what_it_took():
    """Every update of a Kafka sliding window lists the whole window: 600 records of a key 1 ms apart at D = 10 s
    make 600 windows, each updated by every later record, and updates listing 36M ids between them. They are
    prefixes of their window's last listing, so the Result holds each window's ids once (read one by one, the
    updates of 50,000 records at D = 2 min took 1.8 GB)."""
    rows = [(f"r{i}", "A", i) for i in range(600)]
    windows = run(stream_of(rows), kafka("kstreams-sliding:10s", 0, Emit.ON_UPDATE)).windows
    assert int(windows["count"].sum()) > 36_000_000
    pools = {id(ids._listing.rows): len(ids._listing.rows) for ids in windows["ids"] if len(ids) > 1}
    assert sum(pools.values()) <= int(windows.groupby("start")["count"].max().sum())  # each window's ids once
    first = windows[windows["start"] == 0]
    assert len(first) == 600
    assert [tuple(ids) for ids in first["ids"]] == [tuple(f"r{i}" for i in range(n)) for n in first["count"]]
