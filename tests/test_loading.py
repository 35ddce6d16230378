"""Bad input gets one clear sentence naming file, column and row; good input loads in arrival order."""

import json
import re
import subprocess
import sys

import pandas as pd
import pytest

from explorer import InputError, load_events
from explorer.streams import stream_from_frame
from explorer.timeutil import MICROS


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name,text,expected", [
    ("empty.csv", "", "the file is empty"),
    ("header.csv", "id,event_time\n", "no events"),
    ("nocol.csv", "id,ts\na,1\n", "missing column 'event_time' (the file has id, ts)"),  # its own names
    ("nan.csv", "id,event_time\na,1\nb,\nc,3\n", "column 'event_time' row 2: empty or NaN"),
    ("nan2.csv", "id,event_time\na,1\nb,NaN\n", "row 2: empty or NaN"),
    ("mixed.csv", "id,event_time\na,1\nb,2026-01-01T00:00:00Z\n", "mixes time formats: row 1 is a number"),
    ("garbage.csv", "id,event_time\na,2026-01-01T00:00:00Z\nb,yesterday\n", "row 2: cannot read 'yesterday'"),
    ("dup.csv", "id,event_time\na,1\nb,2\na,3\n", "duplicate id 'a' in rows 1, 3"),
    ("kind.csv", "id,kind,event_time\na,event,1\nb,mark,2\n", "column 'kind' row 2: 'mark' is neither 'event' nor"),
    ("marks.csv", "id,kind,event_time\n,watermark,1\n", "every row is a watermark"),
    ("markid.csv", "id,kind,event_time\n,watermark,1\n,event,2\n", "column 'id' row 2: empty id"),
    ("value.csv", "id,event_time,value\na,1,2.5\nb,2,lots\n", "column 'value' row 2: 'lots' is not a number"),
    ("batch.csv", "id,event_time,batch\na,1,1\nb,2,x\n", "column 'batch' row 2"),
    ("half.jsonl", '{"id": "a", "event_time": 1, "batch": 1}\n{"id": "b", "event_time": 2, "batch": 1.5}\n',
     "column 'batch' row 2: 1.5 is not a whole number"),
    ("offset.csv", "id,event_time,partition,offset\na,1,0,7\nb,2,0,7\n", "column 'offset' rows 1, 2: partition 0 offset 7 twice"),
    ("zones.csv", "id,event_time\na,2026-01-01T00:00:00Z\nb,2026-01-01T00:00:01\n", "with and without a time zone"),
    ("bad.jsonl", '{"id": "a", "event_time": 1}\n{"id": "b", "event_time": \n', "line 2 is not valid JSON"),
    ("types.txt", "x", "unknown file type '.txt'"),
])
def test_bad_input_is_named(tmp_path, name, text, expected):
    path = write(tmp_path, name, text)
    with pytest.raises(InputError) as info:
        load_events(path)
    assert expected in str(info.value)
    assert name in str(info.value)


