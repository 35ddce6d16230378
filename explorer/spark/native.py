"""Spark's own semantics, run for real: a stream's arrival batches as micro-batches of a file-source query.

One JSON file per arrival batch (written under a hidden name, then renamed, in order) read with
maxFilesPerTrigger=1 and trigger(availableNow=True) gives exactly one micro-batch per file, then the
no-data micro-batch Spark runs when the watermark can still advance (measured here).

Spark's append mode says nothing about the windows still open when the input runs out (update mode has
written each of them with its events already, and the flush below finds none to add). To learn their
contents from Spark itself, the run ends with a *flush*: the same query resumes from its checkpoint on one
more file holding a single row far in the future, under a key the stream does not have; the watermark it
raises evicts every open window, with the events Spark kept in it. The user's query has finished by then, so
its micro-batches and progress are unchanged.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.config import BatchSpec, WindowKind, WindowSpec
from explorer.errors import Interrupted
from explorer.spark.progress import BatchProgress, parse_progress
from explorer.streams import Stream, assign_batches

if TYPE_CHECKING:  # (pyspark is imported when a query runs)
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.readwriter import DataStreamWriter


@dataclass(frozen=True)
class NativeEmission:
    """A window Spark emitted: in which micro-batch (1-based, like our batches) and with which events."""

    batch: int
    key: str
    start: int  # µs
    end: int
    ids: tuple[str, ...]


@dataclass(frozen=True)
class NativeRun:
    """What Spark's query did: its emissions, the windows its state still held at the end of the input, and
    its progress per micro-batch (parsed, and as the JSON lines a production job would log)."""

    emissions: list[NativeEmission]
    still_open: list[NativeEmission]  # batch: the micro-batch the input ran out in
    progress: list[BatchProgress]
    log: list[str]


class NativeCancelled(Interrupted):
    """The user stopped Spark's query."""


def _batch_files(stream: Stream, batches: BatchSpec | None, partition: str | None = None) -> list[list[dict[str, Any]]]:
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


def _write(folder: Path, name: str, rows: list[dict[str, Any]], mtime: float) -> None:
    hidden = folder / f".{name}.json"
    hidden.write_text("".join(json.dumps(r) + "\n" for r in rows))
    final = folder / f"{name}.json"
    hidden.rename(final)
    os.utime(final, (mtime, mtime))  # the file source orders files by modification time


def _flush_row(stream: Stream, window: WindowSpec, delay_us: int) -> dict[str, Any]:
    """A row whose watermark passes the end of every window the stream can have open, on a key of its own."""
    keys = set(stream.events["key"])
    key = next(k for k in (f"wx-flush-{i}" for i in range(len(keys) + 1)) if k not in keys)
    reach = window.gap if window.kind is WindowKind.SESSION else window.size
    latest = int(stream.events["event_time"].max()) if len(stream.events) else 0
    return {"id": key, "key": key, "t": latest + reach + delay_us + 1_000_000}


