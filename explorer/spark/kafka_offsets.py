"""Which micro-batch of a Spark job read each row of its Kafka export, from the offsets in its progress log.

A topic export has each record's partition and offset but not Spark's batchId. The job's progress says,
per micro-batch, the offsets it read from each partition (``sources[].startOffset`` / ``endOffset``: from
start up to, not including, end), so every record falls in exactly one micro-batch. A record no micro-batch
read means the export and the log are not of the same job (or not the whole log): refused, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import NoReturn

import numpy as np

from explorer.errors import InputError
from explorer.spark.progress import BatchProgress, KafkaRange
from explorer.streams import Stream

FROM_THE_START = np.iinfo(np.int64).min  # a range whose start the log does not give


@dataclass(frozen=True)
class PartitionReads:
    """One partition's micro-batches in offset order: batch i read offsets starts[i] ≤ o < ends[i]."""

    batch_ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    def batch_of(self, offsets: np.ndarray) -> np.ndarray:
        """The batchId that read each offset, -1 where none did."""
        at = np.searchsorted(self.ends, offsets, side="right")
        inside = at < len(self.ends)
        inside[inside] = self.starts[at[inside]] <= offsets[inside]
        return np.where(inside, self.batch_ids[np.minimum(at, len(self.ends) - 1)], -1)


def reads_by_partition(progress: list[BatchProgress]) -> dict[int, PartitionReads]:
    """The log's Kafka reads, per partition of its one topic. A micro-batch that does not say where it started
    in a partition started where the one before it ended (or, the first, at the beginning)."""
    ranges: dict[tuple[int, int], KafkaRange] = {}  # (partition, batchId) → the range; a re-logged batch once
    for p in progress:
        for r in p.kafka:
            ranges[(r.partition, p.batch_id)] = r
    if not ranges:
        raise InputError("the events export has no batch column, and the log's source is not Kafka (its progress "
                         "gives no topic offsets): give the export a batch column holding Spark's batchId")
    topics = sorted({r.topic for r in ranges.values()})
    if len(topics) > 1:
        raise InputError(f"the log reads {len(topics)} topics ({', '.join(topics[:4])}); an export's partition "
                         "and offset do not say which topic a row came from: give it a batch column (Spark's batchId)")
    reads = {}
    for partition, logged in groupby(sorted(ranges.items()), key=lambda item: item[0][0]):
        batch_ids, starts, ends, previous_end = [], [], [], FROM_THE_START
        for (_, batch_id), r in logged:  # in batchId order
            start = previous_end if r.start is None else r.start
            previous_end = r.end
            if r.end > start:  # a micro-batch that read nothing from this partition places no row
                batch_ids.append(batch_id)
                starts.append(start)
                ends.append(r.end)
        if not ends:  # the partition was only ever read empty: no row can be placed in it
            continue
        order = np.argsort(ends, kind="stable")
        reads[partition] = PartitionReads(np.asarray(batch_ids, dtype=np.int64)[order],
                                          np.asarray(starts, dtype=np.int64)[order],
                                          np.asarray(ends, dtype=np.int64)[order])
    return reads


def micro_batches_of(progress: list[BatchProgress], stream: Stream) -> np.ndarray:
    """The batchId that read each event of ``stream`` (in its order), from its partition and offset columns."""
    if not (stream.has_partition and stream.has_offset):
        raise InputError("the events export needs a batch column holding the micro-batch (Spark's batchId) each "
                         "row was read in, or, for a Kafka source, its partition and offset columns")
    reads = reads_by_partition(progress)
    events = stream.events
    offsets = events["offset"].to_numpy(dtype=np.int64)
    batch = np.full(len(events), -1, dtype=np.int64)
    codes, names = stream.codes("partition")
    for code, name in enumerate(names):
        rows = np.flatnonzero(codes == code)
        if not str(name).isdigit():
            _refuse(stream, rows[0], f"its partition {name!r} is not a Kafka partition number")
        found = reads.get(int(name))
        if found is None:
            read = ", ".join(map(str, sorted(reads))) or "none"
            _refuse(stream, rows[0], f"the log reads no offsets of partition {name} (it reads partitions {read})")
        batch[rows] = found.batch_of(offsets[rows])
        unread = rows[batch[rows] < 0]
        if len(unread):
            first = unread[np.argmin(offsets[unread])]
            _refuse(stream, first, f"no micro-batch of the log read offset {offsets[first]} of partition {name} "
                                   f"(it reads offsets {_span(found)}; {len(unread):,} such row(s)): is it the "
                                   "same job, and its whole log?")
    return batch


def _span(reads: PartitionReads) -> str:
    low = "the start" if reads.starts.min() == FROM_THE_START else str(int(reads.starts.min()))
    return f"{low} to {int(reads.ends.max()) - 1}"


def _refuse(stream: Stream, row: int, why: str) -> NoReturn:
    raise InputError(f"{stream.source or stream.name}: event {stream.events['id'].iat[row]!r}: {why}")
