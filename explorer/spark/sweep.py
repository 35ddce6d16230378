"""Completeness–latency curves on Spark (``curve --engine spark``, the explorer's "sweep on Spark"): many
configurations in one Spark job.

The driver validates the events with the local loader (the same errors as everywhere) and broadcasts them
once. The job has one task per chunk of configurations (by default one per configuration), and each task
evaluates its chunk with the local core, so the numbers are the local curve's, digit for digit. A Python
worker rebuilds the stream once per broadcast and keeps it for the tasks it runs after (Spark reuses its
workers), so a task costs one evaluation, not a reload.

Keys are not split across tasks: batch boundaries and commit times belong to the whole stream, so a key's
events alone would batch and commit differently. A task therefore holds one whole stream.

With one task per configuration Spark's own status tracker says how many are done: that is the progress
bar, and cancelling cancels the job group.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from explorer.budget import check_spark_sweep
from explorer.config import RunConfig, apply_delay
from explorer.core import run_metrics
from explorer.metrics import CurveRow, curve_row
from explorer.spark.runner import Cancelled, SparkRunError, failure_reason
from explorer.spark.session import started
from explorer.streams import Stream

if TYPE_CHECKING:  # (pyspark is imported when a sweep starts)
    from pyspark import SparkContext
    from pyspark.broadcast import Broadcast

    from explorer.spark.session import SparkOrStarter

STREAM_FLAGS = ("has_keys", "has_arrival", "has_batch", "has_partition", "has_offset", "time_formats")
POLL_SECONDS = 0.25


@dataclass(frozen=True)
class SweepProgress:
    """How far the job is: configurations evaluated, of all of them."""

    done: int
    total: int


@dataclass(frozen=True)
class _Shipped:
    """What the tasks receive once, by broadcast: the validated stream's parts (a Stream rebuilt from them
    skips the loader, which ran on the driver)."""

    events: pd.DataFrame
    name: str
    time_unit: str
    watermarks: pd.DataFrame  # the scripted watermark rows (a few per test or lesson)
    flags: dict[str, Any]  # STREAM_FLAGS


_REBUILT: dict[str, Stream] = {}  # per Python worker: the sweep's job group → its stream, for the tasks after the first


def curve_on_spark(spark: SparkOrStarter, stream: Stream, configs: list[RunConfig], delays: list[int], chunks: int | None = None,
                   progress: Callable[[SweepProgress], None] | None = None,
                   cancel: threading.Event | None = None) -> list[CurveRow]:
    """One curve row per (config, delay) pair, in the order given (configs outer, delays inner). ``spark`` is a
    session, or how to start one once the sweep is known to fit (a local session's workers are at most one per
    core, which the memory check assumes). ``chunks`` tasks (default: one per pair); ``progress`` hears how
    many pairs are done while the job runs, and setting ``cancel`` stops it (:class:`Cancelled`)."""
    plan = [(position, apply_delay(config, delay), delay)
            for position, (config, delay) in enumerate((c, d) for c in configs for d in delays)]
    if not plan:
        return []
    check_spark_sweep(len(stream), [config for _, config, _ in plan], os.cpu_count() or 1)
    spark = started(spark)
    sc = spark.sparkContext
    chunks = max(1, min(chunks or len(plan), len(plan)))
    shipped = sc.broadcast(_Shipped(stream.events, stream.name, stream.time_unit, stream.watermarks,
                                    {name: getattr(stream, name) for name in STREAM_FLAGS}))
    group = f"wx-sweep-{uuid.uuid4().hex}"
    done = threading.Event()
    watcher = threading.Thread(target=_watch, args=(sc, group, chunks, len(plan), progress, cancel, done), daemon=True)
    try:
        sc.setJobGroup(group, "completeness-latency sweep", interruptOnCancel=True)
        watcher.start()
        try:
            rows = (sc.parallelize(range(chunks), chunks)
                    .flatMap(_evaluator(plan, chunks, shipped, group))
                    .collect())
        except Exception as error:  # one readable line, not a JVM stack trace
            if cancel is not None and cancel.is_set():
                raise Cancelled("the sweep on Spark was cancelled") from None
            raise SparkRunError(f"the sweep on Spark failed: {failure_reason(error)}") from None
    finally:
        done.set()
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]  # pyspark says str; None clears it
        shipped.unpersist()
    if progress is not None:
        progress(SweepProgress(len(plan), len(plan)))
    return [row for _, row in sorted(rows, key=lambda pair: pair[0])]


def _evaluator(plan: list[tuple[int, RunConfig, int]], chunks: int, shipped: Broadcast[_Shipped],
               sweep: str) -> Callable[[int], list[tuple[int, CurveRow]]]:
    def evaluate(chunk: int) -> list[tuple[int, CurveRow]]:
        stream = _REBUILT.get(sweep)
        if stream is None:
            s = shipped.value
            stream = Stream(events=s.events, name=s.name, time_unit=s.time_unit, watermarks=s.watermarks,
                            **s.flags)  # validated already
            _REBUILT.clear()  # one stream per worker: an earlier sweep's goes
            _REBUILT[sweep] = stream
        return [(position, curve_row(delay, run_metrics(stream, config)))
                for position, config, delay in plan[chunk::chunks]]

    return evaluate


def _watch(sc: SparkContext, group: str, chunks: int, pairs: int, progress: Callable[[SweepProgress], None] | None,
           cancel: threading.Event | None, done: threading.Event) -> None:
    """Report the tasks finished (as configurations), and cancel the job group once asked, until ``done``."""
    tracker = sc.statusTracker()
    reported = -1
    while not done.wait(POLL_SECONDS):
        if cancel is not None and cancel.is_set():
            sc.cancelJobGroup(group)  # again at every poll: a cancel before the job was submitted finds none
            continue
        if progress is None:
            continue
        finished = 0
        for job in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job)
            for stage in (info.stageIds if info else []):
                stage_info = tracker.getStageInfo(stage)
                finished += stage_info.numCompletedTasks if stage_info else 0
        evaluated = min(pairs, finished * pairs // chunks)
        if evaluated != reported:
            reported = evaluated
            progress(SweepProgress(evaluated, pairs))