def run_native(spark: SparkSession, stream: Stream, window: WindowSpec, delay_us: int,
               batches: BatchSpec | None = None, live: bool = False,
               watermark_policy: str | None = None, output_mode: str = "append",
               progress: Callable[[BatchProgress, int], None] | None = None,
               cancel: threading.Event | None = None) -> NativeRun:
    """Run withWatermark + groupBy(window, key) in ``output_mode`` (append, or update: every micro-batch writes each
    window it changed, with its events then), one micro-batch per arrival batch.

    ``live=False`` replays the batches as a backlog (trigger availableNow). ``live=True`` hands them to a
    running query one at a time and waits for it (processAllAvailable), so Spark may run its no-data
    micro-batches in between; emissions are then numbered by the arrival batch they followed.

    ``watermark_policy`` ("min" or "max") makes each partition its own input with its own watermark, the
    inputs unioned, and sets spark.sql.streaming.multipleWatermarkPolicy (one file per input per batch).

    ``progress(p, batches)`` hears of each micro-batch as it finishes (``batches``: how many arrival batches
    there are); ``cancel`` stops the query (raises :class:`NativeCancelled`).
    """
    from pyspark.sql import functions as F

    partitions = sorted(stream.events["partition"].unique()) if watermark_policy else [None]
    per_input = {p: _batch_files(stream, batches, p) for p in partitions}
    n_batches = len(next(iter(per_input.values())))
    base = time.time() - 10 * (n_batches + 1)
    if watermark_policy:
        spark.conf.set("spark.sql.streaming.multipleWatermarkPolicy", watermark_policy)
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", str(2 * n_batches + 10))  # every one, not 100
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
            grouping = F.window("ts", f"{window.size} microseconds", f"{window.slide} microseconds",
                                f"{window.offset} microseconds").alias("w")  # startTime: the window offset
        counted = frame.groupBy(grouping, "key").agg(F.collect_list("id").alias("ids"))
        flush = _flush_row(stream, window, delay_us)
        out: list[NativeEmission] = []
        staged = [0]  # arrival batches handed to Spark so far (live mode)
        flushing = [False]
        still_open: list[NativeEmission] = []

        def collect(batch_frame: DataFrame, batch_id: int) -> None:
            number = staged[0] if live else batch_id + 1
            for row in batch_frame.select(F.unix_micros(F.col("w.start")).alias("start"),
                                          F.unix_micros(F.col("w.end")).alias("end"), "key", "ids").collect():
                emission = NativeEmission(number, row["key"], row["start"], row["end"], tuple(sorted(row["ids"])))
                if not flushing[0]:
                    out.append(emission)
                elif row["key"] != flush["key"]:
                    still_open.append(emission)

        def writer() -> DataStreamWriter:
            return (counted.writeStream.outputMode(output_mode).foreachBatch(collect)
                    .option("checkpointLocation", str(checkpoint)))

        def stage(b: int) -> None:
            for p, folder in sources.items():
                _write(folder, f"part-{b:06d}", per_input[p][b], base + 10 * b)

        def stage_flush() -> None:
            for folder in sources.values():
                _write(folder, f"part-{n_batches:06d}", [flush], base + 10 * n_batches)

        if not live:
            for b in range(n_batches):
                stage(b)
            query = writer().trigger(availableNow=True).start()
            records = _await(query, progress, n_batches, cancel)
            last = len(records)
            flushing[0] = True
            stage_flush()
            _await(writer().trigger(availableNow=True).start(), None, n_batches, cancel)
        else:
            query = writer().trigger(processingTime="50 milliseconds").start()
            try:
                for b in range(n_batches):
                    stage(b)
                    staged[0] = b + 1
                    query.processAllAvailable()
                    time.sleep(0.3)  # room for the no-data micro-batch Spark runs when the watermark moved
                    query.processAllAvailable()
                records = [json.loads(p.json) for p in query.recentProgress]
                last = n_batches
                flushing[0] = True
                stage_flush()
                query.processAllAvailable()
                time.sleep(0.3)
                query.processAllAvailable()
            finally:
                query.stop()
        still = [NativeEmission(last, e.key, e.start, e.end, e.ids) for e in still_open]
        return NativeRun(sorted(out, key=_order), sorted(still, key=_order),
                         [parse_progress(r, f"Spark's progress of micro-batch {i}") for i, r in enumerate(records)],
                         [json.dumps(r) for r in records])


def _order(e: NativeEmission) -> tuple[int, str, int, int]:
    return e.batch, e.key, e.start, e.end


def _await(query: StreamingQuery, progress: Callable[[BatchProgress, int], None] | None, n_batches: int,
           cancel: threading.Event | None) -> list[dict[str, Any]]:
    """Wait for an availableNow query, reporting each micro-batch as it finishes; its progress records, in order."""
    records: list[dict[str, Any]] = []
    while True:
        finished = query.awaitTermination(0.5)  # type: ignore[arg-type]  # pyspark says int; it takes seconds
        if not finished and cancel is not None and cancel.is_set():
            query.stop()
            raise NativeCancelled(f"stopped Spark's query after {len(records)} micro-batches")
        for update in query.recentProgress[len(records):]:
            records.append(json.loads(update.json))
            if progress is not None:
                progress(parse_progress(records[-1], "Spark's progress"), n_batches)
        if finished:
            return records
