"""Updates coalesced per batch (``--emit on-batch``, Spark's ``--output-mode update``): Spark's own test cases
(tests/scenarios/spark_update_mode.yaml) on both engines, negative cases that turn the mode or the schedule off,
and the rule itself held against the on-update table it is cut from, on random streams and configurations."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import given, settings

from explorer.cli import main
from explorer.config import BatchKind, BatchSpec, Emit, Schedule, WindowKind, WindowSpec, preset, what_if
from explorer.core import Result, run, run_metrics
from explorer.errors import InputError
from explorer.streams import stream_from_frame

from conftest import make_config
from strategies import NO_TRIGGERS, examples, stream_and_config

CASES = yaml.safe_load((Path(__file__).parent / "scenarios" / "spark_update_mode.yaml").read_text())
S = 1_000_000
# the early and periodic triggers the strategies draw come before emit on-close's firing only: refused with on-batch


def replay(case: dict, engine: str = "compiled", **changes) -> Result:
    """The case's rows, each micro-batch a batch (the file's batch column), arriving a second apart."""
    rows = case["input"]
    frame = pd.DataFrame({"id": [r[0] for r in rows], "key": [r[1] for r in rows], "event_time": [r[2] for r in rows],
                          "batch": [r[3] for r in rows], "arrival_time": [r[3] for r in rows]})
    stream = stream_from_frame(frame, name=case["test"], time_unit="s")
    config = replace(make_config(case["config"]).with_time(**changes), batches=BatchSpec(BatchKind.COLUMN))
    return run(stream, config, engine=engine)


def outcome(result: Result) -> dict:
    """What the sink got (the windows still open when the test stops are never written) and the rows left out."""
    w = result.windows[result.windows["reason"] != "END_OF_STREAM"]
    fired = sorted([str(r.key), r.start // S, r.end // S, int(r.count), int(r.emit_batch)] for r in w.itertuples())
    dropped = sorted(result.events.loc[result.events["status"] == "dropped", "id"])
    return {"fired": fired, "dropped": dropped}


def expected(case: dict) -> dict:
    return {"fired": sorted(case["fired"]), "dropped": sorted(case["dropped"])}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_spark_output_mode_cases(name, engine):
    case = CASES[name]
    assert outcome(replay(case, engine)) == expected(case), case["test"]


@pytest.mark.parametrize("name, changes", [
    ("update_mode", {"emit": Emit.ON_CLOSE}),  # append mode: [10, 15) once, in batch 2, nothing for [25, 30)
    ("update_mode", {"emit": Emit.ON_UPDATE}),  # one row per record: (10, 1) … (10, 5)
    ("update_mode", {"schedule": Schedule.BACKLOG}),  # the watermark a batch late: c10 is kept
    ("append_mode", {"emit": Emit.ON_BATCH}),  # update mode writes [10, 15) in batch 1, with 5
])
def test_the_cases_fail_without_the_rule_they_check(name, changes):
    case = CASES[name]
    assert outcome(replay(case, **changes)) != expected(case)


def test_a_window_the_watermark_only_closes_writes_nothing_more():
    """Update mode: [10, 15) is written in batch 1 with its 5 rows; batch 2 closes it and writes (25, 1) only."""
    result = replay(CASES["update_mode"])
    assert [(r.start // S, int(r.emit_batch), r.reason, int(r.revision)) for r in result.windows.itertuples()] == \
        [(10, 1, "UPDATE", 1), (15, 1, "UPDATE", 1), (25, 2, "UPDATE", 1), (25, 3, "UPDATE", 2)]
    assert result.windows["ids"].iloc[3] == ("b25", "c25")  # the window's rows after the batch, not the batch's
    m = result.metrics
    assert (m.windows_emitted, m.updates, m.end_of_stream, m.dropped) == (3, 1, 0, 2)
    assert run_metrics(stream_of(CASES["update_mode"]), config_of(CASES["update_mode"])) == m


def stream_of(case: dict):
    rows = case["input"]
    return stream_from_frame(pd.DataFrame({"id": [r[0] for r in rows], "key": [r[1] for r in rows],
                                           "event_time": [r[2] for r in rows], "batch": [r[3] for r in rows],
                                           "arrival_time": [r[3] for r in rows]}), name=case["test"], time_unit="s")


def config_of(case: dict):
    return replace(make_config(case["config"]), batches=BatchSpec(BatchKind.COLUMN))


@settings(max_examples=examples(150), deadline=None)
@given(stream_and_config())
def test_coalesced_rows_are_the_on_update_rows_of_each_batch(case):
    """Against the on-update table of the same run: fixed windows emit once per (window, batch) that had an UPDATE,
    with the count of its last one and every record it took so far; the decisions (statuses, pairs, watermarks)
    are on-update's and on-close's alike; every session row is a session some record of that batch is in."""
    stream, config = case
    # per batch here; per commit interval below
    config = config.with_time(commit_interval=None, **NO_TRIGGERS)
    batch = config.with_time(emit=Emit.ON_BATCH)
    coalesced = run(stream, batch)
    updates = run(stream, config.with_time(emit=Emit.ON_UPDATE))
    closing = run(stream, config.with_time(emit=Emit.ON_CLOSE))
    for table in ("events", "assignments", "watermarks"):
        pd.testing.assert_frame_equal(getattr(coalesced, table), getattr(updates, table), check_dtype=False)
        pd.testing.assert_frame_equal(getattr(coalesced, table), getattr(closing, table), check_dtype=False)
    w, u = coalesced.windows, updates.windows
    if config.window.kind is WindowKind.SESSION:
        assert set(zip(w["key"], w["start"], w["end"], w["emit_batch"], w["reason"])) <= \
            set(zip(u["key"], u["start"], u["end"], u["emit_batch"], u["reason"]))
        return
    u = u[u["reason"] == "UPDATE"]
    assert (w["reason"] == "UPDATE").all()
    last = u.groupby(["key", "start", "end", "emit_batch"], sort=False)["count"].max()
    assert dict(zip(zip(w["key"], w["start"], w["end"], w["emit_batch"]), w["count"])) == last.to_dict()
    if config.time.panes.value == "accumulating":
        assert (w["count"].to_numpy() == w["ids"].map(len).to_numpy()).all()
    assert run_metrics(stream, batch) == coalesced.metrics


def test_output_mode_is_sparks_word_for_emit_on_batch(capsys):
    assert main(["run", "--synthetic", "voltsp", "--scenario", "3", "--preset", "spark", "--delay", "2",
                 "--output-mode", "update"]) == 0
    out = capsys.readouterr().out
    assert "output: update mode: every micro-batch writes each window it changed" in out
    assert "WHAT IF" not in out
    assert main(["run", "--synthetic", "voltsp", "--scenario", "3", "--preset", "spark", "--delay", "2"]) == 0
    assert "output: append mode" in capsys.readouterr().out
    assert main(["run", "--synthetic", "voltsp", "--scenario", "3", "--output-mode", "update", "--emit", "on-update"]) == 2
    assert "--output-mode update and --emit on-update say different things" in capsys.readouterr().err


def test_spark_has_append_and_update_but_not_every_update():
    assert what_if(preset("spark").with_time(emit=Emit.ON_BATCH)) == []
    assert what_if(preset("spark").with_time(emit=Emit.ON_UPDATE)) == ["--emit on-update"]
    assert what_if(replace(preset("spark"), window=WindowSpec.parse("sliding:10:5"))) == []
    assert what_if(replace(preset("spark", emit=Emit.ON_BATCH), window=WindowSpec.parse("session:5"))) == \
        ["--emit on-batch with session windows"]  # Spark refuses update mode for session windows


def test_spark_refuses_update_mode_with_session_windows():
    """StreamingSessionWindowSuite's "update mode - session window": Spark throws "Update output mode not supported
    for session window"; its own query and the PySpark export refuse it before Spark starts."""
    from explorer.export import export
    from explorer.spark.native_result import native_query

    config = replace(preset("spark", emit=Emit.ON_BATCH), window=WindowSpec.parse("session:5"))
    for refuse in (native_query, lambda c: export(c, "pyspark")):
        with pytest.raises(InputError, match="Spark refuses update output mode with session windows"):
            refuse(config)
    tumbling = replace(config, window=WindowSpec.parse("tumbling:5"))
    assert native_query(tumbling).output_mode == "update"
    assert "OUTPUT_MODE = 'update'" in export(tumbling, "pyspark")
    assert "OUTPUT_MODE = 'append'" in export(preset("spark"), "pyspark")


