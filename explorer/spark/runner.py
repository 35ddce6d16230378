"""The core's semantics as a real Structured Streaming query (``--engine spark``).

The stream's arrival batches are staged as Parquet files, several arrival batches per Spark micro-batch
(``staging``: the semantics live in the arrival batches, which the state function steps through in order, so
the Result does not depend on the plan). ``applyInPandasWithState`` runs the reference engine's ``step`` on
each arrival batch; the engine's whole state (open windows, watermarks, idle clocks) is kept in Spark's state
store (RocksDB) between micro-batches as plain JSON (``core.snapshot``: never a pickle, so a checkpoint on
shared storage cannot run code), keyed by the watermark scope: one state per key when keys cannot
influence each other (:func:`separable_by_key`), else one state for the run. Processing time is the stream's own
arrival clock, carried in the rows, so a run is reproducible. A last "end of input" file runs ``finish``: the
heartbeats after the stream falls silent and END_OF_STREAM. Decisions go to a parquet file sink, which with the
checkpoint makes the run exactly-once: a run stopped part-way resumes from its checkpoint, and the working
directory's fingerprint (``fingerprint``) refuses to resume it with other settings or input.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from explorer.budget import check_spark_run
from explorer.config import RunConfig
from explorer.core import check_inputs, snapshot
from explorer.core.assemble import assemble
from explorer.core.emitted import shape_emissions
from explorer.core.engine import Engine
from explorer.core.records import BatchRows, StepOutput, TracePoint, as_row, from_row
from explorer.core.result import Result
from explorer.errors import EngineError, Interrupted
from explorer.spark.fingerprint import Fingerprint, claim
from explorer.spark.session import spark_session, started
from explorer.spark.staging import INPUT_SCHEMA, MARK_ROW, plan_micro_batches, stage
from explorer.streams import Stream, batches_for

if TYPE_CHECKING:  # (pyspark is imported when a run starts)
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming.listener import (QueryIdleEvent, QueryProgressEvent, QueryStartedEvent,
                                                QueryTerminatedEvent, StreamingQueryListener, StreamingQueryProgress)
    from pyspark.sql.streaming.state import GroupState

    from explorer.spark.session import SparkOrStarter

    class _ProgressListener(StreamingQueryListener):
        """The listener :func:`_progress_listener` makes: Spark's listener, and a wait for its last event."""

        def catch_up(self, last_progress: StreamingQueryProgress | None, timeout: float = 5.0) -> None: ...


OUTPUT_SCHEMA = "grp STRING, step LONG, idx LONG, kind STRING, payload STRING, watermark LONG"
STATE_SCHEMA = "engine STRING"  # the engine as plain JSON (core.snapshot), never a pickle


@dataclass(frozen=True)
class Progress:
    """One finished micro-batch, as the progress bar and the UI show it."""

    batch: int  # 1-based micro-batch number (the last one is the end-of-input batch)
    batches: int  # how many the run has in all
    rows: int
    watermark: int | None  # the largest effective watermark the batch recorded (µs), if any
    duration_ms: int


class SparkRunError(EngineError):
    """Spark failed mid-run; the message says where and which checkpoint resumes the run."""


class Cancelled(Interrupted):
    """The user stopped the run; its checkpoint can resume it."""


def run_spark(stream: Stream, config: RunConfig, spark: SparkOrStarter | None = None, workdir: str | Path | None = None,
              stop_after: int | None = None, progress: Callable[[Progress], None] | None = None,
              cancel: threading.Event | None = None, per_micro_batch: int | None = None) -> Result | None:
    """Run ``config`` over ``stream`` as a Structured Streaming query and return the same Result as the
    local engine.

    ``workdir`` holds the fingerprint, the staged input, the checkpoint and the output; give it to resume a
    stopped run (otherwise a temporary one is used, kept only if the run fails). ``stop_after=k`` stages only
    the first k micro-batches and returns None after they ran — a run interrupted on purpose, for resuming.
    ``per_micro_batch`` sets how many arrival batches one micro-batch carries (default: planned from the
    rows, :func:`plan_micro_batches`). ``cancel`` stops the query between micro-batches (raises
    :class:`Cancelled`). ``spark`` is a session, or how to start one (called once the run is known to fit in
    memory and the working directory to match; default: the local session)."""
    check_spark_run(len(stream), config)
    check_inputs(stream, config)
    plan = plan_micro_batches(batches_for(stream, config), per_micro_batch)
    own_dir = workdir is None
    work = Path(workdir or tempfile.mkdtemp(prefix="wx-spark-"))
    claim(work, Fingerprint.of(stream, config, plan))
    folders = {name: work / name for name in ("input", "checkpoint", "output")}
    session = started(spark or spark_session)
    staged = stage(stream, config, plan, folders["input"], stop_after)
    listener = _progress_listener(progress, plan.micro_batches) if progress else None
    try:
        _run_query(session, config, stream.partitions, folders, listener, cancel)
    except Cancelled:
        raise Cancelled(f"Spark run cancelled after {_committed(folders['checkpoint'])} of {plan.micro_batches} "
                        f"micro-batches; resume it with --checkpoint {work}") from None
    except KeyboardInterrupt:  # Ctrl-C: what the checkpoint holds, and how to go on
        raise Cancelled(f"interrupted after {_committed(folders['checkpoint'])} of {plan.micro_batches} "
                        f"micro-batches; resume with --checkpoint {work}") from None
    except Exception as error:  # one readable line, not a JVM stack trace
        raise SparkRunError(f"Spark failed with {_committed(folders['checkpoint'])} of {plan.micro_batches} "
                            f"micro-batches committed: {failure_reason(error)}; resume with --checkpoint {work}") from None
    if staged < plan.micro_batches:
        return None
    result = _result(stream, config, _read_output(session, folders["output"]))
    if own_dir:
        shutil.rmtree(work, ignore_errors=True)
    return result