def test_missing_file_and_size_limit(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        load_events(tmp_path / "nope.csv")
    path = write(tmp_path, "big.csv", "id,event_time\n" + "".join(f"e{i},{i}\n" for i in range(1000)))
    with pytest.raises(InputError, match="over the .* MiB limit"):
        load_events(path, max_bytes=1000)


def test_cli_exits_2_with_one_line(tmp_path):
    path = write(tmp_path, "dup.csv", "id,event_time\na,1\na,2\n")
    proc = subprocess.run([sys.executable, "-m", "explorer", "run", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "duplicate id 'a'" in proc.stderr


def test_formats_agree(tmp_path):
    frame = pd.DataFrame({"id": ["a", "b", "c"], "key": ["k", "k", "j"], "event_time": [3.5, 1.0, 2.0],
                          "arrival_time": [4.0, 2.0, 3.0]})
    frame.to_csv(tmp_path / "s.csv", index=False)
    frame.to_json(tmp_path / "s.jsonl", orient="records", lines=True)
    frame.to_parquet(tmp_path / "s.parquet")
    loaded = [load_events(tmp_path / f"s.{ext}").events for ext in ("csv", "jsonl", "parquet")]
    for other in loaded[1:]:
        pd.testing.assert_frame_equal(loaded[0], other)
    assert loaded[0]["id"].tolist() == ["b", "c", "a"]  # arrival order
    assert loaded[0]["event_time"].tolist() == [1 * MICROS["s"], 2 * MICROS["s"], 3_500_000]


def test_units_iso_and_column_mapping(tmp_path):
    ms = write(tmp_path, "ms.csv", "id,ts\na,1500\nb,2500\n")
    stream = load_events(ms, time_unit="ms", columns={"event_time": "ts"})
    assert stream.events["event_time"].tolist() == [1_500_000, 2_500_000]
    assert stream.events["arrival_time"].tolist() == [1_500_000, 2_500_000]  # no arrival: newest seen so far
    iso = write(tmp_path, "iso.csv", "id,event_time\na,1970-01-01T00:00:10Z\nb,1970-01-01T00:00:12.5+00:00\n")
    stream = load_events(iso)
    assert stream.absolute and stream.events["event_time"].tolist() == [10_000_000, 12_500_000]


def test_no_arrival_means_file_order(tmp_path):
    path = write(tmp_path, "order.csv", "id,event_time\na,5\nb,1\nc,7\n")
    events = load_events(path).events
    assert events["id"].tolist() == ["a", "b", "c"]
    assert (events["arrival_time"] / MICROS["s"]).tolist() == [5, 5, 7]


def test_directory_of_files_is_one_stream(tmp_path):
    (tmp_path / "d").mkdir()
    write(tmp_path / "d", "1.csv", "id,event_time,arrival_time\na,1,3\nb,2,1\n")
    write(tmp_path / "d", "2.jsonl", json.dumps({"id": "c", "event_time": 3, "arrival_time": 2}) + "\n")
    stream = load_events(tmp_path / "d")
    assert stream.events["id"].tolist() == ["b", "c", "a"]
    write(tmp_path / "d", "3.csv", "id,event_time,arrival_time\na,9,9\n")
    with pytest.raises(InputError, match="duplicate id 'a'"):
        load_events(tmp_path / "d")


KAFKA = {"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id", "partition": "partition"}


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_a_kafka_export_reads_the_same_in_every_time_format_with_no_unit_flags(tmp_path, suffix):
    """ts ISO with ms and Z beside ingest_ts in epoch ms (Kafka's own), both epoch ms, or both ISO with
    offsets: one stream, the same Result. (Epoch ms used to be read as seconds, and ISO could not sit beside
    numbers.)"""
    from explorer import preset, run
    from explorer.cli import main

    streams = {}
    for times in ("mixed", "epoch-ms", "iso"):
        path = tmp_path / f"{times}{suffix}"
        assert main(["generate", "kafka-export", "--times", times, "--out", str(path)]) == 0
        streams[times] = load_events(path, columns=KAFKA)
    reference = streams["mixed"]
    assert reference.absolute and len(reference) > 40_000
    assert reference.time_formats["event_time"].describe() == "ISO-8601 date-times (with a UTC offset)"
    assert reference.time_formats["arrival_time"].describe() == "Unix epoch milliseconds (detected)"
    assert streams["iso"].time_formats["arrival_time"].kind == "iso"
    first = reference.events.iloc[0]
    assert first["event_time"] == 1_795_165_200_007_000  # 2026-11-20T09:00:00.007Z in µs
    for times, stream in streams.items():
        pd.testing.assert_frame_equal(stream.events, reference.events, obj=times)
    config = preset("voltsp", delay=5_000_000, idle_timeout=60_000_000)
    expected = run(reference, config).metrics
    assert run(streams["iso"], config).metrics == run(streams["epoch-ms"], config).metrics == expected


@pytest.mark.parametrize("unit, scale", [("s", 1), ("ms", 10**3), ("us", 10**6), ("ns", 10**9)])
def test_epoch_numbers_are_read_by_their_magnitude(unit, scale):
    seconds = [1_795_165_200, 1_795_165_201, 1_795_165_230]
    stream = stream_from_frame(pd.DataFrame({"event_time": [s * scale for s in seconds]}))
    assert stream.time_formats["event_time"].kind == "epoch" and stream.time_formats["event_time"].unit == unit
    assert stream.events["event_time"].tolist() == [s * 10**6 for s in seconds]
    assert stream.time_unit == ("us" if unit == "ns" else unit)  # outputs count the file's unit, at most µs fine


def test_small_numbers_are_relative_seconds_and_a_unit_can_be_given_per_column():
    frame = pd.DataFrame({"event_time": [0, 1.5, 3], "arrival_time": [500, 2000, 3100]})
    stream = stream_from_frame(frame, time_unit={"arrival_time": "ms"})
    assert not stream.absolute
    assert stream.events["event_time"].tolist() == [0, 1_500_000, 3_000_000]
    assert stream.events["arrival_time"].tolist() == [500_000, 2_000_000, 3_100_000]
    assert stream.time_formats["arrival_time"].describe() == "milliseconds (relative, given)"


def test_typed_parquet_times_are_read_in_their_own_units(tmp_path):
    """Arrow timestamps with and without a zone and durations: each by its own unit (a µs timestamp used to
    come out as −9.22e12 s, a ms one 1000× too large)."""
    instant = pd.Timestamp("2026-11-20T09:00:00.250Z")
    frame = pd.DataFrame({
        "event_time": pd.Series([instant, instant + pd.Timedelta(seconds=2)]).astype("datetime64[ms, UTC]"),
        "arrival_time": pd.Series([instant, instant + pd.Timedelta(seconds=3)]).dt.tz_convert("Europe/Paris")
        .astype("datetime64[us, Europe/Paris]"),
    })
    frame.to_parquet(tmp_path / "typed.parquet")
    stream = load_events(tmp_path / "typed.parquet")
    micros = (instant - pd.Timestamp("1970-01-01", tz="UTC")) // pd.Timedelta(microseconds=1)
    assert stream.events["event_time"].tolist() == [micros, micros + 2_000_000]
    assert stream.events["arrival_time"].tolist() == [micros, micros + 3_000_000]
    durations = pd.DataFrame({"event_time": pd.to_timedelta([0, 1500], unit="ms")})
    durations.to_parquet(tmp_path / "durations.parquet")
    assert load_events(tmp_path / "durations.parquet").events["event_time"].tolist() == [0, 1_500_000]


@pytest.mark.parametrize("frame, words", [
    (pd.DataFrame({"event_time": [True, False]}), "true/false"),
    (pd.DataFrame({"event_time": [1.0, 1e20]}), "row 2: time 1e+20 s is out of range"),
    (pd.DataFrame({"event_time": ["2026-11-20T09:00:00", "2026-11-20T09:00:01"],
                   "arrival_time": ["2026-11-20T09:00:00Z", "2026-11-20T09:00:01Z"]}), "event_time has no time zone"),
    (pd.DataFrame({"event_time": ["2026-11-20T09:00:00Z"], "arrival_time": [3.5]}),
     "event_time holds ISO-8601 date-times (with a UTC offset) but arrival_time holds seconds"),
])
def test_times_that_cannot_be_read_right_are_refused_in_words(frame, words):
    with pytest.raises(InputError, match=re.escape(words)):
        stream_from_frame(frame, name="f.csv")
