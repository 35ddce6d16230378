"""Records as exports write them (issue 31): dotted paths into nested JSON objects and Parquet structs map to our
columns, as Kafka Connect, Debezium, Wikimedia EventStreams and GitHub's archive nest them; each case's expected
stream is the same records flattened by hand into a flat file, loaded the old way."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from explorer import InputError, load_events
from explorer.cli import main


def jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def flat_twin(tmp_path, records, fields):
    """The records flattened by hand (our column → a function of the record), as a flat JSON lines file."""
    return jsonl(tmp_path / "flat.jsonl", [{ours: get(r) for ours, get in fields.items()} for r in records])


GITHUB = [  # the shape of https://data.gharchive.org/2015-01-01-15.json.gz
    {"id": "2489651045", "type": "CreateEvent", "actor": {"id": 665991, "login": "petroav"},
     "repo": {"id": 28688495, "name": "petroav/6.828", "url": "https://api.github.com/repos/petroav/6.828"},
     "payload": {"ref": "master", "ref_type": "branch"}, "public": True, "created_at": "2015-01-01T15:00:03Z"},
    {"id": "2489651051", "type": "PushEvent", "actor": {"id": 3854017, "login": "rspt"},
     "repo": {"id": 28671719, "name": "rspt/rspt-theme", "url": "https://api.github.com/repos/rspt/rspt-theme"},
     "payload": {"push_id": 536863970, "size": 1}, "public": True, "created_at": "2015-01-01T15:00:01Z"},
    {"id": "2489651053", "type": "PushEvent", "actor": {"id": 6339799, "login": "izuzero"},
     "repo": {"id": 28270952, "name": "petroav/6.828", "url": "https://api.github.com/repos/petroav/6.828"},
     "payload": {"push_id": 536863972, "size": 1}, "public": True, "created_at": "2015-01-01T15:00:05Z"},
]

WIKIMEDIA = [  # mediawiki.recentchange from https://stream.wikimedia.org/v2/stream/recentchange
    {"$schema": "/mediawiki/recentchange/1.0.0", "id": 1804150413 + i, "type": "edit", "title": f"Page {i}",
     "timestamp": 1795165200 + i, "wiki": wiki, "server_name": f"{wiki[:2]}.wikipedia.org",
     "meta": {"uri": f"https://{wiki[:2]}.wikipedia.org/wiki/Page_{i}", "request_id": f"r{i}", "id": f"uuid-{i}",
              "dt": f"2026-11-20T09:00:{2 * i:02d}.{i}Z", "domain": f"{wiki[:2]}.wikipedia.org",
              "stream": "mediawiki.recentchange", "topic": "eqiad.mediawiki.recentchange", "partition": 0,
              "offset": 5_000_000_000 + i}}
    for i, wiki in enumerate(["enwiki", "dewiki", "enwiki", "frwiki"])
]


def debezium(op, before, after, ts_ms):
    """A Debezium change event as the JSON converter writes it with schemas on (``schema`` shortened)."""
    return {"schema": {"type": "struct", "name": "dbserver1.inventory.orders.Envelope"},
            "payload": {"before": before, "after": after, "op": op, "ts_ms": ts_ms,
                        "source": {"connector": "postgresql", "db": "inventory", "table": "orders",
                                   "ts_ms": ts_ms - 40, "lsn": 24023128}}}


DEBEZIUM = [
    debezium("c", None, {"id": 1001, "customer": "sally", "ts": 1795165200123}, 1795165200500),
    debezium("u", {"id": 1001, "customer": "sally", "ts": 1795165200123},
             {"id": 1001, "customer": "sally", "ts": 1795165201000}, 1795165203000),
    debezium("c", None, {"id": 1002, "customer": "george", "ts": 1795165199900}, 1795165204000),
]

KAFKA_CONNECT = [  # JsonConverter with schemas.enable=true: every record is {"schema": …, "payload": …}
    {"schema": {"type": "struct", "fields": [{"field": "device_id", "type": "string"}]},
     "payload": {"device_id": f"d{i % 2}", "ts": 1795165200000 + 700 * i, "reading": 20.5 + i}}
    for i in range(5)
]


@pytest.mark.parametrize("records, mapping, fields", [
    (GITHUB, {"key": "repo.name", "event_time": "created_at"},
     {"id": lambda r: r["id"], "key": lambda r: r["repo"]["name"], "event_time": lambda r: r["created_at"]}),
    (WIKIMEDIA, {"id": "meta.id", "event_time": "meta.dt", "key": "wiki", "offset": "meta.offset",
                 "partition": "meta.partition"},
     {"id": lambda r: r["meta"]["id"], "event_time": lambda r: r["meta"]["dt"], "key": lambda r: r["wiki"],
      "offset": lambda r: r["meta"]["offset"], "partition": lambda r: r["meta"]["partition"]}),
    (DEBEZIUM, {"event_time": "payload.after.ts", "arrival_time": "payload.ts_ms", "key": "payload.after.customer"},
     {"event_time": lambda r: r["payload"]["after"]["ts"], "arrival_time": lambda r: r["payload"]["ts_ms"],
      "key": lambda r: r["payload"]["after"]["customer"]}),
    (KAFKA_CONNECT, {"event_time": "payload.ts", "key": "payload.device_id", "value": "payload.reading"},
     {"event_time": lambda r: r["payload"]["ts"], "key": lambda r: r["payload"]["device_id"],
      "value": lambda r: r["payload"]["reading"]}),
], ids=["github-archive", "wikimedia-eventstreams", "debezium", "kafka-connect"])
def test_dotted_paths_read_nested_records_as_their_flat_twin(tmp_path, records, mapping, fields):
    nested = load_events(jsonl(tmp_path / "nested.jsonl", records), columns=mapping)
    flat = load_events(flat_twin(tmp_path, records, fields))
    pd.testing.assert_frame_equal(nested.events, flat.events)
    assert nested.time_formats == flat.time_formats
    assert nested.source_columns == mapping  # an export names the user's own paths


def test_a_literal_column_with_a_dot_wins_over_the_path(tmp_path):
    records = [{"meta.dt": 10 + i, "meta": {"dt": 500 + i}, "id": f"e{i}"} for i in range(3)]
    stream = load_events(jsonl(tmp_path / "dots.jsonl", records), columns={"event_time": "meta.dt"})
    assert stream.events["event_time"].tolist() == [r["meta.dt"] * 1_000_000 for r in records]


def test_a_key_with_a_dot_inside_an_object_is_matched_whole():
    from explorer.streams import stream_from_frame

    frame = pd.DataFrame({"headers": [{"kafka.ts": 7}, {"kafka.ts": 9}]})
    stream = stream_from_frame(frame, columns={"event_time": "headers.kafka.ts"})
    assert stream.events["event_time"].tolist() == [7_000_000, 9_000_000]


def test_a_path_some_rows_lack_is_refused_naming_file_path_and_row(tmp_path, capsys):
    """A Debezium delete has ``after`` null: the path payload.after.ts is missing there, which is named as such
    (not as an empty time), with the file and the row."""
    deleted = debezium("d", {"id": 1002, "customer": "george", "ts": 1795165199900}, None, 1795165205000)
    path = jsonl(tmp_path / "cdc.jsonl", [*DEBEZIUM, deleted, deleted])
    with pytest.raises(InputError) as info:
        load_events(path, columns={"event_time": "payload.after.ts"})
    assert str(info.value) == (f"{path}: column 'payload.after.ts' row 4: the path is missing ('payload.after' is "
                               "null; 2 such row(s))")
    assert main(["validate", str(path), "--event-time-col", "payload.after.ts"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "row 4" in err and "Traceback" not in err
    path = jsonl(tmp_path / "gh.jsonl", [GITHUB[0], {k: v for k, v in GITHUB[1].items() if k != "repo"} | {
        "repo": {"id": 1}}])
    with pytest.raises(InputError, match=r"column 'repo.name' row 2: the path is missing \('repo' has no 'name'"):
        load_events(path, columns={"key": "repo.name", "event_time": "created_at"})


def test_a_path_no_row_has_is_a_missing_column_listing_the_nested_fields(tmp_path):
    path = jsonl(tmp_path / "gh.jsonl", GITHUB)
    with pytest.raises(InputError) as info:
        load_events(path, columns={"key": "repo.title", "event_time": "created_at"})
    message = str(info.value)
    assert "mapped column(s) 'repo.title' not in the file" in message
    assert "repo.name" in message and "actor.login" in message  # what the user could have meant


def test_parquet_structs_are_read_by_path_with_their_own_types(tmp_path):
    """A struct's timestamp keeps its type (pandas alone turns it into a dict holding bare integers)."""
    instants = pd.to_datetime(["2026-11-20T09:00:00.001", "2026-11-20T09:00:02.5", "2026-11-20T09:00:01"], utc=True,
                              format="ISO8601")
    after = pa.StructArray.from_arrays(
        [pa.array(["sally", "george", "sally"]), pa.array(instants, type=pa.timestamp("ms", tz="UTC"))],
        names=["customer", "ts"])
    table = pa.table({"payload": pa.StructArray.from_arrays([after, pa.array([5, 6, 7])], names=["after", "n"]),
                      "payload.n": pa.array([1, 2, 3])})  # a literal dotted column beside the struct's field
    pq.write_table(table, tmp_path / "cdc.parquet")
    stream = load_events(tmp_path / "cdc.parquet", columns={"event_time": "payload.after.ts",
                                                            "key": "payload.after.customer", "value": "payload.n"})
    flat = pd.DataFrame({"event_time": instants.astype("datetime64[ms, UTC]"),
                         "key": ["sally", "george", "sally"], "value": [1, 2, 3]})
    flat.to_parquet(tmp_path / "flat.parquet")
    expected = load_events(tmp_path / "flat.parquet")
    pd.testing.assert_frame_equal(stream.events, expected.events)
    assert stream.time_formats["event_time"].kind == "timestamp"


def test_an_upload_offers_nested_fields_and_guesses_them():
    """The upload form's boxes list Upload.columns: a Kafka Connect envelope offers payload.ts and the rest, and
    the usual names are found inside it (ts → event_time, device_id → key)."""
    from explorer.streams import stream_from_frame
    from explorer.streams.upload import read_upload

    upload = read_upload("connect.jsonl", "".join(json.dumps(r) + "\n" for r in KAFKA_CONNECT).encode())
    assert {"payload.ts", "payload.device_id", "payload.reading", "schema.type"} <= set(upload.columns)
    mapping = upload.guess_mapping()
    assert mapping == {"event_time": "payload.ts", "key": "payload.device_id"}
    stream = stream_from_frame(upload.frame, name="connect.jsonl", columns=mapping)
    assert stream.events["event_time"].tolist() == [r["payload"]["ts"] * 1000 for r in KAFKA_CONNECT]
