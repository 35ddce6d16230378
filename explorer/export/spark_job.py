"""The PySpark export: a whole program that runs the tuned query on the user's own file, at the cadence the
prediction assumed, and writes what Spark emitted where ``verify`` (and the user) can read it.

Why a replay and not a plain ``readStream`` of the file: a file source reads one file as one micro-batch, so the
watermark never moves inside it and nothing is ever dropped; the numbers would be another job's. The program
cuts the file into one micro-batch per trigger interval of arrival time (one file per micro-batch, read with
``maxFilesPerTrigger=1`` and ``availableNow``, as ``explorer.spark.native`` does), then runs the query exactly
as it would be deployed: ``withWatermark`` + ``groupBy(window, key)`` in append mode, or in update mode for
``--emit on-batch`` (``--output-mode update``: every micro-batch writes each window it changed, with its events
then, so a window is written once per micro-batch that changed it). Spark refuses update mode with session
windows, and so does the export.

Output contract (docs/export.md): ``python job.py EVENTS OUTDIR`` writes ``OUTDIR/emissions.jsonl``, one JSON
object per window Spark emitted (in update mode, per micro-batch that changed it), in Spark's order: ``key``,
``window_start`` and ``window_end`` (µs since the epoch, or since the stream's zero for relative times), ``ids``
(the file's id column, or ``e1``, ``e2``… by row as the explorer numbers them), ``micro_batch`` (1-based) and
``seq``; and ``OUTDIR/progress.jsonl``, Spark's report of each micro-batch: ``micro_batch``, ``rows`` and
``dropped_by_watermark`` (its ``numRowsDroppedByWatermark``).

The program imports only pandas, numpy and pyspark: it is the user's to keep.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.config import BatchKind, Emit, RunConfig, WindowKind
from explorer.errors import InputError
from explorer.export.common import ExportSource, spark_interval, unsupported
from explorer.export.replay import program_head, source_settings


@dataclass(frozen=True)
class Cadence:
    """How the job cuts arrivals into micro-batches: a trigger interval in µs, or one micro-batch per event."""

    trigger: int | None  # µs; None: one micro-batch per event

    @staticmethod
    def of(config: RunConfig) -> "Cadence":
        batches = config.batches
        if batches is not None and batches.kind is BatchKind.INTERVAL:
            return Cadence(batches.interval)
        return Cadence(None)

    def describe(self) -> str:
        if self.trigger is None:
            return "one micro-batch per event (no Spark trigger does this live: set --batches interval:T)"
        return f"one micro-batch per {spark_interval(self.trigger)} of arrival time (trigger processingTime)"


def spark_job(config: RunConfig, source: ExportSource) -> str:
    """The program's text (see the module's docstring)."""
    window = config.window
    if window.kind is WindowKind.SESSION:
        grouping = f"F.session_window('event_ts', '{window.gap} microseconds')"
    else:
        grouping = (f"F.window('event_ts', '{window.size} microseconds', '{window.slide} microseconds', "
                    f"'{window.offset} microseconds')")  # startTime: the window offset
    delay = config.time.delay + config.time.bound
    cadence = Cadence.of(config)
    mode = output_mode(config)
    settings = source_settings(source) | {"TRIGGER_US": cadence.trigger, "DELAY_US": delay, "OUTPUT_MODE": mode}
    notes = unsupported(config, "Spark Structured Streaming", {"offset", "emit"} if mode else {"offset"})
    header = [f"# NOTE: {n}" for n in notes]
    header.append(f"# cadence: {cadence.describe()}")
    header.append(f"# output: outputMode('{mode or 'append'}')")
    header.append(f"# watermark: withWatermark('event_ts', '{spark_interval(delay)}'); window: {window}")
    body = _PROGRAM.replace("{GROUPING}", grouping).replace("{SETTINGS}", program_head(settings))
    return "\n".join(header) + "\n" + body


def output_mode(config: RunConfig) -> str | None:
    """Spark's outputMode for the config's emission: append (on-close) or update (on-batch); None for on-update,
    which Spark has no mode for (the program then runs append, and says so). Spark refuses update mode with
    session windows ("Update output mode not supported for session window"), and so does this."""
    emit = config.time.emit
    if emit is Emit.ON_BATCH and config.window.kind is WindowKind.SESSION:
        raise InputError("Spark refuses update output mode with session windows (\"Update output mode not "
                         "supported for session window\"); use --output-mode append, or a tumbling or sliding window")
    return {Emit.ON_CLOSE: "append", Emit.ON_BATCH: "update"}.get(emit)


_PROGRAM = '''"""A Spark Structured Streaming job exported by the Watermark Explorer.

    python job.py EVENTS OUTDIR

