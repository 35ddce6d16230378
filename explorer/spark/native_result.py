"""Spark's own query as a Result (``--engine spark-native``): what real Spark did, in the schema every runner
returns, so the badge can hold it against the ``spark`` preset's prediction table for table.

Spark's append mode reports only the windows it emitted (update mode: each micro-batch's updated windows, with their
events then: UPDATE rows, numbered per window), a per-micro-batch watermark (in milliseconds) and a
count of rows it dropped as late. The rest is read from those facts, not from the preset's rules:

- an event Spark kept is in the ids of a window it emitted, or of one still open when the input ran out
  (``native``'s flush asks Spark's state for those);
- a (row, window) pair Spark refused is a window the row falls in (the window arithmetic every engine
  shares, ``fixed_spans``) that does not list it; a session row is refused when no session lists it;
- the watermark each event met is the one Spark evicted with in the micro-batch before (Spark filters late
  rows with the previous micro-batch's watermark).

Two checks keep a misread run from becoming numbers: the refused pairs must add up to Spark's own
``numRowsDroppedByWatermark`` in every micro-batch (which counts rows after partial aggregation), and every
watermark Spark reported must be max event time − delay (floored at 0) for the events it had seen, in its
millisecond arithmetic. Either failing is an error, not a Result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from explorer.config import PRESETS, TIME_FIELDS, Emit, RunConfig, Scope, WindowKind, WindowSpec
from explorer.core.assemble import assemble
from explorer.core.records import Assignment, Emission, EventDecision, StepOutput, TracePoint
from explorer.core.result import Reason, Result, Status
from explorer.core.watermarks import GLOBAL
from explorer.core.windows import fixed_spans
from explorer.errors import EngineError, ExplorerError, InputError
from explorer.spark.native import NativeEmission, NativeRun, run_native
from explorer.spark.progress import BatchProgress
from explorer.streams import Stream, batches_for
from explorer.timeutil import truncate_to_unit

if TYPE_CHECKING:
    from explorer.spark.session import SparkOrStarter

ENGINE = "spark-native"
MS = 1_000
POLICIES = {Scope.GLOBAL: None, Scope.PARTITION_MIN: "min", Scope.PARTITION_MAX: "max"}
SECONDS_PER_MICRO_BATCH = 0.6  # measured here: a native window query's micro-batch on local[2] (0.47–0.64 s)
STARTUP_SECONDS = 15


class NativeMismatch(EngineError):
    """Spark's reports and the emitted windows do not add up: the run is not turned into numbers."""


@dataclass(frozen=True)
class NativeQuery:
    """What Spark's withWatermark + groupBy(window | session_window, key) query is given."""

    window: WindowSpec
    delay: int  # µs, as withWatermark is given it (Spark itself cuts it to whole ms: ``spark_delay``)
    watermark_policy: str | None  # None: one input; "min" / "max": one input per partition
    output_mode: str = "append"  # or "update" (--emit on-batch): each micro-batch writes the windows it changed

    @property
    def spark_delay(self) -> int:
        """The delay Spark subtracts: its watermark is whole milliseconds (``getDelayMs`` drops the µs)."""
        return truncate_to_unit(self.delay, MS)


def native_query(config: RunConfig) -> NativeQuery:
    """The query for ``config``, or an InputError naming the first setting Spark's own query cannot express:
    it has a delay and, with one input per partition, a min or max policy; every other rule is the ``spark``
    preset's (no side output, idle timeout, per-key watermark or allowed lateness)."""
    spark_rules = PRESETS["spark"].time
    for field in TIME_FIELDS:
        if field.name in ("delay", "scope") or (field.name == "emit" and config.time.emit is Emit.ON_BATCH):
            continue
        ours, theirs = getattr(config.time, field.name), getattr(spark_rules, field.name)
        if ours != theirs:
            raise InputError(f"--engine spark-native runs Spark's own query, which has no --{field.option.replace('_', '-')} "
                             f"{field.to_text(ours)} (Spark's: {field.to_text(theirs)}); use --preset spark, or "
                             "--engine spark to run these rules on Spark")
    if config.time.scope not in POLICIES:
        raise InputError(f"--engine spark-native: Spark's watermark is global, or per input with "
                         f"multipleWatermarkPolicy (--scope partition-min / partition-max), not --scope "
                         f"{config.time.scope.value}")
    if config.window.kind is WindowKind.CUMULATE:
        raise InputError("--engine spark-native: Spark has no CUMULATE windows (Flink SQL's); use --engine spark to run "
                         "them on Spark")
    if config.window.kind is WindowKind.KSTREAMS_SLIDING:
        raise InputError("--engine spark-native: Spark has no windows made by records' time differences (Kafka "
                         "Streams' SlidingWindows); use --engine spark to run them on Spark")
    update = config.time.emit is Emit.ON_BATCH
    if update and config.window.kind is WindowKind.SESSION:
        raise InputError("--engine spark-native: Spark refuses update output mode with session windows (\"Update "
                         "output mode not supported for session window\"); use --output-mode append, or a tumbling "
                         "or sliding window")
    return NativeQuery(config.window, config.time.delay, POLICIES[config.time.scope],
                       "update" if update else "append")


