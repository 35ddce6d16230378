"""Invariants of the semantics over random streams and configurations (reference engine, every option)."""

from collections import defaultdict

import numpy as np
import pandas as pd
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from explorer import load_events
from explorer.config import Emit, Panes, RefusedWhen, TimeSource, WindowKind
from explorer.core import run

from explorer.streams import stream_from_frame

from strategies import configs, examples, frames, keys_in_one_partition, stream_and_config

SETTINGS = settings(max_examples=examples(250), deadline=None)


@SETTINGS
@given(stream_and_config())
def test_watermarks_never_decrease(case):
    stream, config = case
    forgets = config.time.forget_clock_when_empty and config.window.kind is not WindowKind.SESSION
    assume(not (forgets and config.time.scope.value == "key"))  # Bytewax's emptied keys start afresh, by design
    result = run(stream, config)
    for _, trace in result.watermarks.groupby("scope"):
        marks = trace.sort_values(["time", "batch"], kind="stable")
        for column in ("watermark", "effective"):
            values = marks[column].dropna().to_numpy(dtype=np.int64)
            assert (np.diff(values) >= 0).all(), column
    seen = result.events["effective_watermark"]
    for _, rows in result.events.assign(eff=seen).groupby("key" if config.time.scope.value == "key" else "partition"):
        if config.time.scope.value in ("key",) and config.time.time_source is TimeSource.EVENT:
            values = rows["eff"].dropna().to_numpy(dtype=np.int64)
            assert (np.diff(values) >= 0).all()


@SETTINGS
@given(stream_and_config())
def test_no_window_fires_before_it_may(case):
    stream, config = case
    result = run(stream, config)
    events = result.events
    for w in result.windows.itertuples():
        if w.reason == "WATERMARK":
            assert w.effective_watermark is not pd.NA and w.effective_watermark >= w.end
        elif w.reason == "IDLE_TIMEOUT":
            mine = events[(events["key"] == w.key) & (events["batch"] <= w.emit_batch)]
            if config.time.idle_clock is TimeSource.PROCESSING:
                assert w.emit_time - mine["arrival_time"].max() >= config.time.idle_timeout
            else:
                arrived = events[events["batch"] <= w.emit_batch]
                assert arrived["event_time"].max() - mine["event_time"].max() >= config.time.idle_timeout
        elif w.reason == "LATE_UPDATE":  # a re-emission, or the first firing of a window only late events filled
            if w.revision == 1:
                assert w.effective_watermark is not pd.NA and w.effective_watermark >= w.end
                rows = events.index[events["id"].isin(w.ids)]
                a = result.assignments
                mine = a[a["event"].isin(rows) & a["admitted"]]
                if config.window.kind is not WindowKind.SESSION:
                    mine = mine[(mine["start"] == w.start) & (mine["end"] == w.end)]
                assert len(mine) and mine["late"].all(), f"{w.key} {w.start}-{w.end}: an on-time event in a late first pane"
            else:
                assert w.revision >= 2