@pytest.mark.parametrize("target", ["flink-java", "pyflink", "beam-python", "bytewax", "voltsp-java"])
def test_targets_without_update_mode_say_so(target):
    from explorer.export import export

    text = export(replace(preset("spark", emit=Emit.ON_BATCH), batches=BatchSpec.parse("interval:1s")), target)
    assert "emit on-batch (each batch's updates coalesced" in text


def test_kafka_streams_record_cache_is_on_batch_per_commit_interval():
    from explorer.export import export

    config = preset("kafka-streams", emit=Emit.ON_BATCH, commit_interval=30 * S)
    text = export(config, "kafka-streams-java")
    assert "COMMIT_INTERVAL_MS_CONFIG, 30000" in text and "onWindowClose" not in text
    assert what_if(config) == []  # the cache is Kafka Streams' own setting
    assert "per commit interval (30s) have no equivalent in Flink" in export(config, "flink-java")
    assert "not a commit interval" in export(preset("kafka-streams", commit_interval=None), "kafka-streams-java")


SAME = ["key", "start", "end", "count", "emit_batch", "emit_time", "reason", "revision", "latency_processing"]


@settings(max_examples=examples(150), deadline=None)
@given(stream_and_config())
def test_one_record_a_batch_coalesces_nothing(case):
    """Batches of one event: each flush holds one record, so on-batch emits on-update's rows, tombstones included
    (every session a record replaced was flushed before), only carrying the window's events rather than the
    record's; but a session a record replaced by the same span gets no tombstone (a cache keeps a span's last
    value)."""
    stream, config = case
    config = replace(config.with_time(commit_interval=None, **NO_TRIGGERS),
                     batches=BatchSpec(BatchKind.EVENT))
    coalesced = run(stream, config.with_time(emit=Emit.ON_BATCH)).windows
    updates = run(stream, config.with_time(emit=Emit.ON_UPDATE)).windows
    span = ["key", "start", "end", "emit_batch"]
    again = updates[updates["reason"] == "UPDATE"][span].drop_duplicates()
    same = updates.merge(again.assign(again=True), on=span, how="left")["again"].eq(True).to_numpy()
    updates = updates[~(same & (updates["reason"] == "TOMBSTONE").to_numpy())].reset_index(drop=True)
    pd.testing.assert_frame_equal(coalesced[SAME], updates[SAME], check_dtype=False)


@settings(max_examples=examples(100), deadline=None)
@given(stream_and_config())
def test_a_commit_interval_flushes_at_its_multiples(case):
    """Kafka Streams' record cache: one row per window and commit interval it changed in, emitted at the
    interval's end with the window's count then; the drops are the batches' own."""
    stream, config = case
    # (a key Bytewax forgets can take a window up twice within one interval: two rows at one flush)
    config = config.with_time(emit=Emit.ON_BATCH, commit_interval=3 * S, forget_clock_when_empty=False,
                              **NO_TRIGGERS)
    result = run(stream, config)
    w = result.windows
    assert (w["emit_time"] % (3 * S) == 0).all()
    pd.testing.assert_frame_equal(result.events, run(stream, config.with_time(commit_interval=None)).events,
                                  check_dtype=False)
    if config.window.kind is not WindowKind.SESSION:
        updates = run(stream, config.with_time(emit=Emit.ON_UPDATE)).windows
        assert len(w) <= len(updates) and not w.duplicated(["key", "start", "end", "emit_time"]).any()
        assert result.metrics == run_metrics(stream, config)
