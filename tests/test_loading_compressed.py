"""Compressed text files: .gz, .bz2 and .zst around a CSV or JSON (lines or an array), read as they are
decompressed, with the limits, checks and one-line refusals of the plain file (issue 31)."""

from __future__ import annotations

import bz2
import gzip
import json

import pandas as pd
import pyarrow as pa
import pytest

from explorer import InputError, load_events
from explorer.cli import main
from explorer.streams import files

CODECS = {".gz": gzip.compress, ".bz2": bz2.compress, ".zst": lambda data: pa.compress(data, "zstd", asbytes=True)}
ROWS = [{"id": f"e{i}", "key": "k" if i % 3 else "j", "event_time": f"2026-11-20T09:{i // 60:02d}:{i % 60:02d}.5Z",
         "arrival_time": f"2026-11-20T09:{(i + 7) // 60:02d}:{(i + 7) % 60:02d}Z"} for i in range(300)]
CSV = "id,key,event_time,arrival_time\n" + "".join(f"{r['id']},{r['key']},{r['event_time']},{r['arrival_time']}\n"
                                                   for r in ROWS)
LINES = "".join(json.dumps(r) + "\n" for r in ROWS)


def compressed(path, text: str, suffix: str, parts: int = 1):
    """``text`` compressed into ``path`` + ``suffix``, in ``parts`` streams one after the other (as pbzip2 and
    zstd's --adapt and many writers leave them: a reader must go on after the first)."""
    data = text.encode()
    cut = [len(data) * i // parts for i in range(parts + 1)]
    out = path.with_name(path.name + suffix)
    out.write_bytes(b"".join(CODECS[suffix](data[a:b]) for a, b in zip(cut, cut[1:])))
    return out


def read(path, **options):
    stream = load_events(path, **options)
    return stream.events, {k: v.describe() for k, v in stream.time_formats.items()}


@pytest.mark.parametrize("kind, text", [("csv", CSV), ("jsonl", LINES), ("json", json.dumps(ROWS, indent=1)),
                                        ("spaced.csv", CSV.replace(",", ", "))])  # pandas reads a spaced CSV
@pytest.mark.parametrize("suffix", list(CODECS))
def test_the_same_events_compressed_read_as_the_plain_file(tmp_path, kind, text, suffix):
    plain = tmp_path / f"events.{kind}"
    plain.write_text(text)
    want_events, want_formats = read(plain)
    assert len(want_events) == 300
    for parts in (1, 3):
        got_events, got_formats = read(compressed(tmp_path / f"p{parts}.{kind}", text, suffix, parts))
        pd.testing.assert_frame_equal(got_events, want_events)
        assert got_formats == want_formats


def test_csv_and_json_lines_in_every_compression_are_one_stream(tmp_path):
    """The same events as .csv, .csv.gz, .csv.bz2, .csv.zst and .jsonl.* give identical streams."""
    plain = tmp_path / "plain.csv"
    plain.write_text(CSV)
    want = load_events(plain).events
    for suffix in CODECS:
        for kind, text in (("csv", CSV), ("jsonl", LINES)):
            pd.testing.assert_frame_equal(load_events(compressed(tmp_path / f"e.{kind}", text, suffix)).events, want)


def test_a_directory_reads_its_compressed_parts(tmp_path, capsys):
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text("id,event_time\n" + "".join(f"a{i},{i}\n" for i in range(50)))
    compressed(folder / "b.csv", "id,event_time\n" + "".join(f"b{i},{i + 50}\n" for i in range(50)), ".bz2")
    compressed(folder / "c.jsonl", "".join(json.dumps({"id": f"c{i}", "event_time": i + 100}) + "\n"
                                           for i in range(50)), ".zst")
    assert main(["validate", str(folder)]) == 0
    assert "OK, 150 events" in capsys.readouterr().out
    (folder / "d.csv.xz").write_bytes(b"\xfd7zXZ\x00")
    assert main(["validate", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(folder / "d.csv.xz") in err and ".gz, .bz2 or .zst" in err


def one_line_refusal(capsys, path, *words):
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, (word, err)


@pytest.mark.parametrize("suffix, name", [(".gz", "gzip"), (".bz2", "bzip2"), (".zst", "Zstandard")])
@pytest.mark.parametrize("kind, text", [("csv", CSV), ("jsonl", LINES)])
def test_a_truncated_or_corrupt_stream_is_one_line_naming_the_file(tmp_path, capsys, suffix, name, kind, text):
    whole = compressed(tmp_path / f"whole.{kind}", text * 20, suffix)
    cut = tmp_path / f"cut.{kind}{suffix}"
    cut.write_bytes(whole.read_bytes()[:len(whole.read_bytes()) // 2])
    one_line_refusal(capsys, cut, f"cannot be read as {name}")
    garbage = tmp_path / f"garbage.{kind}{suffix}"
    garbage.write_bytes(b"this was never compressed\n" * 10)
    one_line_refusal(capsys, garbage, f"cannot be read as {name}")


@pytest.mark.parametrize("suffix", list(CODECS))
def test_the_text_limit_and_the_byte_checks_hold_inside_the_compression(tmp_path, suffix):
    """The size limit applies to the text, not the compressed file (a 1 KiB .zst can hold a GiB of zeros), and a
    NUL byte is found by its line, as in a plain file."""
    path = compressed(tmp_path / "big.csv", CSV * 40, suffix)
    assert path.stat().st_size < 100_000 < len(CSV) * 40
    with pytest.raises(InputError, match="of text, over the limit"):
        files.read_checked(path, max_bytes=100_000)
    nul = compressed(tmp_path / "nul.csv", CSV + "z,k,1\x00,2\n", suffix)
    with pytest.raises(InputError, match="NUL byte at offset .*, line 302"):
        load_events(nul)
    short = compressed(tmp_path / "short.csv", CSV + "z,k,2026-11-20T10:00:00Z\n", suffix)
    with pytest.raises(InputError, match=r"row 301 \(line 302\) has 3 fields; the header has 4"):
        load_events(short)


def test_other_compressions_are_refused_by_name(tmp_path, capsys):
    for name in ("events.csv.xz", "events.parquet.zst"):
        path = tmp_path / name
        path.write_bytes(b"\x00\x01")
        one_line_refusal(capsys, path, "unknown file type", ".gz, .bz2 or .zst")


@pytest.mark.parametrize("suffix", list(CODECS))
def test_the_text_is_decompressed_a_chunk_at_a_time(tmp_path, monkeypatch, suffix):
    """Never the whole file at once: the checks read it a chunk at a time, as they read a plain file."""
    monkeypatch.setattr(files, "CHUNK", 4096)
    path = compressed(tmp_path / "big.csv", CSV * 10, suffix)
    sizes = [len(chunk) for chunk in files._chunks(path, files.file_format(path)[1])]
    assert max(sizes) <= 4096 and sum(sizes) == len(CSV.encode()) * 10
