"""A production Structured Streaming job explained from its own progress log (``python -m explorer spark-log``).

The log says, per micro-batch, the watermark Spark used and ``numRowsDroppedByWatermark``: how many rows its
aggregation refused, counted after partial aggregation (one per input partition, key and window, however
many events that was). Given the job's events export, with the micro-batch each row was read in (a
``batch`` column holding Spark's batchId, or, for a Kafka source, the rows' partition and offset, which the
log's source offsets place in micro-batches), the ``spark`` preset replays the job with its window and delay and
names the events behind each count; then the smallest delay that would have kept the target share of them.

The preset replays the arrival batches as the log shows them: when the job ran no-data micro-batches (a live
query catching up with its watermark) the live schedule, else the backlog one. Each micro-batch's watermark
is compared, so where the replay and the job part ways is shown, not assumed away.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from explorer.config import BatchKind, BatchSpec, RunConfig, Schedule
from explorer.core import run
from explorer.core.result import Result
from explorer.errors import InputError
from explorer.metrics import Tuning, tune
from explorer.spark.progress import BatchProgress
from explorer.spark.kafka_offsets import micro_batches_of
from explorer.streams import Stream, batches_for, read_in_batches
from explorer.timeutil import format_instant, human_duration


@dataclass(frozen=True)
class BatchSideBySide:
    """One micro-batch of the job: what Spark reported, and what the preset's replay of the events says."""

    progress: BatchProgress
    replayed: bool  # the export has rows of this micro-batch
    watermark: int | None  # the replay's watermark in this micro-batch (µs), when replayed
    dropped_groups: int  # (key, window) the replay refused in it: what Spark's count counts
    dropped_ids: tuple[str, ...]  # the events behind them

    @property
    def agrees(self) -> bool:
        """Spark reports a watermark of 0 before it has one; the replay says none yet."""
        return not self.replayed or ((self.watermark or 0) == self.progress.watermark
                                     and self.dropped_groups == self.progress.dropped)


@dataclass(frozen=True)
class JobExplanation:
    batches: list[BatchSideBySide]
    result: Result
    keeps: Tuning  # the smallest delay reaching the target completeness

    @property
    def spark_dropped(self) -> int:
        return sum(b.progress.dropped for b in self.batches)


def explain_job(progress: list[BatchProgress], stream: Stream, config: RunConfig, target: float = 0.99) -> JobExplanation:
    """Replay the job's events with ``config`` (the ``spark`` preset, the job's window and delay) and line it up
    with the log, micro-batch by micro-batch."""
    if not stream.has_batch:  # a Kafka topic's export: its offsets say which micro-batch read each row
        stream = read_in_batches(stream, micro_batches_of(progress, stream))
    # a no-data micro-batch before the last data: a live query. (A replayed backlog's comes only at the end.)
    with_data = [i for i, p in enumerate(progress) if p.input_rows]
    live = any(not p.input_rows for p in progress[:with_data[-1]]) if with_data else False
    config = replace(config, batches=BatchSpec(BatchKind.COLUMN)).with_time(
        schedule=Schedule.LIVE if live else Schedule.BACKLOG)
    logged = {p.batch_id for p in progress}
    file_batch = stream.events["batch"].to_numpy(dtype=np.int64)
    numbering = batches_for(stream, config)
    spark_id = file_batch[numbering.starts[:-1]]  # arrival batch (0-based) → the job's batchId
    missing = sorted(set(spark_id.tolist()) - logged)
    if missing:
        raise InputError(f"the events export has rows of micro-batch {missing[0]}, which the log does not have "
                         f"({len(missing)} such micro-batches): is it the same job?")
    result = run(stream, config)
    commits = result.watermarks[(result.watermarks["scope"] == "*") & (result.watermarks["at"] == "commit")]
    # the watermark a micro-batch evicts with: the backlog's is the trace row of its own batch (taken effect
    # one micro-batch late), the live one's the row of the batch before
    shift = 1 if live else 0
    effective = dict(zip((commits["batch"] + shift).tolist(), commits["effective"].tolist()))
    refused = result.assignments[~result.assignments["admitted"]]
    events = result.events
    event_ids = events["id"].to_numpy()
    refused_in = events["batch"].to_numpy()[refused["event"].to_numpy()]  # each refused pair's arrival batch
    rows = []
    by_spark = {int(b): i for i, b in enumerate(spark_id.tolist())}
    for p in progress:
        arrival = by_spark.get(p.batch_id)
        if arrival is None:
            rows.append(BatchSideBySide(p, False, None, 0, ()))
            continue
        mine = refused[refused_in == arrival + 1]
        groups = {(events["key"].iat[r.event], r.start, r.end) for r in mine.itertuples()}
        ids = tuple(dict.fromkeys(event_ids[r] for r in mine["event"].tolist()))
        mark = effective.get(arrival + 1)
        rows.append(BatchSideBySide(p, True, None if mark is None or pd.isna(mark) else int(mark), len(groups), ids))
    return JobExplanation(rows, result, tune(stream, config, target))


