"""Avro object container files (issue 31), as Kafka Connect's S3 sink and Debezium's Avro converter write them:
timestamp logical types read exactly, nested records by dotted path, and the same events in Avro, epoch ms
and ISO give the same JSON Result byte for byte."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone

import fastavro
import pytest

from explorer import InputError, load_events
from explorer.cli import main
from explorer.streams.upload import read_upload

BASE_MS = 1_795_165_200_000  # 2026-11-20T09:00:00Z
ROWS = [(f"r{i}", f"d{i % 3}", BASE_MS + 997 * i - (4_000 if i % 7 == 3 else 0), (BASE_MS + 1_250 * i) * 1000 + 17)
        for i in range(60)]  # id, device, ts in ms (some late), ingest_ts in µs

SINK_SCHEMA = {"type": "record", "name": "Reading", "namespace": "io.confluent.connect.avro", "fields": [
    {"name": "id", "type": "string"},
    {"name": "device_id", "type": "string"},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "ingest_ts", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
    {"name": "reading", "type": "double"},
]}
COLUMNS = {"key": "device_id", "event_time": "ts", "arrival_time": "ingest_ts"}


def write_avro(path, schema, records, codec="deflate"):
    with path.open("wb") as handle:
        fastavro.writer(handle, fastavro.parse_schema(schema), records, codec=codec)
    return path


def sink_file(tmp_path, name="events.avro"):
    records = [{"id": i, "device_id": d, "ts": ts, "ingest_ts": ingest, "reading": 20.0 + n}
               for n, (i, d, ts, ingest) in enumerate(ROWS)]
    return write_avro(tmp_path / name, SINK_SCHEMA, records)


def test_timestamp_millis_and_micros_are_read_exactly(tmp_path):
    stream = load_events(sink_file(tmp_path), columns=COLUMNS)
    events = stream.events.set_index("id")
    for i, _, ts, ingest in ROWS:
        assert events.loc[i, "event_time"] == ts * 1000
        assert events.loc[i, "arrival_time"] == ingest  # µs, the odd 17 µs kept
    assert stream.time_formats["event_time"].describe() == "timestamps (with a time zone)"


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms // 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def test_the_same_events_in_avro_epoch_ms_and_iso_give_the_same_json_result(tmp_path, capsys):
    """Issue 31's "done when": one JSON Result, byte for byte, whatever the format the events came in (arrival
    in whole ms here, as epoch ms and ISO text with ms carry)."""
    records = [{"id": i, "device_id": d, "ts": ts, "ingest_ts": (ingest // 1000) * 1000, "reading": 1.0}
               for i, d, ts, ingest in ROWS]
    avro = write_avro(tmp_path / "events.avro", SINK_SCHEMA, records, codec="null")
    epoch = tmp_path / "events.csv"
    epoch.write_text("id,device_id,ts,ingest_ts\n" + "".join(f"{r['id']},{r['device_id']},{r['ts']},"
                                                             f"{r['ingest_ts'] // 1000}\n" for r in records))
    text = tmp_path / "events.jsonl"
    text.write_text("".join(json.dumps({"id": r["id"], "device_id": r["device_id"], "ts": iso(r["ts"]),
                                        "ingest_ts": iso(r["ingest_ts"] // 1000)}) + "\n" for r in records))
    outputs = []
    for path in (avro, epoch, text):
        assert main(["run", str(path), "--key-col", "device_id", "--event-time-col", "ts", "--arrival-time-col",
                     "ingest_ts", "--window", "tumbling:5s", "--delay", "2s", "--format", "json"]) == 0
        document = json.loads(capsys.readouterr().out)
        assert document.pop("stream") == path.name
        assert document["events"] and document["windows"]
        outputs.append(json.dumps(document, sort_keys=True))
    assert outputs[0] == outputs[1] == outputs[2]


DEBEZIUM_VALUE = {"type": "record", "name": "Envelope", "namespace": "dbserver1.inventory.orders", "fields": [
    {"name": "before", "type": ["null", {"type": "record", "name": "Value", "fields": [
        {"name": "id", "type": "int"}, {"name": "customer", "type": "string"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-nanos"}}]}], "default": None},
    {"name": "after", "type": ["null", "Value"], "default": None},
    {"name": "source", "type": {"type": "record", "name": "Source", "namespace": "io.debezium.connector.postgresql",
                                "fields": [{"name": "ts_ms", "type": "long"}, {"name": "db", "type": "string"}]}},
    {"name": "op", "type": "string"},
    {"name": "ts_ms", "type": ["null", "long"], "default": None},
]}


def test_a_debezium_envelope_is_read_by_path_and_nanos_are_rounded_half_to_even(tmp_path):
    """after.ts is timestamp-nanos in an optional record (fastavro leaves it an integer): read as epoch ns, rounded
    to the µs half to even; a delete's null ``after`` is named as such."""
    nanos = [1_795_165_200_123_456_789, 1_795_165_200_123_457_500, 1_795_165_200_123_458_500]
    records = [{"before": None, "after": {"id": n, "customer": c, "ts": ts}, "source": {"ts_ms": 1, "db": "inventory"},
                "op": "c", "ts_ms": 1_795_165_201_000 + n}
               for n, (c, ts) in enumerate(zip(["sally", "george", "sally"], nanos))]
    path = write_avro(tmp_path / "cdc.avro", DEBEZIUM_VALUE, records)
    stream = load_events(path, columns={"event_time": "after.ts", "key": "after.customer", "arrival_time": "ts_ms"},
                         time_unit={"ts_ms": "ms"})
    half_even = [q + (r > 500 or (r == 500 and q % 2 == 1)) for q, r in (divmod(ns, 1000) for ns in nanos)]
    assert sorted(stream.events["event_time"].tolist()) == sorted(half_even)
    assert set(stream.events["key"]) == {"sally", "george"}
    deleted = {**records[0], "before": records[0]["after"], "after": None, "op": "d"}
    path = write_avro(tmp_path / "cdc-delete.avro", DEBEZIUM_VALUE, [*records, deleted])
    with pytest.raises(InputError, match=r"cdc-delete.avro: column 'after.ts' row 4: the path is missing \('after' is "
                       r"null; 1 such row"):
        load_events(path, columns={"event_time": "after.ts"})