@SETTINGS
@given(stream_and_config())
def test_every_event_is_accounted_for_once(case):
    stream, config = case
    result = run(stream, config)
    m = result.metrics
    assert m.on_time + m.late_updated + m.side_output + m.dropped == m.events == len(stream)
    a = result.assignments
    assert set(a["event"]) == set(range(len(stream)))  # every event was assigned somewhere
    status = result.events["status"].to_numpy()
    refused_somewhere, taken_somewhere = set(a[~a["admitted"]]["event"]), set(a[a["admitted"]]["event"])
    every_window = config.time.refused_when is RefusedWhen.EVERY_WINDOW  # refused only where no window took it
    refused = refused_somewhere - taken_somewhere if every_window else refused_somewhere
    assert set(np.flatnonzero(np.isin(status, ["side_output", "dropped"]))) == refused
    assert m.partly_dropped == len(refused_somewhere - refused)
    late_admitted = a[a["admitted"] & a["late"]]["event"].unique()
    assert set(np.flatnonzero(status == "late_updated")) == set(late_admitted) - refused

    # revisions count up: an emission with revision r > 1 updates an earlier one with r − 1 (for sessions,
    # an earlier session of the same key that it grew from, so overlapping)
    earlier = result.windows.sort_values(["emit_batch", "emit_time", "revision"], kind="stable")
    for w in earlier.itertuples():
        if w.revision > 1:
            before = earlier[(earlier["key"] == w.key) & (earlier["revision"] == w.revision - 1)
                             & (earlier["start"] <= w.end) & (earlier["end"] >= w.start)]
            assert len(before), f"revision {w.revision} of {w.key} {w.start}-{w.end} updates nothing"
            if config.window.kind is not WindowKind.SESSION:
                assert ((before["start"] == w.start) & (before["end"] == w.end)).any()

    # the last emission of each window holds exactly the events admitted to it, each once (a window Bytewax's
    # forgetting emptied and an event opened again is a new incarnation, revision 1 again: each one's last)
    ordered = result.windows.sort_values(["emit_batch", "emit_time"], kind="stable")
    incarnation = (ordered["revision"] == 1).groupby([ordered["key"], ordered["start"], ordered["end"]]).cumsum()
    last = ordered.assign(incarnation=incarnation).sort_values("revision", kind="stable").groupby(
        ["key", "start", "end", "incarnation"]).tail(1)
    ids, keys = result.events["id"].to_numpy(), result.events["key"].to_numpy()
    admitted = defaultdict(list)
    for row, start, end in a[a["admitted"]][["event", "start", "end"]].itertuples(index=False):
        admitted[(keys[row], start, end)].append(ids[row])
    held = defaultdict(list)
    # (emit on-batch coalesces the updates: each emission holds its window's events then, as on close)
    if config.time.panes is Panes.ACCUMULATING and config.time.emit in (Emit.ON_CLOSE, Emit.ON_BATCH):
        for w in last.itertuples():
            assert len(w.ids) == len(set(w.ids)) == w.count
            if (w.key, w.start, w.end) in admitted or config.window.kind is not WindowKind.SESSION:
                held[(w.key, w.start, w.end)].extend(w.ids)  # (a session that later grew is superseded)
    else:  # discarding panes, or an UPDATE per record: together a window's emissions carry each of its events once
        session = config.window.kind is WindowKind.SESSION  # (a session's span changes: its key's, together)
        for w in ordered.itertuples():
            assert len(w.ids) <= w.count
            held[w.key if session else (w.key, w.start, w.end)].extend(w.ids)
        if session:
            admitted = {key: [i for (k, _, _), found in admitted.items() if k == key for i in found]
                        for key in {k for k, _, _ in admitted}}
    if config.window.kind is WindowKind.KSTREAMS_SLIDING:  # Kafka Streams makes a window from another's aggregate:
        # it holds records it never took; and one that left the store before it closed is never emitted
        assert all(set(v) <= set(held[k]) for k, v in admitted.items() if k in held)
    elif config.time.continuous_processing_time is None:
        assert {k: sorted(v) for k, v in held.items()} == {k: sorted(v) for k, v in admitted.items()}
    else:  # Flink's ContinuousProcessingTimeTrigger: what arrives after a window's last periodic firing is never
        assert all(set(v) <= set(admitted[k]) for k, v in held.items())  # emitted (the watermark only purges it)

    # completeness as a live job gets it leaves out exactly the events that only the flush at the end emits (not
    # those an early pane of the window emitted before)
    w = result.windows
    early = w[w["reason"] == "EARLY"]
    shown = defaultdict(set)
    for key, start, end, ids in early[["key", "start", "end", "ids"]].itertuples(index=False):
        shown[(key, start, end)].update(ids)
    at_end = w[(w["reason"] == "END_OF_STREAM") & (w["revision"] == 1 + w.merge(
        early.groupby(["key", "start", "end"]).size().rename("n").reset_index(), how="left",
        on=["key", "start", "end"])["n"].fillna(0).to_numpy())]
    carried = sum(len(set(ids) - shown[(key, start, end)])
                  for key, start, end, ids in at_end[["key", "start", "end", "ids"]].itertuples(index=False))
    assert round(m.completeness_live * len(a)) == round(m.completeness * len(a)) - carried


@settings(max_examples=examples(60), deadline=None)
@given(frames(), st.data())
def test_results_do_not_depend_on_how_rows_are_split_into_files(tmp_path_factory, frame, data):
    # the file as written (a loaded stream's arrivals may have been raised to keep processing time monotone)
    stream = stream_from_frame(frame, name="hypothesis")
    config = data.draw(configs(has_batch=stream.has_batch, partition_scope=keys_in_one_partition(stream)))
    parts = data.draw(st.lists(st.integers(0, 2), min_size=len(frame), max_size=len(frame)))
    folder = tmp_path_factory.mktemp("split")
    shuffled = frame.sample(frac=1, random_state=data.draw(st.integers(0, 1000)))
    for p in sorted(set(parts)):
        piece = shuffled[[q == p for q in parts]]
        if len(piece):
            piece.to_csv(folder / f"part-{p}.csv", index=False)
    whole = run(stream, config)
    split = run(load_events(folder), config)
    for table in ("events", "assignments", "windows", "watermarks"):
        pd.testing.assert_frame_equal(getattr(whole, table), getattr(split, table), check_dtype=False)


def test_a_batch_column_that_disagrees_with_arrivals_never_turns_a_clock_back(tmp_path):
    """Issue 17: b is in batch 2 but arrived (3) before a's batch 1 committed (12); with interval batching the
    commits went 13 → 3 → 13, Bytewax's event clock with them, and b (t = 1) counted as on time."""
    from dataclasses import replace

    from explorer.config import BatchSpec, preset

    path = tmp_path / "batches.csv"
    path.write_text("id,event_time,arrival_time,batch\na,10,12,1\nb,1,3,2\nc,11,13,2\n")
    stream = load_events(path)
    assert stream.arrivals_raised == 1
    for batches in ("interval:5", "column", "event", "count:2"):
        config = replace(preset("bytewax"), batches=BatchSpec.parse(batches))
        result = run(stream, config)
        assert (np.diff(result.watermarks["watermark"].to_numpy(dtype=np.int64)) >= 0).all(), batches
        assert result.events.set_index("id")["status"]["b"] == "dropped", batches
        reference = run(stream, config, engine="reference")
        pd.testing.assert_frame_equal(result.events, reference.events, check_dtype=False)
