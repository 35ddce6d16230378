"""The Spark runner's input: which arrival batches each Spark micro-batch carries, and the files that carry them.

The core's semantics live in the arrival batches, which the state function steps through in order, not in
Spark's micro-batch boundaries. So one micro-batch can carry many arrival batches and the Result is the same;
what changes is the cost: each micro-batch costs Spark about half a second whatever it holds (measured on
local[2], benchmarks/RESULTS.md), so one micro-batch per arrival batch made a 20k-event stream with one batch per
event a run of hours.

Each micro-batch is one Parquet file, written under a hidden name and renamed (the file source ignores hidden
files, so it never reads half a file), with modification times in plan order, read with maxFilesPerTrigger=1.
A last "end of input" file holds one row per state group and makes the state function run ``finish``.
Under the scripted strategy each arrival batch that holds a watermark row also gets a mark row (row −1, its
scripted watermark in ``scripted``), so a batch holding a watermark and no event still reaches the engine.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from explorer.config import RunConfig
from explorer.core.engine import separable_by_key
from explorer.core.rules import derive
from explorer.errors import InputError
from explorer.streams import Batches, Stream, batches_for
from explorer.streams.batching import NO_SCRIPTED

INPUT_SCHEMA = ("grp STRING, row LONG, batch LONG, commit LONG, opens LONG, id STRING, key STRING, partition STRING, "
                "t LONG, arrival LONG, last BOOLEAN, scripted LONG")
MARK_ROW = -1  # a mark row's ``row``: the batch's scripted watermark, no event
GLOBAL_GROUP = "*"
# The automatic plan: about this many micro-batches, so the progress bar moves, but never so few rows in one that
# Spark's per-micro-batch cost dominates, nor so many that one group's rows strain a Python worker.
TARGET_MICRO_BATCHES = 20
MIN_ROWS_PER_MICRO_BATCH = 5_000
MAX_ROWS_PER_MICRO_BATCH = 100_000
# What a run costs on local[2] (benchmarks/RESULTS.md, "Spark runner: many arrival batches per micro-batch"):
# starting Spark and its first Python worker, each micro-batch whatever it holds, and each row (the engine's
# step, its decisions written, read back and assembled).
START_SECONDS = 15.0
SECONDS_PER_MICRO_BATCH = 1.0
SECONDS_PER_ROW = 80e-6


@dataclass(frozen=True)
class MicroBatchPlan:
    """Micro-batch i carries arrival batches ``bounds[i]`` … ``bounds[i + 1] − 1`` (0-based); after them comes the
    end-of-input micro-batch."""

    bounds: tuple[int, ...]

    @property
    def data_micro_batches(self) -> int:
        return len(self.bounds) - 1

    @property
    def micro_batches(self) -> int:
        """All of them, the end-of-input one included (what the progress bar counts)."""
        return len(self.bounds)

    def describe(self) -> str:
        per = np.diff(self.bounds)
        if len(per) == 0:
            return "no arrival batches"
        spread = f"{per.min():,}" if per.min() == per.max() else f"{per.min():,}–{per.max():,}"
        return f"{self.data_micro_batches:,} micro-batches of {spread} arrival batches"


def expected_seconds(plan: MicroBatchPlan, rows: int) -> float:
    """About how long the run takes on local[2], from the figures above."""
    return START_SECONDS + SECONDS_PER_MICRO_BATCH * plan.micro_batches + SECONDS_PER_ROW * rows


def plan_micro_batches(batches: Batches, per_micro_batch: int | None = None) -> MicroBatchPlan:
    """``per_micro_batch`` arrival batches per micro-batch when given (``--arrival-batches-per-micro-batch``);
    otherwise consecutive arrival batches until about n / TARGET_MICRO_BATCHES rows, within the row bounds above.
    An arrival batch is never split."""
    n_batches = len(batches.commit_time)
    if per_micro_batch is not None:
        if isinstance(per_micro_batch, bool) or not isinstance(per_micro_batch, int) or per_micro_batch < 1:
            raise InputError(f"--arrival-batches-per-micro-batch must be a whole number ≥ 1, not {per_micro_batch!r}")
        return MicroBatchPlan(tuple(range(0, n_batches, per_micro_batch)) + (n_batches,))
    rows = int(batches.starts[-1])
    target = min(max(-(-rows // TARGET_MICRO_BATCHES), MIN_ROWS_PER_MICRO_BATCH), MAX_ROWS_PER_MICRO_BATCH)
    # micro-batch i starts with the first arrival batch that starts at or after row i × target
    firsts = np.searchsorted(batches.starts[:-1], np.arange(0, rows, target), side="left")
    bounds = np.unique(np.concatenate([[0], firsts, [n_batches]]))
    return MicroBatchPlan(tuple(int(b) for b in bounds))


def stage(stream: Stream, config: RunConfig, plan: MicroBatchPlan, folder: Path, stop_after: int | None) -> int:
    """Write the plan's files (only the first ``stop_after`` data files, if given, and then no end-of-input
    file). Files already there (a resumed run, whose fingerprint matched) are kept. Returns how many are staged."""
    folder.mkdir(parents=True, exist_ok=True)
    ev = stream.events
    arrays = stream.arrays()
    batches = batches_for(stream, config)
    groups = ev["key"].to_numpy(dtype=object) if separable_by_key(config) else np.full(len(ev), GLOBAL_GROUP, dtype=object)
    frame = pd.DataFrame({"grp": groups, "row": np.arange(len(ev), dtype=np.int64), "batch": batches.number,
                          "commit": batches.commit_time[batches.number - 1],
                          "opens": batches.opens[batches.number - 1],  # the batch's, not a state group's first row
                          "id": ev["id"].to_numpy(),
                          "key": ev["key"].to_numpy(), "partition": ev["partition"].to_numpy(),
                          "t": arrays.event_time, "arrival": arrays.arrival_time, "last": False, "scripted": None})
    marks = _mark_rows(batches) if derive(config).scripted else frame.iloc[:0]
    mark_batch = marks["batch"].to_numpy() - 1  # 0-based
    n_data = plan.data_micro_batches
    count = min(stop_after, n_data) if stop_after is not None else n_data
    base = time.time() - 10 * (n_data + 2)
    for i in range(count):
        lo, hi = int(batches.starts[plan.bounds[i]]), int(batches.starts[plan.bounds[i + 1]])
        carried = marks[(mark_batch >= plan.bounds[i]) & (mark_batch < plan.bounds[i + 1])]
        _write(folder, i, pd.concat([carried, frame.iloc[lo:hi]], ignore_index=True) if len(carried)
               else frame.iloc[lo:hi], base + 10 * i)
    if stop_after is not None:
        return count
    n_batches = len(batches.commit_time)
    end = pd.DataFrame({"grp": sorted(set(groups.tolist())), "row": -1, "batch": n_batches,
                        "commit": int(batches.commit_time[-1]) if n_batches else 0, "opens": 0, "id": "", "key": "",
                        "partition": "", "t": 0, "arrival": 0, "last": True, "scripted": None})
    _write(folder, n_data, end, base + 10 * n_data)
    return n_data + 1


def _mark_rows(batches: Batches) -> pd.DataFrame:
    """One mark row per arrival batch that holds a scripted watermark (the scripted strategy: one state group)."""
    holding = np.flatnonzero(batches.scripted != NO_SCRIPTED)
    return pd.DataFrame({"grp": GLOBAL_GROUP, "row": MARK_ROW, "batch": holding + 1,
                         "commit": batches.commit_time[holding], "opens": batches.opens[holding], "id": "", "key": "",
                         "partition": "", "t": 0, "arrival": 0, "last": False, "scripted": batches.scripted[holding]})


def _write(folder: Path, i: int, frame: pd.DataFrame, mtime: float) -> None:
    final = folder / f"part-{i:06d}.parquet"
    if final.exists():
        return
    hidden = folder / f".part-{i:06d}.parquet"
    frame.to_parquet(hidden, index=False)
    hidden.rename(final)
    os.utime(final, (mtime, mtime))  # the file source takes files in modification-time order
