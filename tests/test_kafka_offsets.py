"""A Kafka topic's export placed in a Spark job's micro-batches by the offsets its progress log reports.

The source records are shaped as Spark writes them (``query.lastProgress``: ``sources[].startOffset`` and
``endOffset`` as ``{"topic": {"partition": offset}}``, e.g. a KafkaV2 source reading offsets 1986–2049 of
partition 0 in one micro-batch with numInputRows 64); the event log holds the same offsets as a JSON string.
"""

import json

import numpy as np
import pandas as pd
import pytest

from explorer.errors import InputError
from explorer.spark.kafka_offsets import micro_batches_of
from explorer.spark.progress import KafkaRange, parse_progress
from explorer.streams import read_in_batches, stream_from_frame

TOPIC = "pagila.sales.spark.streaming"


def progress_record(batch_id: int, start: dict | None, end: dict, topic: str = TOPIC, as_text: bool = False) -> dict:
    offsets = lambda found: None if found is None else {topic: {str(p): o for p, o in found.items()}}  # noqa: E731
    start_offset, end_offset = offsets(start), offsets(end)
    if as_text:  # the event log's form
        start_offset, end_offset = json.dumps(start_offset), json.dumps(end_offset)
    return {"id": "q", "runId": "r", "name": "sales", "timestamp": "2026-11-24T09:00:00.000Z", "batchId": batch_id,
            "numInputRows": sum(end.values()) - sum((start or {p: 0 for p in end}).values()),
            "durationMs": {"triggerExecution": 100}, "eventTime": {}, "stateOperators": [],
            "sources": [{"description": f"KafkaV2[Subscribe[{topic}]]", "startOffset": start_offset,
                         "endOffset": end_offset, "numInputRows": 0}]}


def the_log(*records: dict):
    return [parse_progress(r, f"log line {i + 1}") for i, r in enumerate(records)]


def kafka_stream(partitions, offsets, **extra):
    n = len(offsets)
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(n)], "event_time": np.arange(n, dtype=float),
                          "arrival_time": np.arange(n, dtype=float), "partition": partitions, "offset": offsets,
                          **extra})
    return stream_from_frame(frame, name="export.csv")


def test_kafka_source_offsets_are_read_from_lastProgress_and_from_the_event_log():
    (record,) = the_log(progress_record(24, {0: 1986}, {0: 2050}))
    assert record.kafka == (KafkaRange(TOPIC, 0, 1986, 2050),)
    (text,) = the_log(progress_record(24, {0: 1986}, {0: 2050}, as_text=True))
    assert text.kafka == record.kafka
    first = the_log(progress_record(0, None, {1: 5, 0: 7}))[0]
    assert first.kafka == (KafkaRange(TOPIC, 0, None, 7), KafkaRange(TOPIC, 1, None, 5))


@pytest.mark.parametrize("start,end", [({"logOffset": 2}, {"logOffset": 3}), (10, 20), ("{\"logOffset\":3}", None),
                                       ({"t": {"x": 1}}, {"t": {"x": 2}})])
def test_other_sources_offsets_are_not_taken_for_kafka(start, end):
    record = progress_record(0, None, {0: 1})
    record["sources"][0].update(startOffset=start, endOffset=end)
    assert the_log(record)[0].kafka == ()


def test_each_record_lands_in_the_micro_batch_that_read_its_offset():
    """Batch 0 gives no start (from the beginning); partition 1 first appears in batch 2 without a start (its
    records from the beginning too); batch 3 read nothing (a no-data micro-batch)."""
    log = the_log(progress_record(0, None, {0: 3}),
                  progress_record(1, {0: 3}, {0: 5}),
                  progress_record(2, {0: 5}, {0: 6, 1: 2}),
                  progress_record(3, {0: 6, 1: 2}, {0: 6, 1: 2}),
                  progress_record(4, {0: 6, 1: 2}, {0: 8, 1: 3}))
    stream = kafka_stream([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1], [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2])
    assert micro_batches_of(log, stream).tolist() == [0, 0, 0, 1, 1, 2, 4, 4, 2, 2, 4]


