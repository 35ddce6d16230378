"""The core's semantics as a real Structured Streaming query (``--engine spark``).

Each arrival batch is staged as one JSON file and read with maxFilesPerTrigger=1, so it becomes exactly one
micro-batch. ``applyInPandasWithState`` runs the reference engine's ``step`` on it; the engine's whole
state (open windows, watermarks, idle clocks) is pickled into Spark's state store (RocksDB) between
micro-batches, keyed by the watermark scope: one state per key when keys cannot influence each other
(:func:`separable_by_key`), else one state for the run. Processing time is the stream's own arrival clock,
carried in the rows, so a run is reproducible. A last "end of input" file runs ``finish``: the heartbeats
after the stream falls silent and END_OF_STREAM. Decisions go to a parquet file sink, which with the
checkpoint makes the run exactly-once: a run stopped part-way resumes from its checkpoint.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from explorer.budget import check_spark_run
from explorer.config import RunConfig, Strategy
from explorer.core.assemble import assemble
from explorer.core.engine import Engine, separable_by_key
from explorer.core.records import BatchRows, StepOutput, TracePoint, as_row, from_row
from explorer.core.result import Result
from explorer.errors import InputError
from explorer.spark.session import spark_session, started
from explorer.streams import Stream, batches_for

INPUT_SCHEMA = ("grp STRING, row LONG, batch LONG, commit LONG, id STRING, key STRING, partition STRING, "
                "t LONG, arrival LONG, last BOOLEAN")
OUTPUT_SCHEMA = "grp STRING, step LONG, idx LONG, kind STRING, payload STRING, watermark LONG"
STATE_SCHEMA = "engine BINARY"
GLOBAL_GROUP = "*"


@dataclass(frozen=True)
class Progress:
    """One finished micro-batch, as the progress bar and the UI show it."""

    batch: int  # 1-based micro-batch number (the last one is the end-of-input batch)
    batches: int  # how many the run has in all
    rows: int
    watermark: int | None  # the largest effective watermark the batch recorded (µs), if any
    duration_ms: int


class SparkRunError(InputError):
    """Spark failed mid-run; the message says where and which checkpoint resumes the run."""


class Cancelled(InputError):
    """The user stopped the run; its checkpoint can resume it."""


def run_spark(stream: Stream, config: RunConfig, spark=None, workdir: str | Path | None = None,
              stop_after: int | None = None, progress: Callable[[Progress], None] | None = None,
              cancel: threading.Event | None = None) -> Result | None:
    """Run ``config`` over ``stream`` as a Structured Streaming query and return the same Result as the
    local engine.

    ``workdir`` holds the staged input, the checkpoint and the output; give it to resume a stopped run
    (otherwise a temporary one is used, kept only if the run fails). ``stop_after=k`` stages only the
    first k batches and returns None after they ran — a run interrupted on purpose, for resuming.
    ``cancel`` stops the query between micro-batches (raises :class:`Cancelled`). ``spark`` is a session, or
    how to start one (called once the run is known to fit in memory; default: the local session)."""
    if config.time.strategy is Strategy.SCRIPTED:
        raise InputError("--engine spark does not replay scripted watermarks (strategy scripted); run it locally")
    check_spark_run(len(stream), config)
    spark = started(spark or spark_session)
    own_dir = workdir is None
    work = Path(workdir or tempfile.mkdtemp(prefix="wx-spark-"))
    folders = {name: work / name for name in ("input", "checkpoint", "output")}
    folders["input"].mkdir(parents=True, exist_ok=True)
    batches = batches_for(stream, config)
    n_batches = len(batches.commit_time)
    staged = _stage(stream, config, folders["input"], stop_after)
    listener = _ProgressListener(progress, n_batches + 1) if progress else None
    done: list[int] = [0]  # micro-batches completed, for the failure message
    try:
        _run_query(spark, config, sorted(set(stream.arrays().partitions.tolist())), folders, listener, cancel, done)
    except Cancelled:
        raise Cancelled(f"Spark run cancelled after micro-batch {done[0]}; resume it with --checkpoint {work}") from None
    except Exception as error:  # one readable line, not a JVM stack trace
        raise SparkRunError(f"Spark failed after micro-batch {done[0]} of {n_batches + 1}: {_first_line(error)}; "
                            f"resume with --checkpoint {work}") from None
    if staged < n_batches + 1:
        return None
    rows = spark.read.schema(OUTPUT_SCHEMA).parquet(str(folders["output"])).toPandas()
    result = _result(stream, config, rows)
    if own_dir:
        shutil.rmtree(work, ignore_errors=True)
    return result


def _stage(stream: Stream, config: RunConfig, folder: Path, stop_after: int | None) -> int:
    """Write one file per arrival batch (the first ``stop_after`` of them, if given) and, for a whole run,
    the end-of-input file with one row per state group. Files already there (a resumed run) are kept.
    Returns how many files are staged."""
    ev = stream.events
    arrays = stream.arrays()
    batches = batches_for(stream, config)
    n_batches = len(batches.commit_time)
    groups = ev["key"].to_numpy(dtype=object) if separable_by_key(config) else np.full(len(ev), GLOBAL_GROUP, dtype=object)
    frame = pd.DataFrame({"grp": groups, "row": np.arange(len(ev)), "batch": batches.number,
                          "commit": batches.commit_time[batches.number - 1], "id": ev["id"].to_numpy(),
                          "key": ev["key"].to_numpy(), "partition": ev["partition"].to_numpy(),
                          "t": arrays.event_time, "arrival": arrays.arrival_time, "last": False})
    count = min(stop_after, n_batches) if stop_after is not None else n_batches
    base = time.time() - 10 * (n_batches + 2)
    for b in range(count):
        lo, hi = int(batches.starts[b]), int(batches.starts[b + 1])
        _write(folder, b, frame.iloc[lo:hi], base + 10 * b)
    if count == n_batches and stop_after is None:
        end = pd.DataFrame({"grp": sorted(set(groups.tolist())), "row": -1, "batch": n_batches,
                            "commit": int(batches.commit_time[-1]), "id": "", "key": "", "partition": "", "t": 0,
                            "arrival": 0, "last": True})
        _write(folder, n_batches, end, base + 10 * n_batches)
        return n_batches + 1
    return count


def _write(folder: Path, b: int, frame: pd.DataFrame, mtime: float) -> None:
    final = folder / f"part-{b:06d}.json"
    if final.exists():
        return
    hidden = folder / f".part-{b:06d}.json"  # the file source ignores hidden files, so no half-written reads
    frame.to_json(hidden, orient="records", lines=True)
    hidden.rename(final)
    os.utime(final, (mtime, mtime))  # the file source takes files in modification-time order


def _run_query(spark, config: RunConfig, partitions: list[str], folders: dict[str, Path],
               listener: "_ProgressListener | None", cancel: threading.Event | None, done: list[int]) -> None:
    from pyspark.sql import functions as F

    # staged files carry back-dated mtimes (their order); without maxFileAge the source would skip files
    # more than 7 days "old", i.e. beyond about 60,000 micro-batches
    source = (spark.readStream.schema(INPUT_SCHEMA).option("maxFilesPerTrigger", 1).option("maxFileAge", "3650d")
              .json(str(folders["input"])))
    decided = source.groupBy("grp").applyInPandasWithState(
        _step_function(config, partitions), OUTPUT_SCHEMA, STATE_SCHEMA, "append", "NoTimeout")
    observed = decided.observe("wx", F.max("watermark").alias("watermark"))
    writer = (observed.writeStream.format("parquet").outputMode("append")
              .option("path", str(folders["output"])).option("checkpointLocation", str(folders["checkpoint"]))
              .trigger(availableNow=True))
    if listener:
        spark.streams.addListener(listener)
    try:
        query = writer.start()
        try:
            while not query.awaitTermination(0.2):
                if cancel is not None and cancel.is_set():
                    query.stop()
                    raise Cancelled("cancelled")
        finally:
            done[0] = query.lastProgress["batchId"] + 1 if query.lastProgress else 0
        if query.exception() is not None:
            raise query.exception()
        if listener:
            listener.catch_up(query.lastProgress)
    finally:
        if listener:
            spark.streams.removeListener(listener)


def _step_function(config: RunConfig, partitions: list[str]):
    """The function Spark calls per state group and micro-batch: load the engine from the state store,
    step it through the group's rows (batch by batch, in arrival order), save it back, emit decisions."""

    def step_group(key: tuple, frames: Iterator[pd.DataFrame], state) -> Iterator[pd.DataFrame]:
        # pyspark's worker concatenates our frames, whose watermark column is often all null
        warnings.filterwarnings("ignore", message="The behavior of DataFrame concatenation", category=FutureWarning)
        engine = pickle.loads(state.get[0]) if state.exists else Engine(config, partitions)
        rows = pd.concat(list(frames), ignore_index=True).sort_values("row", kind="stable")
        outputs: list[tuple[int, StepOutput]] = []
        data = rows[~rows["last"]]
        for number, part in data.groupby("batch", sort=True):
            outputs.append((int(number), engine.step(BatchRows(
                number=int(number), commit=int(part["commit"].iloc[0]), opens=int(part["arrival"].iloc[0]),
                scripted=None, rows=part["row"].to_numpy(),
                ids=part["id"].tolist(), keys=part["key"].tolist(), partitions=part["partition"].tolist(),
                event_time=part["t"].to_numpy(dtype=np.int64), arrival_time=part["arrival"].to_numpy(dtype=np.int64)))))
        end = rows[rows["last"]]
        if len(end):
            last = int(end["batch"].iloc[0])
            outputs.append((last + 1, engine.finish(last, int(end["commit"].iloc[0]))))
        state.update((pickle.dumps(engine, protocol=pickle.HIGHEST_PROTOCOL),))
        yield _encode(key[0], outputs)

    return step_group