def native_seconds(batches: int) -> float:
    """About how long Spark's own query takes: it runs one micro-batch per arrival batch."""
    return STARTUP_SECONDS + SECONDS_PER_MICRO_BATCH * (batches + 3)


def run_spark_native(stream: Stream, config: RunConfig, spark: SparkOrStarter,
                     progress: Callable[[BatchProgress, int], None] | None = None,
                     cancel: threading.Event | None = None) -> Result:
    """Run Spark's own query over the stream, one micro-batch per arrival batch, and return its Result.
    ``spark`` is a session or a callable that starts one (after the settings were checked)."""
    from explorer.spark.runner import SparkRunError, failure_reason
    from explorer.spark.session import started

    query = native_query(config)
    try:
        run = run_native(started(spark), stream, query.window, query.delay, config.batches,
                         watermark_policy=query.watermark_policy, output_mode=query.output_mode, progress=progress,
                         cancel=cancel)
    except ExplorerError:
        raise
    except Exception as error:  # one readable line, not a JVM stack trace
        raise SparkRunError(f"Spark's own query failed: {failure_reason(error)}") from None
    return native_result(stream, config, run)


def native_result(stream: Stream, config: RunConfig, run: NativeRun) -> Result:
    """Spark's run as a Result; :class:`NativeMismatch` when its reports do not add up."""
    query = native_query(config)
    batches = batches_for(stream, config)
    n = len(batches.commit_time)
    progress = run.progress
    if [p.batch_id for p in progress] != list(range(len(progress))) or len(progress) not in (n, n + 1):
        raise NativeMismatch(f"Spark ran micro-batches {[p.batch_id for p in progress][:5]}… for {n} arrival batches; "
                             "expected one per arrival batch and perhaps a no-data batch")
    raw = _raw_watermarks(stream, batches.starts, query, len(progress) + 1)
    spark_watermark = _spark_watermarks(progress, raw, query.spark_delay)
    final_raw = raw[-1]  # all the input seen: if Spark ran no no-data batch, its watermark did not move
    if spark_watermark[-1] != _spark_arithmetic(final_raw, query.spark_delay):
        raise NativeMismatch(f"Spark ended with watermark {spark_watermark[-1]} µs and ran no more micro-batches; "
                             f"the whole input gives {final_raw} µs − delay")
    arrays = stream.arrays()
    row_of = {event_id: row for row, event_id in enumerate(arrays.ids.tolist())}
    commit = batches.commit_time.astype(np.int64)
    seen_max = np.maximum.accumulate(np.array([arrays.event_time[lo:hi].max() if hi > lo else np.iinfo(np.int64).min
                                               for lo, hi in zip(batches.starts[:-1], batches.starts[1:])]))

    written: dict[tuple[str, int, int], int] = {}  # update mode: a window's rows so far (its revision)

    def emission(e: NativeEmission, reason: str) -> Emission:
        at = min(e.batch, n) - 1  # the no-data batch runs after the last arrival batch, at its commit time
        ids = tuple(sorted(e.ids, key=row_of.__getitem__))
        mark = final_raw if reason == Reason.END_OF_STREAM.value else raw[e.batch - 1]
        revision = written[e.key, e.start, e.end] = written.get((e.key, e.start, e.end), 0) + 1
        return Emission(e.key, e.start, e.end, len(ids), ids, e.batch, int(commit[at]), mark,
                        spark_watermark[e.batch - 1], reason, revision, int(seen_max[at]) - e.end,
                        int(commit[at]) - e.end)

    # append mode writes a window once, when the watermark passes it; update mode each micro-batch that changed it
    written_as = Reason.UPDATE.value if query.output_mode == "update" else Reason.WATERMARK.value
    kept = [emission(e, written_as) for e in run.emissions]
    kept += [emission(e, Reason.END_OF_STREAM.value) for e in run.still_open]
    assignments = _assignments(stream, query.window, kept, row_of)
    refused_rows = {a.row for a in assignments if not a.admitted}
    number = batches.number
    _check_dropped(stream, query, assignments, number, progress)
    events = [EventDecision(row, Status.DROPPED.value if row in refused_rows else Status.ON_TIME.value,
                            raw[number[row] - 2] if number[row] >= 2 else None) for row in range(len(stream))]
    trace = [TracePoint(b + 1, int(commit[min(b, n - 1)]), GLOBAL, raw[b], spark_watermark[b],
                        "commit" if b < n else "no-data batch") for b in range(len(progress))]
    steps = [StepOutput(events=events, assignments=assignments, emissions=kept, trace=trace)]
    return assemble(stream, config, steps, max_open=max(p.state_rows for p in progress), engine_name=ENGINE)


