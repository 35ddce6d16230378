"""Spark's own semantics, run for real: a stream's arrival batches as micro-batches of a file-source query.

One JSON file per arrival batch (written under a hidden name, then renamed, in order) read with
maxFilesPerTrigger=1 and trigger(availableNow=True) gives exactly one micro-batch per file, then the
no-data micro-batch Spark runs when the watermark can still advance (measured here).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from explorer.config import WindowKind, WindowSpec
from explorer.streams import Stream, assign_batches
from explorer.config import BatchSpec


@dataclass(frozen=True)
class NativeEmission:
    """A window Spark emitted: in which micro-batch (1-based, like our batches) and with which events."""

    batch: int
    key: str
    start: int  # µs
    end: int
    ids: tuple[str, ...]


def _batch_files(stream: Stream, batches: BatchSpec | None, partition: str | None = None) -> list[list[dict]]:
    """Rows of each arrival batch (of one partition, when given; a batch may then be empty)."""
    numbering = assign_batches(stream, batches)
    ev = stream.events
    out = []
    for b in range(len(numbering.commit_time)):
        part = ev.iloc[int(numbering.starts[b]):int(numbering.starts[b + 1])]
        if partition is not None:
            part = part[part["partition"] == partition]
        out.append([{"id": i, "key": k, "t": int(t)} for i, k, t in zip(part["id"], part["key"], part["event_time"])])
    return out


def _write(folder: Path, b: int, rows: list[dict], mtime: float) -> None:
    hidden = folder / f".part-{b:06d}.json"
    hidden.write_text("".join(json.dumps(r) + "\n" for r in rows))
    final = folder / f"part-{b:06d}.json"
    hidden.rename(final)
    os.utime(final, (mtime, mtime))  # the file source orders files by modification time


def run_native(spark, stream: Stream, window: WindowSpec, delay_us: int,
               batches: BatchSpec | None = None, live: bool = False,
               watermark_policy: str | None = None) -> list[NativeEmission]:
    """Run withWatermark + groupBy(window, key) in append mode, one micro-batch per arrival batch.

    ``live=False`` replays the batches as a backlog (trigger availableNow). ``live=True`` hands them to a
    running query one at a time and waits for it (processAllAvailable), so Spark may run its no-data
    micro-batches in between; emissions are then numbered by the arrival batch they followed.

    ``watermark_policy`` ("min" or "max") makes each partition its own input with its own watermark, the
    inputs unioned, and sets spark.sql.streaming.multipleWatermarkPolicy (one file per input per batch).
    """
    from pyspark.sql import functions as F

    partitions = sorted(stream.events["partition"].unique()) if watermark_policy else [None]
    per_input = {p: _batch_files(stream, batches, p) for p in partitions}
    n_batches = len(next(iter(per_input.values())))
    base = time.time() - 10 * n_batches
    if watermark_policy:
        spark.conf.set("spark.sql.streaming.multipleWatermarkPolicy", watermark_policy)
    with tempfile.TemporaryDirectory(prefix="wx-native-") as tmp:
        checkpoint = Path(tmp, "checkpoint")
        sources = {p: Path(tmp, f"in-{i}") for i, p in enumerate(partitions)}
        inputs = []
        for folder in sources.values():
            folder.mkdir()
            inputs.append(spark.readStream.schema("id STRING, key STRING, t LONG").option("maxFilesPerTrigger", 1)
                          .option("maxFileAge", "3650d")  # the staged files' mtimes are back-dated
                          .json(str(folder))
                          .withColumn("ts", F.timestamp_micros("t"))
                          .withWatermark("ts", f"{delay_us} microseconds"))
        frame = inputs[0]
        for other in inputs[1:]:
            frame = frame.unionByName(other)
        if window.kind is WindowKind.SESSION:
            grouping = F.session_window("ts", f"{window.gap} microseconds").alias("w")
        else:
            grouping = F.window("ts", f"{window.size} microseconds", f"{window.slide} microseconds").alias("w")
        counted = frame.groupBy(grouping, "key").agg(F.collect_list("id").alias("ids"))
        out: list[NativeEmission] = []
        staged = [0]  # arrival batches handed to Spark so far (live mode)

        def collect(batch_frame, batch_id: int) -> None:
            number = staged[0] if live else batch_id + 1
            for row in batch_frame.select(F.unix_micros(F.col("w.start")).alias("start"),
                                          F.unix_micros(F.col("w.end")).alias("end"), "key", "ids").collect():
                out.append(NativeEmission(number, row["key"], row["start"], row["end"], tuple(sorted(row["ids"]))))

        writer = (counted.writeStream.outputMode("append").foreachBatch(collect)
                  .option("checkpointLocation", str(checkpoint)))
        def stage(b: int) -> None:
            for p, folder in sources.items():
                _write(folder, b, per_input[p][b], base + 10 * b)

        if not live:
            for b in range(n_batches):
                stage(b)
            writer.trigger(availableNow=True).start().awaitTermination()
        else:
            query = writer.trigger(processingTime="50 milliseconds").start()
            try:
                for b in range(n_batches):
                    stage(b)
                    staged[0] = b + 1
                    query.processAllAvailable()
                    time.sleep(0.3)  # room for the no-data micro-batch Spark runs when the watermark moved
                    query.processAllAvailable()
            finally:
                query.stop()
        return sorted(out, key=lambda e: (e.batch, e.key, e.start, e.end))
