"""``--engine spark-native``: Spark's own query read into a Result, and the checks that keep a misread run from
becoming numbers.

The Spark-free tests feed ``native_result`` the observations Spark would report for the preset's own run (which
real Spark matches: ``test_spark_preset``), then tamper with one to show each check fails.
"""

import json
from datetime import datetime, timezone
import subprocess
import sys
from dataclasses import replace

import pandas as pd
import pytest

from explorer import preset, run
from explorer.config import BatchKind, BatchSpec, Scope, WindowSpec
from explorer.core.result import differences
from explorer.errors import InputError
from explorer.spark import NativeEmission, NativeRun, read_progress_log
from explorer.spark.native_result import NativeMismatch, as_spark_reports, native_query, native_result
from explorer.spark.progress import BatchProgress
from test_spark_preset import STREAMS, random_stream, straggling_stream

S = 1_000_000


def config_for(window: str, delay: float, **time):
    return replace(preset("spark", delay=round(delay * S), **time), window=WindowSpec.parse(window),
                   batches=BatchSpec(BatchKind.COLUMN))


def observed(result) -> NativeRun:
    """What Spark reports for a run that went as ``result`` says: its emissions, the windows left open, and a
    progress record per micro-batch (watermark, rows dropped at the operator, windows in state)."""
    windows = result.windows
    micro_batches = int(result.watermarks["batch"].max())
    emitted = [NativeEmission(int(w.emit_batch), w.key, int(w.start), int(w.end), tuple(w.ids))
               for w in windows[windows["reason"] == "WATERMARK"].itertuples()]
    still = [NativeEmission(micro_batches, w.key, int(w.start), int(w.end), tuple(w.ids))
             for w in windows[windows["reason"] == "END_OF_STREAM"].itertuples()]
    events, pairs = result.events, result.assignments
    refused = pairs[~pairs["admitted"]]
    progress = []
    for b in range(micro_batches):
        trace = result.watermarks[(result.watermarks["batch"] == b + 1) & (result.watermarks["scope"] == "*")]
        effective = trace["effective"].iloc[0]
        in_batch = refused[events["batch"].to_numpy()[refused["event"].to_numpy()] == b + 1]
        groups = {(events["key"].iloc[r.event], r.start, r.end) for r in in_batch.itertuples()}
        progress.append(BatchProgress(b, 0, int((events["batch"] == b + 1).sum()), 1,
                                      0 if pd.isna(effective) else int(effective), None, len(groups),
                                      result.metrics.max_open_windows, "q", "r"))
    return NativeRun(emitted, still, progress, [])


@pytest.mark.parametrize("make,seed,window,delay", STREAMS, ids=[f"{m.__name__.split('_')[0]}-{w}-delay{d}-seed{s}"
                                                                  for m, s, w, d in STREAMS])
def test_spark_reports_read_back_into_the_same_result(make, seed, window, delay):
    stream, config = make(seed), config_for(window, delay)
    predicted = run(stream, config)
    assert differences(as_spark_reports(predicted), native_result(stream, config, observed(predicted))) == []


def dropping_case():
    """A case where Spark drops rows (sliding windows, so some rows are refused by one window only)."""
    stream, config = straggling_stream(101), config_for("sliding:10:5", 0)
    predicted = run(stream, config)
    assert predicted.metrics.dropped > 0
    return stream, config, observed(predicted)


def test_a_dropped_count_that_does_not_add_up_is_refused():
    stream, config, seen = dropping_case()
    batch = next(i for i, p in enumerate(seen.progress) if p.dropped)
    progress = list(seen.progress)
    progress[batch] = replace(progress[batch], dropped=progress[batch].dropped - 1)
    with pytest.raises(NativeMismatch, match=f"dropped by the watermark in micro-batch {batch}"):
        native_result(stream, config, replace(seen, progress=progress))


