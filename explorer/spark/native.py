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


def _stage(stream: Stream, batches: BatchSpec | None, folder: Path) -> int:
    numbering = assign_batches(stream, batches)
    ev = stream.events
    base = time.time() - 10 * len(numbering.commit_time)
    for b in range(len(numbering.commit_time)):
        lo, hi = int(numbering.starts[b]), int(numbering.starts[b + 1])
        rows = [{"id": i, "key": k, "t": int(t)} for i, k, t in
                zip(ev["id"].iloc[lo:hi], ev["key"].iloc[lo:hi], ev["event_time"].iloc[lo:hi])]
        hidden = folder / f".part-{b:06d}.json"
        hidden.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        final = folder / f"part-{b:06d}.json"
        hidden.rename(final)
        os.utime(final, (base + 10 * b, base + 10 * b))  # the file source orders by modification time
    return len(numbering.commit_time)


def run_native(spark, stream: Stream, window: WindowSpec, delay_us: int,
               batches: BatchSpec | None = None) -> list[NativeEmission]:
    """Run withWatermark + groupBy(window, key).count() in append mode, one micro-batch per arrival batch."""
    from pyspark.sql import functions as F

    with tempfile.TemporaryDirectory(prefix="wx-native-") as tmp:
        source, checkpoint = Path(tmp, "in"), Path(tmp, "checkpoint")
        source.mkdir()
        _stage(stream, batches, source)
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

        def collect(batch_frame, batch_id: int) -> None:
            for row in batch_frame.select(F.unix_micros(F.col("w.start")).alias("start"),
                                          F.unix_micros(F.col("w.end")).alias("end"), "key", "ids").collect():
                out.append(NativeEmission(batch_id + 1, row["key"], row["start"], row["end"], tuple(sorted(row["ids"]))))

        query = (counted.writeStream.outputMode("append").foreachBatch(collect)
                 .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
        query.awaitTermination()
        return sorted(out, key=lambda e: (e.batch, e.key, e.start, e.end))