def _read_output(spark: SparkSession, folder: Path) -> pd.DataFrame:
    """The decisions the sink committed. Spark names the files (its sink log leaves out those of a failed
    attempt) and pyarrow reads them here: collected through the driver, a million events' decisions
    overflowed its default 1 GiB heap (measured)."""
    from urllib.parse import unquote, urlparse

    files = spark.read.schema(OUTPUT_SCHEMA).parquet(str(folder)).inputFiles()
    frames = [pd.read_parquet(unquote(urlparse(f).path)) for f in sorted(files)]
    columns = [c.split()[0] for c in OUTPUT_SCHEMA.split(", ")]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def _committed(checkpoint: Path) -> int:
    """Micro-batches Spark committed (its checkpoint's commit log), whatever happened to the JVM since."""
    commits = checkpoint / "commits"
    return sum(1 for f in commits.iterdir() if f.name.isdigit()) if commits.is_dir() else 0


def _run_query(spark: SparkSession, config: RunConfig, partitions: list[str], folders: dict[str, Path],
               listener: _ProgressListener | None, cancel: threading.Event | None) -> None:
    from pyspark.sql import functions as F

    # staged files carry back-dated mtimes (their order); without maxFileAge the source would skip files
    # more than 7 days "old", i.e. beyond about 60,000 micro-batches
    source = (spark.readStream.schema(INPUT_SCHEMA).option("maxFilesPerTrigger", 1).option("maxFileAge", "3650d")
              .parquet(str(folders["input"])))
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
        while not query.awaitTermination(0.2):  # type: ignore[arg-type]  # pyspark says int; it takes seconds
            if cancel is not None and cancel.is_set():
                query.stop()
                raise Cancelled("cancelled")
        error = query.exception()
        if error is not None:
            raise error
        if listener:
            listener.catch_up(query.lastProgress)
    finally:
        if listener:
            spark.streams.removeListener(listener)


StepGroup = Callable[[tuple[Any, ...], Iterator[pd.DataFrame], "GroupState"], Iterator[pd.DataFrame]]


def _step_function(config: RunConfig, partitions: list[str]) -> StepGroup:
    """The function Spark calls per state group and micro-batch: load the engine from the state store,
    step it through the group's rows (batch by batch, in arrival order), save it back, emit decisions."""

    def step_group(key: tuple[Any, ...], frames: Iterator[pd.DataFrame], state: GroupState) -> Iterator[pd.DataFrame]:
        # pyspark's worker concatenates our frames, whose watermark column is often all null
        warnings.filterwarnings("ignore", message="The behavior of DataFrame concatenation", category=FutureWarning)
        engine = snapshot.loads(state.get[0]) if state.exists else Engine(config, partitions)
        rows = pd.concat(list(frames), ignore_index=True).sort_values(["batch", "row"], kind="stable")
        outputs = [(batch.number, engine.step(batch)) for batch in _arrival_batches(rows[~rows["last"]])]
        end = rows[rows["last"]]
        if len(end):
            last = int(end["batch"].iloc[0])
            outputs.append((last + 1, engine.finish(last, int(end["commit"].iloc[0]))))
        state.update((snapshot.dumps(engine),))
        yield _encode(key[0], outputs)

    return step_group


