"""Spark's own account of a streaming query, micro-batch by micro-batch: ``StreamingQueryProgress``.

Two things read it: the ``spark-native`` runner (its query's progress gives the watermark each micro-batch
used and the rows it dropped) and the import of a production job's log. A log is JSON lines, either the
progress itself (``query.lastProgress`` as JSON, what a ``StreamingQueryListener`` logs) or Spark's event log,
whose ``QueryProgressEvent`` lines carry it under ``progress``; other event-log lines are skipped.

No Spark here: reading a log needs only this module.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from explorer.errors import InputError
from explorer.streams.times import END_INSTANT, FIRST_INSTANT

PROGRESS_EVENT = "org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
MAX_LOG_BYTES = 2 * 1024**3  # a progress line is a few KB: a million micro-batches fit, a runaway file does not
MAX_LINE_BYTES = 16 * 1024**2  # Kafka offsets of thousands of partitions stay well below it


@dataclass(frozen=True)
class KafkaRange:
    """The records of one Kafka partition a micro-batch read: offsets ``start`` ≤ offset < ``end`` (Kafka's
    end offset is the next record's). ``start`` is None when the log does not say (a query's first
    micro-batch reports no start offset: it read from where ``startingOffsets`` put it)."""

    topic: str
    partition: int
    start: int | None
    end: int


@dataclass(frozen=True)
class BatchProgress:
    """One micro-batch as Spark reported it. Times are µs since the epoch. ``watermark`` is the one the batch
    evicted windows with; Spark reports 0 before it has seen any event time, which is kept as 0 here (the
    caller knows whether data came before). ``dropped`` sums numRowsDroppedByWatermark over the stateful
    operators: rows after window assignment, so a sliding window's row counts once per window it was late for."""

    batch_id: int
    started: int  # the trigger's start ("timestamp")
    input_rows: int
    duration_ms: int
    watermark: int | None
    event_time_max: int | None
    dropped: int
    state_rows: int
    query: str  # the query's name, else its id: a log can hold several queries
    run_id: str
    kafka: tuple[KafkaRange, ...] = ()  # what a Kafka source read; empty for other sources


def parse_progress(record: dict[str, Any], where: str) -> BatchProgress:
    """One progress record (a parsed JSON object); ``where`` names it in errors ("job.log line 12")."""
    try:
        event_time = record.get("eventTime") or {}
        operators = record.get("stateOperators") or []
        durations = record.get("durationMs") or {}
        return BatchProgress(
            batch_id=_int(record["batchId"], "batchId"),
            started=_instant(record["timestamp"], "timestamp"),
            input_rows=_int(record.get("numInputRows", 0), "numInputRows"),
            duration_ms=_int(durations.get("triggerExecution", 0), "durationMs.triggerExecution"),
            watermark=_instant(event_time["watermark"], "eventTime.watermark") if "watermark" in event_time else None,
            event_time_max=_instant(event_time["max"], "eventTime.max") if "max" in event_time else None,
            dropped=sum(_int(op.get("numRowsDroppedByWatermark", 0), "stateOperators[].numRowsDroppedByWatermark")
                        for op in operators),
            state_rows=sum(_int(op.get("numRowsTotal", 0), "stateOperators[].numRowsTotal") for op in operators),
            query=str(record.get("name") or record.get("id") or ""),
            run_id=str(record.get("runId") or ""),
            kafka=tuple(r for source in record.get("sources") or [] for r in _kafka_ranges(source)),
        )
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as error:
        detail = f"no {error.args[0]!r}" if isinstance(error, KeyError) else str(error)
        raise InputError(f"{where}: not a StreamingQueryProgress ({detail})") from None


def read_progress_log(path: str | Path) -> list[BatchProgress]:
    """Every micro-batch in a log file, in the order written. One query per log: a log holding several
    queries is refused with their names (split it, or log one query)."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}") from None
    if size > MAX_LOG_BYTES:
        raise InputError(f"{path}: {size / 1024**3:.1f} GB is more than a progress log holds (limit 2 GB)")
    batches: list[BatchProgress] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = f"{path} line {number}"
            if len(raw) > MAX_LINE_BYTES:
                raise InputError(f"{where}: a line of {len(raw) / 1024**2:.0f} MB is not a progress record")
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                raise InputError(f"{where}: not JSON ({error.__class__.__name__})") from None
            if not isinstance(record, dict):
                raise InputError(f"{where}: not a JSON object")
            if "Event" in record:  # Spark's event log: only the query progress events matter
                if record["Event"] != PROGRESS_EVENT:
                    continue
                record = record.get("progress")
                if not isinstance(record, dict):
                    raise InputError(f"{where}: a QueryProgressEvent without its progress")
            batches.append(parse_progress(record, where))
    if not batches:
        raise InputError(f"{path}: no StreamingQueryProgress records (JSON lines of query.lastProgress, or Spark's "
                         "event log)")
    queries = sorted({b.query for b in batches})
    if len(queries) > 1:
        raise InputError(f"{path}: holds {len(queries)} queries ({', '.join(queries[:4])}); give one query's log")
    return batches


def _kafka_ranges(source: dict[str, Any]) -> list[KafkaRange]:
    """A source's offsets when they are Kafka's: ``{"topic": {"partition": offset}}`` (JSON in
    ``lastProgress``, a JSON string in the event log). A file or rate source's offsets are other shapes and
    give none."""
    end, start = _offsets(source.get("endOffset")), _offsets(source.get("startOffset"))
    if end is None:
        return []
    return [KafkaRange(topic, partition, (start or {}).get((topic, partition)), offset)
            for (topic, partition), offset in sorted(end.items())]


def _offsets(value: Any) -> dict[tuple[str, int], int] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if not isinstance(value, dict) or not value or not all(isinstance(v, dict) for v in value.values()):
        return None
    found = {}
    for topic, partitions in value.items():
        for partition, offset in partitions.items():
            if not str(partition).isdigit():
                return None
            found[(str(topic), int(partition))] = _int(offset, f"offset of {topic} partition {partition}")
    return found


MAX_COUNT = 2**63 - 1  # counts, ids and offsets are Longs in Spark and Kafka


def _int(value: Any, field: str) -> int:
    """A count, id or offset: a whole, finite number from 0 to 2^63 − 1 (JSON's 1e400 and Infinity are not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{field} {value!r} is not a count")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ValueError(f"{field} {value!r} is not a whole finite count")
    if not 0 <= value <= MAX_COUNT:
        raise ValueError(f"{field} {value!r} is out of range (0 to 2^63 − 1)")
    return int(value)


def _instant(text: Any, field: str) -> int:
    """Spark's ISO-8601 instants ("2026-11-23T10:00:00.123Z", always UTC, years 1–9999) → µs since the epoch."""
    if not isinstance(text, str):
        raise ValueError(f"{field} {text!r} is not a time")
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{field} {text[:40]!r} is not an ISO-8601 time in the years 1–9999") from None
    if moment.tzinfo is None:
        raise ValueError(f"{field} {text!r} has no time zone")
    micros = (moment - EPOCH) // timedelta(microseconds=1)
    if not FIRST_INSTANT <= micros < END_INSTANT:  # a zone can push 0001-01-01 or 9999-12-31 past the years
        raise ValueError(f"{field} {text[:40]!r} is outside the years 1–9999 in UTC")
    return micros