def test_local_timestamps_are_naive_and_take_the_zone(tmp_path):
    schema = {"type": "record", "name": "Trip", "fields": [
        {"name": "pickup", "type": {"type": "long", "logicalType": "local-timestamp-micros"}}]}
    wall = datetime(2026, 7, 1, 12, 0, 0, 250)
    micros = (wall - datetime(1970, 1, 1)).days * 86_400_000_000 + 12 * 3_600_000_000 + 250
    path = write_avro(tmp_path / "trips.avro", schema, [{"pickup": micros}])
    assert load_events(path, columns={"event_time": "pickup"}).events["event_time"].tolist() == [micros]
    berlin = load_events(path, columns={"event_time": "pickup"}, timezone="Europe/Berlin")
    assert berlin.events["event_time"].tolist() == [micros - 2 * 3_600_000_000]  # CEST is UTC+2 in July


def test_a_file_that_is_not_avro_is_one_line(tmp_path, capsys):
    path = tmp_path / "fake.avro"
    path.write_text("id,event_time\na,1\n")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: cannot be read as Avro" in err


def test_an_upload_reads_avro():
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(SINK_SCHEMA),
                    [{"id": "a", "device_id": "d", "ts": BASE_MS, "ingest_ts": None, "reading": 1.0}])
    upload = read_upload("up.avro", buffer.getvalue())
    assert upload.frame["id"].tolist() == ["a"] and str(upload.frame["ts"].dtype) == "datetime64[ms, UTC]"


def test_a_required_nested_record_is_flattened_with_its_timestamp_type(tmp_path):
    schema = {"type": "record", "name": "Envelope", "fields": [
        {"name": "source", "type": {"type": "record", "name": "Source", "fields": [
            {"name": "ts_ns", "type": {"type": "long", "logicalType": "timestamp-nanos"}},
            {"name": "table", "type": "string"}]}}]}
    nanos = [1_795_165_200_000_000_499, 1_795_165_200_000_001_501]
    path = write_avro(tmp_path / "src.avro", schema, [{"source": {"ts_ns": ns, "table": "orders"}} for ns in nanos])
    stream = load_events(path, columns={"event_time": "source.ts_ns", "key": "source.table"})
    assert stream.time_formats["event_time"].kind == "timestamp"  # typed, not a number guessed to be epoch ns
    assert stream.events["event_time"].tolist() == [(ns + 500) // 1000 for ns in nanos]  # no ties here