def _arrival_batches(rows: pd.DataFrame) -> Iterator[BatchRows]:
    """A group's rows of one micro-batch (sorted by batch and row, so by arrival; a batch's mark row first) cut
    into the arrival batches they came in, each with its scripted watermark if it holds one."""
    number = rows["batch"].to_numpy(dtype=np.int64)
    if len(number) == 0:
        return
    cuts = [0, *(np.flatnonzero(np.diff(number)) + 1).tolist(), len(number)]
    row, commit, opens = (rows[c].to_numpy(dtype=np.int64) for c in ("row", "commit", "opens"))
    t, arrival = rows["t"].to_numpy(dtype=np.int64), rows["arrival"].to_numpy(dtype=np.int64)
    ids, keys, partitions = rows["id"].tolist(), rows["key"].tolist(), rows["partition"].tolist()
    scripted = rows["scripted"].tolist()
    for first, hi in zip(cuts, cuts[1:]):  # (the batch's number, commit and opens are on each of its rows)
        marked = row[first] == MARK_ROW
        lo = first + 1 if marked else first
        yield BatchRows(number=int(number[first]), commit=int(commit[first]), opens=int(opens[first]),
                        scripted=int(scripted[first]) if marked else None,
                        rows=row[lo:hi], ids=ids[lo:hi], keys=keys[lo:hi], partitions=partitions[lo:hi],
                        event_time=t[lo:hi], arrival_time=arrival[lo:hi])


def _lists(out: StepOutput) -> dict[str, list[Any]]:
    """A step's records by the kind they are stored under (``records.RECORDS``)."""
    return {"event": out.events, "assignment": out.assignments, "window": out.emissions, "trace": out.trace,
            "settled": out.settled}


def _encode(group: str, outputs: list[tuple[int, StepOutput]]) -> pd.DataFrame:
    """Decisions as rows of (kind, JSON payload of the record's fields); ``watermark`` (a trace point's
    effective watermark) feeds the progress bar."""
    records = []
    for step, out in outputs:
        idx = 0
        for kind, items in _lists(out).items():
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
    """Put the decisions back in the order they happened and package them like the local engine. Plain arrays,
    not a pandas groupby: a million one-event batches made a million groups, 137 s of the run (measured)."""
    rows = rows.sort_values(["step", "grp", "idx"], kind="stable")
    steps, kinds = rows["step"].to_numpy(), rows["kind"].to_numpy()
    payloads = _decoded(rows["payload"].tolist())
    cuts = [0, *(np.flatnonzero(np.diff(steps)) + 1).tolist(), len(steps)]
    outputs: list[StepOutput] = []
    for lo, hi in zip(cuts, cuts[1:]):
        out = StepOutput()
        lists = _lists(out)
        for kind, payload in zip(kinds[lo:hi].tolist(), payloads[lo:hi]):
            if kind in lists:
                lists[kind].append(from_row(kind, payload))
        outputs.append(out)
    open_rows = rows[rows["kind"] == "open"]
    per_group = open_rows.assign(n=open_rows["payload"].astype(int)).pivot(index="step", columns="grp", values="n")
    max_open = int(per_group.ffill().fillna(0).sum(axis=1).max()) if len(per_group) else 0
    result = assemble(stream, config, outputs, max_open, engine_name="spark")
    return shape_emissions(result)


def _decoded(payloads: list[str], chunk: int = 100_000) -> list[Any]:
    """JSON texts parsed a chunk at a time as one array: one parser call per chunk, not per row (3× faster)."""
    out: list[Any] = []
    for lo in range(0, len(payloads), chunk):
        out.extend(json.loads("[" + ",".join(payloads[lo:lo + chunk]) + "]"))
    return out


def _progress_listener(callback: Callable[[Progress], None], batches: int) -> _ProgressListener:
    """A StreamingQueryListener that turns Spark's query progress events into :class:`Progress` for a callback
    (made here: pyspark is imported only when a run starts)."""
    from pyspark.sql.streaming.listener import StreamingQueryListener

    class Listener(StreamingQueryListener):
        last = 0

        def onQueryStarted(self, event: QueryStartedEvent) -> None:
            pass

        def catch_up(self, last_progress: StreamingQueryProgress | None, timeout: float = 5.0) -> None:
            """Progress events arrive asynchronously: wait for the last one before unregistering."""
            target = last_progress["batchId"] + 1 if last_progress else 0
            deadline = time.monotonic() + timeout
            while Listener.last < target and time.monotonic() < deadline:
                time.sleep(0.02)

        def onQueryProgress(self, event: QueryProgressEvent) -> None:
            p = event.progress
            Listener.last = max(Listener.last, p.batchId + 1)
            if p.numInputRows == 0:
                return
            metrics = p.observedMetrics.get("wx")
            watermark = metrics["watermark"] if metrics is not None else None
            callback(Progress(p.batchId + 1, batches, int(p.numInputRows), watermark, int(p.batchDuration)))

        def onQueryIdle(self, event: QueryIdleEvent) -> None:
            pass

        def onQueryTerminated(self, event: QueryTerminatedEvent) -> None:
            pass

    return cast("_ProgressListener", Listener())  # (the class above is that one, made where pyspark is imported)


def failure_reason(error: Exception) -> str:
    """What went wrong, in one line: a lost connection to the JVM means the JVM is gone, whatever py4j says."""
    if isinstance(error, ConnectionError) or type(error).__name__ == "Py4JNetworkError":
        return "Spark's JVM stopped (killed, or out of memory)"
    return _first_line(error)


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "JVM stacktrace")):
            return line[:300]
    return type(error).__name__