def test_a_watermark_the_events_do_not_give_is_refused():
    stream, config, seen = dropping_case()
    progress = list(seen.progress)
    progress[-1] = replace(progress[-1], watermark=progress[-1].watermark + 1_000)
    with pytest.raises(NativeMismatch, match="watermark"):
        native_result(stream, config, replace(seen, progress=progress))


def test_an_event_in_a_window_that_cannot_hold_it_is_refused():
    stream, config, seen = dropping_case()
    first = seen.emissions[0]
    moved = replace(first, start=first.start + 1, end=first.end + 1)
    with pytest.raises(NativeMismatch, match="does not hold it"):
        native_result(stream, config, replace(seen, emissions=[moved, *seen.emissions[1:]]))


@pytest.mark.parametrize("config,words", [
    (preset("voltsp"), "--strategy min (Spark's: max)"),
    (preset("spark", idle_timeout=10 * S), "--idle-timeout 10s (Spark's: off)"),
    (preset("flink"), "--late side-output (Spark's: drop)"),
    (preset("spark", scope=Scope.KEY), "not --scope key"),
    (preset("spark", watermark_unit=1), "--watermark-unit 1us (Spark's: 1ms)"),
], ids=["voltsp", "idle-timeout", "flink", "per-key", "microsecond-watermark"])
def test_what_spark_cannot_express_is_refused_in_its_words(config, words):
    with pytest.raises(InputError) as refused:
        native_query(config)
    assert words in str(refused.value)


@pytest.mark.spark
def test_cli_spark_native_is_the_preset_on_a_file(tmp_path, spark):
    """The command line, end to end, on a CSV file (windows offset by 2 s: Spark's startTime): Spark's own query and
    the preset print the same JSON, but for the engine's name; settings Spark cannot express exit 2 in one line
    before Spark starts."""
    from explorer.cli import main

    source = tmp_path / "s.csv"
    random_stream(6).events[["id", "key", "event_time", "arrival_time", "batch"]].to_csv(source, index=False)
    args = ["run", str(source), "--time-unit", "us", "--preset", "spark", "--window", "sliding:20s:5s+2s", "--delay", "6s",
            "--batches", "column", "--format", "json"]
    outputs = {}
    for engine in ("local", "spark-native"):
        out = tmp_path / f"{engine}.json"
        with out.open("w") as handle, pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "stdout", handle)
            main([*args, "--engine", engine])
        outputs[engine] = json.loads(out.read_text())
    assert outputs["spark-native"].pop("engine") == "spark-native"
    assert outputs["local"].pop("engine") == "local"
    assert outputs["spark-native"] == outputs["local"]
    refused = subprocess.run([sys.executable, "-m", "explorer", "run", str(source), "--time-unit", "us", "--preset", "flink",
                              "--window", "tumbling:10s", "--engine", "spark-native"], capture_output=True, text=True)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "--late side-output" in refused.stderr


@pytest.mark.spark
def real_job(tmp_path, spark):
    """A real query's run (sliding 10 s / 5 s, delay 0, on a straggling stream), its progress log written as a
    job logs it, and its events export: the micro-batch each row was read in, as Spark numbers it."""
    from explorer.spark import run_native
    from explorer.streams import assign_batches, load_events
    from explorer.streams.loading import parse_time_units

    stream = straggling_stream(101)
    ran = run_native(spark, stream, WindowSpec.parse("sliding:10:5"), 0, BatchSpec(BatchKind.COLUMN))
    log = tmp_path / "progress.jsonl"
    log.write_text("\n".join(ran.log) + "\n")
    export = tmp_path / "events.csv"
    frame = stream.events[["id", "key", "event_time", "arrival_time", "batch"]].copy()
    frame["batch"] = assign_batches(stream, BatchSpec(BatchKind.COLUMN)).number - 1  # one micro-batch each
    frame.to_csv(export, index=False)
    return stream, ran, log, export, load_events(export, time_unit=parse_time_units("us"))


