"""Completeness–latency curves on Spark (``curve --engine spark``): many configurations in one Spark job.

The driver validates the events with the local loader (the same errors as everywhere) and stages them once
as Parquet, in arrival order with times in µs. Spark reads that table, replicates it to one copy per chunk
of configurations and evaluates each chunk in its own task with the local core, so configurations spread
over executors and the numbers are the local curve's, digit for digit.

Keys are not split across tasks: batch boundaries and commit times belong to the whole stream, so a key's
events alone would batch and commit differently. A task therefore holds one whole stream.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd

from explorer.budget import check_spark_sweep
from explorer.config import RunConfig, apply_delay
from explorer.core import run_metrics
from explorer.metrics import CurveRow, curve_row
from explorer.spark.runner import SparkRunError, failure_reason
from explorer.spark.session import started
from explorer.streams import Stream

CURVE_SCHEMA = ", ".join(f"{f.name} {'LONG' if f.name in ('dropped', 'side_output', 'late_updated') else 'DOUBLE'}"
                         for f in fields(CurveRow)) + ", position LONG"
STREAM_FLAGS = ("has_keys", "has_arrival", "has_batch", "has_partition", "time_formats")


def curve_on_spark(spark, stream: Stream, configs: list[RunConfig], delays: list[int],
                   chunks: int | None = None) -> list[CurveRow]:
    """One curve row per (config, delay) pair, in the order given (configs outer, delays inner). ``spark`` is a
    session, or how to start one once the sweep is known to fit (a local session's workers are at most one per
    core, which the memory check assumes)."""
    plan = [(position, apply_delay(config, delay), delay)
            for position, (config, delay) in enumerate((c, d) for c in configs for d in delays)]
    check_spark_sweep(len(stream), [config for _, config, _ in plan], os.cpu_count() or 1)
    spark = started(spark)
    chunks = max(1, min(chunks or 2 * spark.sparkContext.defaultParallelism, len(plan)))
    staging = Path(tempfile.mkdtemp(prefix="wx-sweep-"))
    try:
        table = stream.events.assign(row=np.arange(len(stream.events)))
        table.to_parquet(staging / "events.parquet", index=False)
        events = spark.read.parquet(str(staging / "events.parquet"))
        copies = spark.range(chunks).withColumnRenamed("id", "chunk")
        evaluated = (events.crossJoin(copies).groupBy("chunk")
                     .applyInPandas(_evaluate_chunk(plan, chunks, stream), CURVE_SCHEMA))
        try:
            rows = evaluated.toPandas().sort_values("position")
        except Exception as error:  # one readable line, not a JVM stack trace
            raise SparkRunError(f"the sweep on Spark failed: {failure_reason(error)}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [CurveRow(**{f.name: _plain(getattr(r, f.name), f.name) for f in fields(CurveRow)})
            for r in rows.itertuples(index=False)]


def _evaluate_chunk(plan: list[tuple[int, RunConfig, int]], chunks: int, template: Stream):
    flags = {name: getattr(template, name) for name in STREAM_FLAGS}
    # the scripted watermark rows travel with the function (a few per test or lesson); without them a
    # scripted sweep would have nothing to follow
    name, unit, marks = template.name, template.time_unit, template.watermarks

    def evaluate(frame: pd.DataFrame) -> pd.DataFrame:
        chunk = int(frame["chunk"].iloc[0])
        events = frame.drop(columns="chunk").sort_values("row").drop(columns="row").reset_index(drop=True)
        stream = Stream(events=events, name=name, time_unit=unit, watermarks=marks, **flags)  # validated already
        rows = []
        for position, config, delay in plan[chunk::chunks]:
            row = curve_row(delay, run_metrics(stream, config)).to_dict()
            rows.append({**row, "position": position})
        return pd.DataFrame(rows, columns=[f.name for f in fields(CurveRow)] + ["position"])

    return evaluate


def _plain(value, name: str):
    if name in ("dropped", "side_output", "late_updated"):
        return int(value)
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if name == "delay":
        return int(value) if value == int(value) else float(value)
    return float(value)

