"""JSON array files (``[ {...}, {...} ]``) are read as well as JSON lines (issue 31: "line 1 is not a JSON
object"), element by element, and every refusal names the row and its line."""

from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

from explorer import InputError, load_events
from explorer.streams import json_records
from explorer.streams.upload import read_upload

RECORDS = [{"id": f"e{i}", "key": "k" if i % 3 else "j", "event_time": 1_795_165_200_000 + 1_337 * i,
            "arrival_time": 1_795_165_200_500 + 1_500 * i, "meta": {"dt": f"2026-11-20T09:00:{i:02d}Z"}}
           for i in range(40)]


def lines_twin(tmp_path):
    path = tmp_path / "twin.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    return load_events(path, columns={"event_time": "meta.dt"}).events


@pytest.mark.parametrize("name, indent", [("a.json", 2), ("a.jsonl", None), ("a.ndjson", 4), ("a.json.gz", 1)])
def test_an_array_file_reads_as_its_json_lines_twin(tmp_path, name, indent):
    text = "\n\n " + json.dumps(RECORDS, indent=indent) + "\n"
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    pd.testing.assert_frame_equal(load_events(path, columns={"event_time": "meta.dt"}).events, lines_twin(tmp_path))


@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_elements_and_numbers_cut_by_a_chunk_are_read_whole(tmp_path, monkeypatch, chunk):
    """The array is read a chunk at a time: an element, a string or a number inside it that the chunk's end
    cuts must still be decoded whole."""
    monkeypatch.setattr(json_records, "CHUNK", chunk)
    path = tmp_path / "a.json"
    path.write_text(json.dumps(RECORDS))
    pd.testing.assert_frame_equal(load_events(path, columns={"event_time": "meta.dt"}).events, lines_twin(tmp_path))


def line_of(text, needle):
    return text[:text.index(needle)].count("\n") + 1


@pytest.mark.parametrize("text, needle, words", [
    ('[\n {"event_time": 1},\n 7,\n {"event_time": 3}\n]', "7", "row 2 (line {line}) of the JSON array is not a JSON "
                                                               "object"),
    ('[\n {"event_time": 1},\n {"event_time": 2},\n {"event_time": }\n]', "}\n]",
     "row 3 (line {line}) of the JSON array is not valid JSON (Expecting value)"),
    ('[\n {"event_time": 1},\n {"event_time": 2}', None, "the JSON array is not closed after row 2"),
    ('[\n {"event_time": 1},\n {"event_time": 2},\n', None, "the JSON array ends after a ','"),
    ('[\n {"event_time": 1} {"event_time": 2}]', None, "not closed after row 1 (line 2): '{' where ',' or ']' belongs"),
    ('[{"event_time": 1}]\n[{"event_time": 2}]', "[{\"event_time\": 2}", "text after the JSON array's closing ']' "
                                                                         "(line {line})"),
    ('[]', None, "no events"),
])
def test_a_broken_array_is_refused_naming_the_row_and_line(tmp_path, monkeypatch, text, needle, words):
    monkeypatch.setattr(json_records, "CHUNK", 5)  # the same words whatever the chunks
    path = tmp_path / "broken.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_events(path)
    expected = words.replace("{line}", str(line_of(text, needle)) if needle else "")
    assert str(info.value).startswith(f"{path}: ") and expected in str(info.value), str(info.value)


def test_an_upload_reads_an_array_too():
    upload = read_upload("up.json", json.dumps(RECORDS[:3], indent=2).encode())
    assert upload.frame["id"].tolist() == ["e0", "e1", "e2"]
