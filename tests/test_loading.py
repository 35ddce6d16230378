"""Bad input gets one clear sentence naming file, column and row; good input loads in arrival order."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from explorer import InputError, load_events
from explorer.timeutil import MICROS


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name,text,expected", [
    ("empty.csv", "", "the file is empty"),
    ("header.csv", "id,event_time\n", "no events"),
    ("nocol.csv", "id,ts\na,1\n", "missing column 'event_time'"),
    ("nan.csv", "id,event_time\na,1\nb,\nc,3\n", "column 'event_time' row 2: empty or NaN"),
    ("nan2.csv", "id,event_time\na,1\nb,NaN\n", "row 2: empty or NaN"),
    ("mixed.csv", "id,event_time\na,1\nb,2026-01-01T00:00:00Z\n", "mixes time formats: row 1 is a number"),
    ("garbage.csv", "id,event_time\na,2026-01-01T00:00:00Z\nb,yesterday\n", "row 2: cannot read 'yesterday'"),
    ("dup.csv", "id,event_time\na,1\nb,2\na,3\n", "duplicate id 'a' in rows 1, 3"),
    ("value.csv", "id,event_time,value\na,1,2.5\nb,2,lots\n", "column 'value' row 2: 'lots' is not a number"),
    ("batch.csv", "id,event_time,batch\na,1,1\nb,2,x\n", "column 'batch' row 2"),
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
    assert stream.iso_times and stream.events["event_time"].tolist() == [10_000_000, 12_500_000]


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