def _raw_watermarks(stream: Stream, starts: np.ndarray, query: NativeQuery, micro_batches: int) -> list[int | None]:
    """The max event time Spark had seen before each of ``micro_batches``, in its milliseconds (per input, then
    the min or max over the inputs that have seen data); None before any."""
    arrays = stream.arrays()
    event_time = arrays.event_time
    inputs = [np.ones(len(event_time), dtype=bool)] if query.watermark_policy is None else \
        [arrays.partitions == p for p in sorted(set(arrays.partitions.tolist()))]
    out: list[int | None] = [None]
    best: list[int | None] = [None] * len(inputs)
    for b in range(micro_batches - 1):
        lo, hi = (int(starts[b]), int(starts[b + 1])) if b + 1 < len(starts) else (0, 0)
        for i, mask in enumerate(inputs):
            chunk = event_time[lo:hi][mask[lo:hi]]
            if len(chunk):  # Spark's t / 1000 (toward zero) keeps the order, so the max's is the max of theirs
                seen = truncate_to_unit(int(chunk.max()), MS)
                before = best[i]
                best[i] = seen if before is None else max(before, seen)
        known = [v for v in best if v is not None]
        out.append(None if not known else (min(known) if query.watermark_policy == "min" else max(known)))
    return out


def as_spark_reports(result: Result) -> Result:
    """A Result cut down to what Spark reports, to hold against a ``spark-native`` one: Spark's progress has one
    watermark for the query, so the per-partition trace rows of ``--scope partition-min/max`` go."""
    trace = result.watermarks
    return replace(result, watermarks=trace[trace["scope"] == GLOBAL].reset_index(drop=True))


def _check_dropped(stream: Stream, query: NativeQuery, assignments: list[Assignment], number: np.ndarray,
                   progress: list[BatchProgress]) -> None:
    """Spark's numRowsDroppedByWatermark, micro-batch by micro-batch, against the refused pairs. Spark counts
    rows at its stateful operator, after the partial aggregation each input's micro-batch gets: two late rows
    of one key and window count once (measured here). So the count to match is the distinct (input, key,
    window) among the pairs refused in that micro-batch."""
    arrays = stream.arrays()
    dropped: dict[int, set[tuple[str, str, int | None, int | None]]] = {}  # (input, key, start, end)
    for a in assignments:
        if not a.admitted:
            source = arrays.partitions[a.row] if query.watermark_policy else ""
            dropped.setdefault(int(number[a.row]) - 1, set()).add((source, arrays.keys[a.row], a.start, a.end))
    for p in progress:
        found = len(dropped.get(p.batch_id, ()))
        if found != p.dropped:
            raise NativeMismatch(f"Spark reported {p.dropped} rows dropped by the watermark in micro-batch "
                                 f"{p.batch_id}; the windows it emitted leave out {found} (input, key, window)")


def _spark_arithmetic(seen: int | None, delay: int) -> int | None:
    """Spark's watermark for the max event time it has seen: never below 0, where its watermark starts (the
    core's ``effective_watermark`` lets a stream before 1970 go below)."""
    return None if seen is None else max(seen - delay, 0)


def _spark_watermarks(progress: list[BatchProgress], raw: list[int | None], delay: int) -> list[int | None]:
    """Spark's reported watermark per micro-batch (None before it has seen data: it reports 0 then), checked
    against the events it had seen."""
    out = []
    for p, seen in zip(progress, raw):
        expected = _spark_arithmetic(seen, delay)
        reported = p.watermark if seen is not None else None
        if reported != expected:
            raise NativeMismatch(f"Spark's watermark in micro-batch {p.batch_id} was {p.watermark} µs; the events "
                                 f"before it give {expected}")
        out.append(reported)
    return out


def _assignments(stream: Stream, window: WindowSpec, kept: list[Emission], row_of: dict[str, int]) -> list[Assignment]:
    """Every (row, window) pair: admitted where Spark's windows list the row, refused otherwise."""
    arrays = stream.arrays()
    admitted: dict[int, list[tuple[int, int]]] = {}
    for e in kept:
        for event_id in e.ids:
            admitted.setdefault(row_of[event_id], []).append((e.start, e.end))
    out = []
    for row, t in enumerate(arrays.event_time.tolist()):
        took = admitted.get(row, [])
        if window.kind is WindowKind.SESSION:
            spans = took or [(t, t + window.gap)]
        else:
            spans = list(fixed_spans(t, window.size, window.slide, offset=window.offset))
            stray = set(took) - set(spans)
            if stray:
                raise NativeMismatch(f"Spark put event {arrays.ids[row]} (t={t} µs) in window {sorted(stray)[0]}, "
                                     "which does not hold it")
        out += [Assignment(row, start, end, (start, end) not in took, (start, end) in took) for start, end in spans]
    return out