def _encode(group: str, outputs: list[tuple[int, StepOutput]]) -> pd.DataFrame:
    """Decisions as rows of (kind, JSON payload of the record's fields); ``watermark`` (a trace point's
    effective watermark) feeds the progress bar."""
    records = []
    for step, out in outputs:
        idx = 0
        for kind, items in (("event", out.events), ("assignment", out.assignments), ("window", out.emissions),
                            ("trace", out.trace)):
            for item in items:
                watermark = item.effective if isinstance(item, TracePoint) else None
                records.append((group, step, idx, kind, json.dumps(as_row(item)), watermark))
                idx += 1
        if out.open_windows is not None:
            records.append((group, step, idx, "open", json.dumps(out.open_windows), None))
    frame = pd.DataFrame(records, columns=["grp", "step", "idx", "kind", "payload", "watermark"])
    frame["watermark"] = frame["watermark"].astype("Int64")
    return frame


def _result(stream: Stream, config: RunConfig, rows: pd.DataFrame) -> Result:
    """Put the decisions back in the order they happened and package them like the local engine."""
    rows = rows.sort_values(["step", "grp", "idx"], kind="stable")
    outputs: list[StepOutput] = []
    for _, step_rows in rows.groupby("step", sort=True):
        out = StepOutput()
        lists = {"event": out.events, "assignment": out.assignments, "window": out.emissions, "trace": out.trace}
        for kind, payload in zip(step_rows["kind"], step_rows["payload"]):
            if kind in lists:
                lists[kind].append(from_row(kind, json.loads(payload)))
        outputs.append(out)
    open_rows = rows[rows["kind"] == "open"]
    per_group = open_rows.assign(n=open_rows["payload"].astype(int)).pivot(index="step", columns="grp", values="n")
    max_open = int(per_group.ffill().fillna(0).sum(axis=1).max()) if len(per_group) else 0
    return assemble(stream, config, outputs, max_open, engine_name="spark")


class _ProgressListener:
    """Turns Spark's query progress events into :class:`Progress` for a callback."""

    def __new__(cls, callback, batches):
        from pyspark.sql.streaming import StreamingQueryListener

        class Listener(StreamingQueryListener):
            last = 0

            def onQueryStarted(self, event) -> None:
                pass

            def catch_up(self, last_progress, timeout: float = 5.0) -> None:
                """Progress events arrive asynchronously: wait for the last one before unregistering."""
                target = last_progress["batchId"] + 1 if last_progress else 0
                deadline = time.monotonic() + timeout
                while Listener.last < target and time.monotonic() < deadline:
                    time.sleep(0.02)

            def onQueryProgress(self, event) -> None:
                p = event.progress
                Listener.last = max(Listener.last, p.batchId + 1)
                if p.numInputRows == 0:
                    return
                metrics = p.observedMetrics.get("wx")
                watermark = metrics["watermark"] if metrics is not None else None
                callback(Progress(p.batchId + 1, batches, int(p.numInputRows), watermark, int(p.batchDuration)))

            def onQueryIdle(self, event) -> None:
                pass

            def onQueryTerminated(self, event) -> None:
                pass

        return Listener()


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "JVM stacktrace")):
            return line[:300]
    return type(error).__name__