def test_a_real_query_log_explained_with_its_events(tmp_path, spark, capsys):
    """A real query's progress log, written as a job logs it (and wrapped as Spark's event log has it), reads
    back to the same records; with the events export, the spark preset's replay names the events behind every
    numRowsDroppedByWatermark and agrees micro-batch by micro-batch. The wrong delay shows where it parts."""
    from explorer.cli import main
    from explorer.spark.job_log import explain_job
    from explorer.spark.progress import PROGRESS_EVENT

    stream, ran, log, export, events = real_job(tmp_path, spark)
    event_log = tmp_path / "eventlog"
    event_log.write_text("\n".join([json.dumps({"Event": "SparkListenerApplicationStart"})]
                                    + [json.dumps({"Event": PROGRESS_EVENT, "progress": json.loads(line)})
                                       for line in ran.log]) + "\n")
    assert read_progress_log(log) == ran.progress == read_progress_log(event_log)
    assert sum(p.dropped for p in ran.progress) > 0

    explained = explain_job(ran.progress, events, config_for("sliding:10:5", 0))
    assert all(b.agrees for b in explained.batches)
    assert [b.dropped_groups for b in explained.batches] == [p.dropped for p in ran.progress]
    native = native_result(stream, config_for("sliding:10:5", 0), ran).events
    assert {i for b in explained.batches for i in b.dropped_ids} == set(native.loc[native["status"] == "dropped", "id"])
    assert not all(b.agrees for b in explain_job(ran.progress, events, config_for("sliding:10:5", 2)).batches)

    main(["spark-log", str(log), str(export), "--time-unit", "us", "--window", "sliding:10s:5s", "--delay", "0"])
    printed = capsys.readouterr().out
    assert "agrees with the log in every micro-batch" in printed
    assert f"Spark reported {sum(p.dropped for p in ran.progress)} rows dropped" in printed
    assert "would have kept 99%" in printed
    main(["spark-log", str(log)])  # the log alone: one row per micro-batch, and the total
    alone = capsys.readouterr().out.splitlines()
    assert len(alone) == len(ran.progress) + 2
    assert alone[-1].startswith(f"{sum(p.dropped for p in ran.progress)} rows dropped by the watermark")


def test_a_kafka_export_without_batch_ids_is_placed_by_the_logs_offsets(tmp_path, spark, capsys):
    """A job reading Kafka logs, per micro-batch, the offsets it read of each partition; its topic's export has
    each record's partition and offset, not Spark's batchId. The real query's log, its sources written as a
    Kafka source reports them (there is no Kafka here), places every row in its micro-batch: the explanation
    equals the one from the batch column, in the API and in the CLI."""
    from explorer.cli import main
    from explorer.spark.job_log import explain_job
    from explorer.streams import load_events
    from explorer.streams.loading import parse_time_units

    _, ran, log, export, events = real_job(tmp_path, spark)
    frame = pd.read_csv(export)
    frame["partition"] = frame["key"].map({"a": 0, "b": 1})
    frame = frame.sort_values(["batch", "arrival_time"], kind="stable")
    frame["offset"] = frame.groupby("partition").cumcount()
    ends = {p: frame[frame["partition"] == p].groupby("batch")["offset"].max().add(1) for p in (0, 1)}
    kafka_log = tmp_path / "kafka-progress.jsonl"
    lines = []
    for line in ran.log:
        record = json.loads(line)
        batch = record["batchId"]
        end = {str(p): int(ends[p][ends[p].index <= batch].max()) if (ends[p].index <= batch).any() else 0
               for p in (0, 1)}
        start = None if batch == 0 else {p: (int(ends[int(p)][ends[int(p)].index < batch].max())
                                             if (ends[int(p)].index < batch).any() else 0) for p in end}
        record["sources"] = [{"description": "KafkaV2[Subscribe[readings]]", "numInputRows": record["numInputRows"],
                              "startOffset": start and {"readings": start}, "endOffset": {"readings": end}}]
        lines.append(json.dumps(record))
    kafka_log.write_text("\n".join(lines) + "\n")
    topic_export = tmp_path / "topic.csv"
    frame.drop(columns="batch").sample(frac=1, random_state=3).to_csv(topic_export, index=False)  # any row order

    config = config_for("sliding:10:5", 0)
    by_offsets = explain_job(read_progress_log(kafka_log), load_events(topic_export, parse_time_units("us")), config)
    by_batch = explain_job(ran.progress, events, config)
    assert [(b.replayed, b.watermark, b.dropped_groups, b.dropped_ids) for b in by_offsets.batches] == \
        [(b.replayed, b.watermark, b.dropped_groups, b.dropped_ids) for b in by_batch.batches]
    assert all(b.agrees for b in by_offsets.batches) and by_offsets.spark_dropped > 0

    main(["spark-log", str(kafka_log), str(topic_export), "--time-unit", "us", "--window", "sliding:10s:5s",
          "--delay", "0"])
    assert "agrees with the log in every micro-batch" in capsys.readouterr().out

    from explorer.ui import Explorer  # the explorer's panel, with the topic's export as the stream
    explorer = Explorer(load_events(topic_export, parse_time_units("us")), "spark")
    explorer.controls.window_kind.value = "sliding"
    explorer.controls.size.value, explorer.controls.slide.value = 10, 5
    explorer.controls.delay.value = 0
    explorer.job_log_panel.upload.value = ({"name": "kafka-progress.jsonl", "type": "", "size": 1,
                                            "content": memoryview(kafka_log.read_bytes()),
                                            "last_modified": datetime(2026, 11, 24, tzinfo=timezone.utc)},)
    shown = explorer.job_log_panel.explanation
    assert shown is not None and [b.dropped_ids for b in shown.batches] == [b.dropped_ids for b in by_batch.batches]


