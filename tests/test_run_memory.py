"""`run` at 10M events within 3 GB (issue 31): a loaded Stream keeps its ids as Arrow text, the compiled Result's
window lists index that text and make Python strings only for the ids read, and a batch per event is one array.
What these must not change: the ids each window lists, in the order it lists them, and the batches."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from explorer.cli import main
from explorer.config import BatchKind, BatchSpec, WindowSpec, preset
from explorer.core import run
from explorer.streams import Stream, load_events, stream_from_frame
from explorer.streams.batching import _assign, _one_per_event
from explorer.streams.stream import ID_DTYPE


def chunked_file(tmp_path):
    """600 events whose ids are not in arrival order, written in row groups of 64 (so Arrow reads the id column
    as ten chunks), arrivals late enough that windows re-fire with lateness."""
    rng = np.random.default_rng(7)
    n = 600
    event = np.arange(n, dtype=np.int64) * 100 + rng.integers(0, 50, n)
    arrival = event + rng.exponential(800, n).astype(np.int64)
    table = pa.table({"id": [f"id-{v}" for v in rng.permutation(n * 3)[:n]], "key": [f"k{v}" for v in event % 3],
                      "event_time": event, "arrival_time": arrival})
    path = tmp_path / "events.parquet"
    pq.write_table(table, path, row_group_size=64)
    return path


def listed(result):
    return [tuple(ids) for ids in result.windows["ids"]]


def test_window_lists_name_the_same_ids_as_python_strings_did(tmp_path):
    """The compiled run on the loaded (Arrow) ids lists, window by window, exactly what the reference engine
    lists and what the same run lists from Python strings; so does ``run --format json``."""
    stream = load_events(chunked_file(tmp_path), time_unit="ms")
    assert stream.events["id"].dtype == ID_DTYPE
    flink = preset("flink")
    config = replace(flink, window=WindowSpec.parse("tumbling:1"),
                     time=replace(flink.time, bound=200_000, allowed_lateness=1_000_000))
    compiled = run(stream, config)
    as_strings = Stream(stream.events.assign(id=stream.events["id"].to_numpy(dtype=object)), name=stream.name)
    reference = run(as_strings, config, engine="reference")
    assert len(compiled.windows) > 100 and compiled.metrics.updates > 0  # windows re-fired with their whole lists
    assert listed(compiled) == listed(reference) == listed(run(as_strings, config))
    assert compiled.events["id"].tolist() == reference.events["id"].tolist()
    assert all(type(i) is str for ids in listed(compiled) for i in ids)


def test_the_json_windows_list_the_ids_in_arrival_order(tmp_path, capsys):
    path = chunked_file(tmp_path)
    assert main(["run", str(path), "--time-unit", "ms", "--window", "tumbling:1", "--delay", "60",
                 "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    frame = pq.read_table(path).to_pandas().sort_values(["arrival_time", "event_time", "id"])
    by_window = frame.assign(start=frame["event_time"] // 1000 * 1_000_000).groupby(["key", "start"], sort=False)
    expected = {(key, start): ids.tolist() for (key, start), ids in by_window["id"]}
    assert {(w["key"], w["start"]): w["ids"] for w in document["windows"]} == expected


def test_the_ids_take_arrow_text_memory_not_python_strings(tmp_path):
    """About 15 bytes an id (a Python string is 60-70): at 10M events the difference is 0.6 GB of a 3 GB run."""
    ids = load_events(chunked_file(tmp_path), time_unit="ms").events["id"]
    assert ids.array.nbytes < 20 * len(ids)
    assert ids.memory_usage(deep=True) < 25 * len(ids)


def test_a_batch_per_event_commits_at_the_latest_arrival_so_far():
    """A Stream built by hand may have arrivals that go back: its commits are the running latest, as the general
    code gives them, though a loaded stream's (always in order) are its arrivals themselves."""
    arrival = np.array([5, 3, 9, 9, 7, 12], dtype=np.int64)
    stream = Stream(pd.DataFrame({"id": list("abcdef"), "key": "k", "event_time": arrival, "arrival_time": arrival,
                                  "batch": 0, "partition": "", "offset": -1, "value": 1.0}))
    fast, general = _one_per_event(arrival), _assign(stream, BatchSpec(BatchKind.COUNT, count=1), False)
    for field in ("number", "commit_time", "starts", "opens", "scripted"):
        assert np.array_equal(getattr(fast, field), getattr(general, field)), field


def test_a_file_nearly_in_arrival_order_is_ordered_without_touching_the_callers_table():
    """Few rows move (ties at an instant, a straggler): only those are rewritten, in columns loading made itself,
    never in the caller's table."""
    n = 100
    arrival = np.arange(n, dtype=np.int64)
    arrival[[10, 11]] = arrival[[11, 10]]  # two rows out of arrival order
    frame = pd.DataFrame({"id": [f"e{i}" for i in range(n)], "event_time": arrival, "arrival_time": arrival,
                          "batch": arrival.copy(), "value": np.arange(n, dtype=float)})
    before = frame.copy()
    stream = stream_from_frame(frame)
    pd.testing.assert_frame_equal(frame, before)
    assert stream.events["id"].tolist()[9:13] == ["e9", "e11", "e10", "e12"]
    assert stream.events["value"].tolist()[9:13] == [9.0, 11.0, 10.0, 12.0]
    assert stream.events["arrival_time"].is_monotonic_increasing


def test_the_arena_holds_a_batch_per_events_arrivals_once_and_no_queue_it_does_not_read(tmp_path):
    """At 10M events each table of the arena is 80 MB: a batch per event opens and commits at its event's arrival,
    so those two tables are one, and Bytewax's queue of held items (−1 when written) is written only where live
    wake-ups read it (together 150 MB of `run`'s peak at 10M)."""
    from explorer.core.compiled.plan import prepare

    stream = load_events(chunked_file(tmp_path))
    plain = prepare(stream, preset("voltsp"))
    assert plain.state.batch_open == plain.state.commit
    assert not plain.table("ev_held_next").any()  # (zeros: its pages never written)
    live = prepare(stream, preset("bytewax").with_time(bytewax_live_wakeups=True))
    assert (live.table("ev_held_next") == -1).all()


def test_a_column_the_file_does_not_have_is_one_value_not_a_column_of_it(tmp_path):
    """Offsets (−1), values (1.0), the partition ("") and the key of a file with one are the same on every row:
    held as that one value, not 80 MB each at 10M events (228 MB of `run`'s peak there), also once the rows are
    put in arrival order (this file's are not) and when the file has one key."""
    stream = load_events(chunked_file(tmp_path))
    for column, value in (("offset", -1), ("value", 1.0), ("partition", "")):
        held = stream.events[column].to_numpy()
        assert held.strides == (0,) and len(held) == 600 and (held == value).all(), column
    assert stream.events["key"].to_numpy().strides != (0,)
    one_key = stream_from_frame(pd.DataFrame({"id": ["a", "b", "c"], "key": "dev", "event_time": [3, 1, 2],
                                              "arrival_time": [3, 1, 2]}))
    assert one_key.events["key"].to_numpy().strides == (0,) and one_key.events["key"].tolist() == ["dev"] * 3
    assert one_key.events["id"].tolist() == ["b", "c", "a"]
