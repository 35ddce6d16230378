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


def _batch_files(stream: Stream, batches: BatchSpec | None) -> list[list[dict]]:
    numbering = assign_batches(stream, batches)
    ev = stream.events
    out = []
    for b in range(len(numbering.commit_time)):
        lo, hi = int(numbering.starts[b]), int(numbering.starts[b + 1])
        out.append([{"id": i, "key": k, "t": int(t)} for i, k, t in
                    zip(ev["id"].iloc[lo:hi], ev["key"].iloc[lo:hi], ev["event_time"].iloc[lo:hi])])
    return out


def _write(folder: Path, b: int, rows: list[dict], mtime: float) -> None:
    hidden = folder / f".part-{b:06d}.json"
    hidden.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    final = folder / f"part-{b:06d}.json"
    hidden.rename(final)
    os.utime(final, (mtime, mtime))  # the file source orders files by modification time


def run_native(spark, stream: Stream, window: WindowSpec, delay_us: int,
               batches: BatchSpec | None = None, live: bool = False) -> list[NativeEmission]:
    """Run withWatermark + groupBy(window, key) in append mode, one micro-batch per arrival batch.

    ``live=False`` replays the batches as a backlog (trigger availableNow). ``live=True`` hands them to a
    running query one at a time and waits for it (processAllAvailable), so Spark may run its no-data
    micro-batches in between; emissions are then numbered by the arrival batch they followed.
    """
    from pyspark.sql import functions as F

    files = _batch_files(stream, batches)
    base = time.time() - 10 * len(files)
    with tempfile.TemporaryDirectory(prefix="wx-native-") as tmp:
        source, checkpoint = Path(tmp, "in"), Path(tmp, "checkpoint")
        source.mkdir()
        frame = (spark.readStream.schema("id STRING, key STRING, t LONG").option("maxFilesPerTrigger", 1)
                 .json(str(source))
                 .withColumn("ts", F.timestamp_micros("t"))
                 .withWatermark("ts", f"{delay_us} microseconds"))
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
        if not live:
            for b, rows in enumerate(files):
                _write(source, b, rows, base + 10 * b)
            writer.trigger(availableNow=True).start().awaitTermination()
        else:
            query = writer.trigger(processingTime="50 milliseconds").start()
            try:
                for b, rows in enumerate(files):
                    _write(source, b, rows, base + 10 * b)
                    staged[0] = b + 1
                    query.processAllAvailable()
                    time.sleep(0.3)  # room for the no-data micro-batch Spark runs when the watermark moved
                    query.processAllAvailable()
            finally:
                query.stop()
        return sorted(out, key=lambda e: (e.batch, e.key, e.start, e.end))