def _log_header(watermark: str) -> str:
    return f"{'batch':>6} {'started':>24} {'rows':>7} {'ms':>6} {watermark:>24} {'dropped':>7}"


def _log_cells(p: BatchProgress, absolute: bool) -> str:
    """What the log says of one micro-batch (its start is always wall-clock; its watermark in the data's time)."""
    return (f"{p.batch_id:>6} {format_instant(p.started, True):>24} {p.input_rows:>7} {p.duration_ms:>6} "
            f"{format_instant(p.watermark, absolute):>24} {p.dropped:>7}")


def format_log(progress: list[BatchProgress]) -> str:
    """The log alone, micro-batch by micro-batch, for the terminal."""
    lines = [f"{_log_header('watermark')} {'in state':>8}"]
    lines += [f"{_log_cells(p, True)} {p.state_rows:>8}" for p in progress]
    lines.append(f"{sum(p.dropped for p in progress):,} rows dropped by the watermark (counted at the aggregation: "
                 "one per key and window each micro-batch); give the job's events export to see which events they were")
    return "\n".join(lines)


def format_explanation(explanation: JobExplanation, absolute: bool) -> str:
    """The side-by-side table and what it means, for the terminal."""
    lines = [f"{_log_header('Spark watermark')}   {'replay watermark':>24} {'dropped':>7} {'events':>6}"]
    for b in explanation.batches:
        replay = (f"{format_instant(b.watermark, absolute):>24} {b.dropped_groups:>7} {len(b.dropped_ids):>6}"
                  if b.replayed else f"{'(no rows in the export)':>24}")
        flag = "" if b.agrees else "  ← differs"
        lines.append(f"{_log_cells(b.progress, absolute)}   {replay}{flag}")
    dropping = [b for b in explanation.batches if b.progress.dropped]
    if dropping:
        ids = [i for b in dropping for i in b.dropped_ids]
        lines.append(f"Spark reported {explanation.spark_dropped:,} rows dropped by the watermark in micro-batches "
                     f"{dropping[0].progress.batch_id}–{dropping[-1].progress.batch_id} (rows at the aggregation: "
                     f"one per key and window each micro-batch); the replay finds {len(ids):,} late events there: "
                     f"{', '.join(ids[:10])}{' …' if len(ids) > 10 else ''}")
    else:
        lines.append("Spark reported no rows dropped by the watermark.")
    differing = [b.progress.batch_id for b in explanation.batches if not b.agrees]
    lines.append("The replay agrees with the log in every micro-batch." if not differing else
                 f"The replay differs from the log in {len(differing)} micro-batches (first {differing[0]}): the "
                 "export or the settings are not the job's.")
    keeps = explanation.keeps
    if keeps.reached:
        lines.append(f"A delay of {human_duration(keeps.delay)} would have kept {keeps.target:.0%} of the (event, "
                     f"window) pairs (completeness {keeps.completeness:.4f}; now "
                     f"{explanation.result.metrics.completeness:.4f}).")
    else:
        lines.append(f"No delay keeps {keeps.target:.0%}; the best is {keeps.completeness:.4f}.")
    return "\n".join(lines)
