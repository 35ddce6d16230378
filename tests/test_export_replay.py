"""Every exported Python program reads the user's file with the same few functions (``export.replay.READING``),
and they must read it as the explorer did: the same ids, keys, event times to the µs, and the same arrival order.
Otherwise a verify that differs would blame the engine for a misread file."""

import numpy as np
import pandas as pd
import pytest

from explorer.cli import main
from explorer.export.common import ExportSource
from explorer.export.replay import program_head, source_settings
from explorer.streams import load_events

COLUMNS = {"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id"}


def program_reads(path, source: ExportSource) -> list[dict]:
    """The events as the program's own code reads them, run here as the program runs it."""
    namespace: dict = {"np": np, "pd": pd}
    exec(program_head(source_settings(source)), namespace)
    return namespace["events_in_arrival_order"](namespace["read_events"](str(path)))


def explorer_reads(stream) -> list[dict]:
    ev = stream.events
    parts = ev["partition"].astype(str) if len(stream.partitions) > 1 else [""] * len(ev)
    return [{"id": str(i), "key": str(k), "t": int(t), "arrival": int(a), "partition": p}
            for i, k, t, a, p in zip(ev["id"], ev["key"], ev["event_time"], ev["arrival_time"], parts)]


COMPRESS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd"}


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet", ".csv.gz", ".csv.bz2", ".csv.zst", ".jsonl.bz2",
                                    ".jsonl.zst"])
def test_the_programs_read_the_users_file_as_the_explorer_did(tmp_path, suffix):
    path = tmp_path / f"topic-export{suffix}"
    plain, codec = (path.with_suffix(""), COMPRESS[path.suffix]) if path.suffix in COMPRESS else (path, None)
    assert main(["generate", "kafka-export", "--devices", "5", "--duration", "600", "--out", str(plain)]) == 0
    if codec:
        import pyarrow as pa

        with pa.output_stream(str(path), compression=codec) as out:
            out.write(plain.read_bytes())
        plain.unlink()
    stream = load_events(path, columns=COLUMNS)
    source = ExportSource.of(stream)
    ours = explorer_reads(stream)
    theirs = program_reads(path, source)
    assert len(ours) > 500 and len({e["arrival"] for e in ours}) < len(ours)  # arrival ties, so order matters
    assert theirs == ours


def test_a_file_without_arrival_or_id_columns_arrives_in_file_order(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("event_time,key\n5,a\n3,b\n9,a\n1,b\n9,b\n")
    stream = load_events(path)
    assert program_reads(path, ExportSource.of(stream)) == explorer_reads(stream)
    assert [e["id"] for e in explorer_reads(stream)] == ["e1", "e2", "e3", "e4", "e5"]


ENVELOPES = [  # a Debezium-like change event: the time and key nested, one record per line or in an array
    {"op": "c", "payload": {"after": {"ts": f"2026-03-29T01:{m:02d}:30", "device": f"d{m % 3}"},
                            "source": {"ts_ms": 1774745400000 + 60_000 * m + 999_999 % (m + 1)}}}
    for m in range(40)
]


@pytest.mark.parametrize("shape", ["lines", "array", "lines.gz", "lines.bz2", "array.zst"])
def test_nested_records_json_arrays_gzip_and_local_times_are_read_as_the_explorer_did(tmp_path, shape):
    """Naive local times in Europe/Berlin around the spring-forward night are placed in that zone (02:xx is
    skipped that night, so the stream stays before it), arrivals are epoch ms in a nested field."""
    import json

    import pyarrow as pa

    form, _, suffix = shape.partition(".")
    path = tmp_path / f"events.{'json' if form == 'array' else 'jsonl'}{'.' + suffix if suffix else ''}"
    text = json.dumps(ENVELOPES) if form == "array" else "".join(json.dumps(e) + "\n" for e in ENVELOPES)
    with pa.output_stream(str(path), compression={"gz": "gzip", "zst": "zstd"}.get(suffix, suffix or None)) as f:
        f.write(text.encode())
    columns = {"event_time": "payload.after.ts", "key": "payload.after.device", "arrival_time": "payload.source.ts_ms"}
    stream = load_events(path, columns=columns, timezone="Europe/Berlin")
    assert stream.time_formats["event_time"].local == "Europe/Berlin"
    theirs = program_reads(path, ExportSource.of(stream))
    assert theirs == explorer_reads(stream) and len(theirs) == 40


def test_exact_times_avro_and_watermark_rows_are_read_as_the_explorer_did(tmp_path):
    """Epoch ns on half-µs ties (rounded half to even, no float), ISO with 9 digits, an ambiguous local time in
    the fall-back hour (its first occurrence), and a scripted watermark row, which is not an event."""
    path = tmp_path / "exact.csv"
    path.write_text("id,key,event_time,arrival_time,kind\n"
                    "a,k,2026-10-25T02:30:00.0000005,1792888200000000500,\n"
                    "b,k,2026-10-25T02:30:00.0000015,1792888200000001500,\n"
                    "w,,2026-10-25T02:00:00,1792888200000002000,watermark\n"
                    "c,k,2026-10-25T03:10:00.999999500,1792888200000002500,\n")
    stream = load_events(path, time_unit={"arrival_time": "ns"}, timezone="Europe/Berlin")
    theirs = program_reads(path, ExportSource.of(stream))
    assert theirs == explorer_reads(stream) and [e["id"] for e in theirs] == ["a", "b", "c"]
    assert [e["arrival"] for e in theirs] == [1792888200000000, 1792888200000002, 1792888200000002]

    import fastavro

    avro = tmp_path / "sink.avro"
    schema = {"type": "record", "name": "E", "fields": [
        {"name": "id", "type": "string"}, {"name": "meta", "type": {"type": "record", "name": "M", "fields": [
            {"name": "dt", "type": {"type": "long", "logicalType": "timestamp-micros"}},
            {"name": "key", "type": "string"}]}}]}
    with avro.open("wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), [
            {"id": f"e{i}", "meta": {"dt": 1_767_225_600_000_000 + 7_654_321 * i, "key": "ab"[i % 2]}} for i in range(30)])
    stream = load_events(avro, columns={"event_time": "meta.dt", "key": "meta.key"})
    assert program_reads(avro, ExportSource.of(stream)) == explorer_reads(stream)


def test_the_partition_column_is_read_as_mapped(tmp_path):
    """Flink's and Beam's programs keep a watermark per Kafka partition: they read the column the user mapped
    (--partition-col), not one that happens to be called 'partition'."""
    path = tmp_path / "topic.csv"
    path.write_text("id,key,ts,kafka_partition\na,k,1,0\nb,k,2,1\nc,k,3,0\n")
    stream = load_events(path, columns={"event_time": "ts", "partition": "kafka_partition"})
    source = ExportSource.of(stream)
    assert source.partition == "kafka_partition"
    assert [e["partition"] for e in program_reads(path, source)] == ["0", "1", "0"]