def test_the_explorer_draws_a_real_jobs_log_beside_its_replay(tmp_path, spark):
    """The explorer's "Explain a Spark job" panel: the log uploaded draws Spark's watermark, durations and dropped
    rows on the job's timeline; with the job's export as the stream, the replay's watermark and late groups
    beside them, equal; a file that is not a log is refused in one line naming it."""
    from explorer.ui import Explorer

    UPLOADED = datetime(2026, 11, 23, tzinfo=timezone.utc)
    _, ran, log, _, events = real_job(tmp_path, spark)
    explorer = Explorer(events, "spark")
    explorer.controls.window_kind.value = "sliding"
    explorer.controls.size.value, explorer.controls.slide.value = 10, 5
    explorer.controls.delay.value = 0
    panel = explorer.job_log_panel
    panel.upload.value = ({"name": "progress.jsonl", "type": "", "size": log.stat().st_size,
                           "content": memoryview(log.read_bytes()), "last_modified": UPLOADED},)
    assert panel.explanation is not None and all(b.agrees for b in panel.explanation.batches), panel.message.value
    traces = {t.name: t for t in panel.figure.data}
    spark_marks = [p.watermark / 1e6 for p in ran.progress]
    assert list(traces["Spark's watermark"].y) == spark_marks
    assert list(traces["dropped (Spark)"].y) == [p.dropped for p in ran.progress] and sum(spark_marks) > 0
    replayed = [b for b in panel.explanation.batches if b.replayed]
    assert list(traces["late (key, window) in the replay"].y) == [p.dropped for p in ran.progress][:len(replayed)]
    assert list(traces["replay's watermark"].y) == spark_marks[:len(replayed)]
    assert list(traces["duration"].y) == [p.duration_ms / 1000 for p in ran.progress]
    assert "agrees with the log in every micro-batch" in panel.table.value
    explorer.controls.delay.value = 2  # the wrong delay: the replay parts from the log
    panel.replay.click()
    assert "differs from the log" in panel.table.value
    panel.upload.value = ({"name": "notes.txt", "type": "", "size": 5, "content": memoryview(b"hello"),
                           "last_modified": UPLOADED},)
    assert "notes.txt line 1: not JSON" in panel.message.value and "/wx-log-" not in panel.message.value