def test_placed_by_offsets_is_the_same_stream_as_with_the_batch_column():
    """Rows whose offsets put them in another order than their arrival times: read in their micro-batches
    they are reordered and their arrivals raised exactly as a file with the batch column would be."""
    log = the_log(progress_record(0, None, {0: 2, 1: 1}), progress_record(1, {0: 2, 1: 1}, {0: 4, 1: 2}))
    partitions, offsets = [0, 1, 0, 1, 0, 0], [0, 1, 2, 0, 1, 3]
    stream = kafka_stream(partitions, offsets)
    placed = read_in_batches(stream, micro_batches_of(log, stream))
    with_column = kafka_stream(partitions, offsets, batch=[0, 1, 1, 0, 0, 1])
    pd.testing.assert_frame_equal(placed.events, with_column.events)
    assert placed.has_batch and placed.arrivals_raised == with_column.arrivals_raised == 2


@pytest.mark.parametrize("log,partitions,offsets,words", [
    ([progress_record(0, None, {0: 3}), progress_record(1, {0: 3}, {0: 5})], [0, 0, 0], [0, 4, 5],
     "event 'r2': no micro-batch of the log read offset 5 of partition 0 (it reads offsets the start to 4; "
     "1 such row(s)): is it the same job"),
    ([progress_record(7, {0: 100}, {0: 150})], [0, 0], [120, 99],
     "event 'r1': no micro-batch of the log read offset 99 of partition 0 (it reads offsets 100 to 149"),
    ([progress_record(0, None, {0: 3})], [0, 2], [0, 0],
     "event 'r1': the log reads no offsets of partition 2 (it reads partitions 0)"),
    ([progress_record(1, {0: 0, 1: 0}, {0: 3, 1: 0})], [0, 1], [0, 0],  # partition 1 only ever read empty
     "event 'r1': the log reads no offsets of partition 1 (it reads partitions 0)"),
    ([progress_record(0, None, {0: 3})], ["eu-0", "eu-0"], [0, 1],
     "event 'r0': its partition 'eu-0' is not a Kafka partition number"),
    ([progress_record(0, None, {0: 3}), progress_record(1, None, {0: 3}, topic="other")], [0], [0],
     "the log reads 2 topics (other, pagila.sales.spark.streaming)"),
])
def test_rows_no_micro_batch_read_are_refused_naming_the_row(log, partitions, offsets, words):
    with pytest.raises(InputError) as refused:
        micro_batches_of(the_log(*log), kafka_stream(partitions, offsets))
    assert words in str(refused.value)


def test_a_log_without_kafka_offsets_or_an_export_without_them_says_what_is_needed():
    not_kafka = progress_record(0, None, {0: 1})
    not_kafka["sources"][0].update(startOffset=None, endOffset={"logOffset": 0})
    with pytest.raises(InputError, match="the log's source is not Kafka"):
        micro_batches_of(the_log(not_kafka), kafka_stream([0], [0]))
    no_offsets = stream_from_frame(pd.DataFrame({"event_time": [1.0], "partition": [0]}), name="x.csv")
    with pytest.raises(InputError, match="or, for a Kafka source, its partition and offset columns"):
        micro_batches_of(the_log(progress_record(0, None, {0: 1})), no_offsets)


@pytest.mark.parametrize("partitions,offsets,words", [
    ([0, 1, 0, 0], [4, 4, 5, 4], "column 'offset' rows 1, 4: partition 0 offset 4 twice"),
    ([0, 0], [3, -1], "column 'offset' row 2: -1 is negative"),
    ([0, 0], [3, 1.5], "column 'offset' row 2: 1.5 is not a whole number"),
])
def test_offsets_that_cannot_be_kafkas_are_refused_at_load(partitions, offsets, words):
    with pytest.raises(InputError) as refused:
        kafka_stream(partitions, offsets)
    assert str(refused.value).startswith(f"export.csv: {words}")