replays EVENTS in arrival order, one micro-batch per trigger interval of arrival time (one file per micro-batch,
maxFilesPerTrigger=1, availableNow), through withWatermark + groupBy(window, key) in the output mode below (append: a window
once, when the watermark passes its end; update: each micro-batch, every window it changed), and writes every
window Spark emits to OUTDIR/emissions.jsonl (key, window_start, window_end in µs, ids, micro_batch, seq), and
Spark's report of each micro-batch to OUTDIR/progress.jsonl (micro_batch, rows, dropped_by_watermark), and
where its time went to OUTDIR/timing.json (read_s, engine_start_s, run_s).
To deploy: read your Kafka topic instead of the staged files, and trigger(processingTime=...) at the interval below.
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

{SETTINGS}
def staged_batches(frame):
    """(micro-batch number, rows) in arrival order: the events the job replays, one list per micro-batch."""
    rows = events_in_arrival_order(frame)
    arrival = np.array([r.pop("arrival") for r in rows], dtype=np.int64)
    n = len(rows)
    batch = arrival // TRIGGER_US if TRIGGER_US else np.arange(n)
    cuts = np.flatnonzero(np.diff(batch)) + 1
    return [[rows[j] for j in range(a, b)] for a, b in zip(np.r_[0, cuts], np.r_[cuts, n])]


def main(events, outdir):
    began = time.perf_counter()
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    batches = staged_batches(read_events(events))
    read = time.perf_counter()
    spark = (SparkSession.builder.master("local[2]").appName("watermark-explorer-export")
             .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    started = time.perf_counter()
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", str(2 * len(batches) + 10))  # keep every one
    with tempfile.TemporaryDirectory(prefix="job-") as work:
        staging = Path(work, "input")
        staging.mkdir()
        base = time.time() - 10 * (len(batches) + 1)
        for b, rows in enumerate(batches):  # one file per micro-batch, in order (the source orders by mtime)
            hidden, final = staging / f".part-{b:08d}.json", staging / f"part-{b:08d}.json"
            hidden.write_text("".join(json.dumps(r) + "\\n" for r in rows))
            hidden.rename(final)
            os.utime(final, (base + 10 * b, base + 10 * b))
        events_stream = (spark.readStream.schema("id STRING, key STRING, t LONG")
                         .option("maxFilesPerTrigger", 1).option("maxFileAge", "3650d").json(str(staging)))
        counts = (events_stream
                  .withColumn("event_ts", F.timestamp_micros("t"))
                  .withWatermark("event_ts", f"{DELAY_US} microseconds")
                  .groupBy({GROUPING}.alias("w"), "key")
                  .agg(F.collect_list("id").alias("ids")))
        written = [0]
        with (out / "emissions.jsonl").open("w") as sink:
            def emit(frame, batch_id):
                # one action on the micro-batch: a sort in Spark would run its plan twice (a sampling pass), and
                # its metrics, rows dropped included, would count twice
                rows = frame.select(F.unix_micros("w.start").alias("start"), F.unix_micros("w.end").alias("end"),
                                    "key", "ids").collect()
                for row in sorted(rows, key=lambda r: (r["start"], r["key"])):
                    written[0] += 1
                    sink.write(json.dumps({"key": row["key"], "window_start": row["start"], "window_end": row["end"],
                                           "ids": sorted(row["ids"]), "micro_batch": batch_id + 1,
                                           "seq": written[0]}) + "\\n")
                sink.flush()

            query = (counts.writeStream.outputMode(OUTPUT_MODE or "append").foreachBatch(emit)
                     .option("checkpointLocation", str(Path(work, "checkpoint")))
                     .trigger(availableNow=True).start())
            query.awaitTermination()
        with (out / "progress.jsonl").open("w") as log:  # Spark's own report of each micro-batch
            for progress in query.recentProgress:
                dropped = sum(op.get("numRowsDroppedByWatermark", 0) for op in progress.get("stateOperators", []))
                log.write(json.dumps({"micro_batch": progress["batchId"] + 1, "rows": progress["numInputRows"],
                                      "dropped_by_watermark": dropped}) + "\\n")
    (out / "timing.json").write_text(json.dumps({"read_s": read - began, "engine_start_s": started - read,
                                                 "run_s": time.perf_counter() - started}))
    spark.stop()
    print(f"{written[0]} windows emitted over {len(batches)} micro-batches; written to {out / 'emissions.jsonl'}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python job.py EVENTS OUTDIR")
    main(sys.argv[1], sys.argv[2])
'''
