"""Column-wise loading (issue 31: ``streams/columnar.py``, Arrow's CSV reader) reads every file exactly as the
per-cell code does: the same events, times, ids, keys, order, codes and formats, and the same one-line refusal,
because it only takes the clean cases and hands everything else to that code. Each file here is loaded twice,
once as shipped and once with every fast path switched off, and the two must agree."""

import random

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from explorer import InputError, load_events
from explorer.streams import columnar, columns, files, times
from explorer.streams.columnar import all_distinct


@pytest.fixture
def per_cell(monkeypatch):
    """A switch that turns every column-wise path off, so loading reads cell by cell, with pandas' CSV reader."""
    def off():
        monkeypatch.setattr(files, "read_csv_columns", lambda path, gzipped: None)
        monkeypatch.setattr(columnar, "strings", lambda series: None)
        monkeypatch.setattr(columnar, "text_codes", lambda series: None)
        monkeypatch.setattr(times, "_whole_column", lambda *args: None)
        monkeypatch.setattr(columns, "_clean_ids", lambda column, is_mark: None)
    return off


def both(per_cell, path, **options):
    """The stream (or the refusal) read column-wise, then cell by cell."""
    out = []
    for switch in (lambda: None, per_cell):
        switch()
        try:
            out.append(load_events(path, **options))
        except InputError as exc:
            out.append(str(exc))
    return out


def assert_same(fast, slow):
    if isinstance(slow, str):
        assert fast == slow
        return
    assert not isinstance(fast, str), fast
    pd.testing.assert_frame_equal(fast.events, slow.events)
    pd.testing.assert_frame_equal(fast.watermarks, slow.watermarks)
    assert fast.time_formats == slow.time_formats
    assert (fast.has_ids, fast.has_keys, fast.has_batch, fast.arrivals_raised) == \
        (slow.has_ids, slow.has_keys, slow.has_batch, slow.arrivals_raised)
    for column in ("key", "partition"):  # the codes loading keeps are the ones the kernel would compute
        codes, names = fast.codes(column)
        expected_codes, expected_names = pd.factorize(fast.events[column].to_numpy(dtype=object), sort=True)
        assert names.tolist() == list(expected_names) and codes.tolist() == expected_codes.tolist()


CSV = {
    "epoch-ms": "id,key,event_time,arrival_time\ne1,a,1767225600000,1767225600500\ne2, b ,1767225600100,"
                "1767225600200\ne3,a,1767225600050,1767225600200\ne4,,1767225600300,1767225600200\n",
    "iso-zoned": "id,key,event_time,arrival_time\nx,k,2026-01-01T00:00:01.123456789Z,2026-01-01T00:00:02Z\n"
                 "y,k,2026-01-01 05:30:00+05:30,2026-01-01T00:00:02Z\nz,j,2026-01-01T00:00:00.0000005Z,"
                 "2026-01-01T00:00:01.0000015Z\n",
    "iso-naive": "id,event_time\na,2026-03-08T01:30:00\nb,2026-03-08T03:30:00\nc,2026-11-01T01:30:00\n",
    "iso-odd": "id,event_time\na,2026-01-01T00:00Z\nb,2026-01-01T00:00:01z\n",
    "iso-leap": "id,event_time\na,2026-02-29T00:00:00Z\n",
    "decimals": "id,event_time\na,1.5\nb,2.25\nc,0.000001\n",
    "relative": "id,event_time,arrival_time\na,3,4\nb,1,2\nc,2,2\nd,0,2\n",
    "padded": "id,key,event_time\n a ,NaN,5\nb\t,None,6\n\u3000c,\u4e2d,7\n",
    "kinds": "id,kind,event_time,arrival_time\na,event,5,5\n,WATERMARK,4,5\nb,,3,5\n,watermark,9,6\nc,Event,1,7\n",
    "batches": "id,event_time,arrival_time,batch,partition,offset,value\na,1,9,2,p0,4,1.5\nb,2,3,1,p1,7,\n"
               "c,3,1,2,p0,5,-2\n",
    "no-ids": "key,event_time\nk,5\nk,3\nj,9\n",
    "blank-time": "id,event_time\na,1\nb, \n",
    "blank-id": "id,event_time\na,1\n  ,2\n",
    "dup-id": "id,event_time\na,1\nb,2\n a,3\n",
    "mixed": "id,event_time\na,2026-01-01T00:00:00Z\nb,2026-01-01T00:00:00\n",
    "words": "id,event_time\na,2026-01-01T00:00:00Z\nb,yesterday\n",
    "plus": "id,event_time\na,+5\nb,6\n",
    "huge": "id,event_time\na,9223372036854775807\n",
    "spaced": "id, key, event_time\na, \"k, j\", 5\n",
    "short-row": "id,key,event_time\na,k,1\nb,k\n",
    "long-row": "id,key,event_time\na,k,1,2\n",
    "quoted-newline": "id,key,event_time\na,\"k\nj\",1\n",
    "two-names": "id,event_time,event_time\na,1,2\n",
    "bom": "\ufeffid,event_time\na,1\n",
    "blank-lines": "id,event_time\n\na,1\n\nb,2\n",
}


@pytest.mark.parametrize("name", sorted(CSV))
def test_csv_reads_the_same_column_wise_and_cell_by_cell(tmp_path, per_cell, name):
    path = tmp_path / f"{name}.csv"
    path.write_text(CSV[name], encoding="utf-8")
    assert_same(*both(per_cell, path))


@pytest.mark.parametrize("zone", [None, "America/New_York"])
def test_naive_iso_in_a_zone_reads_the_same(tmp_path, per_cell, zone):
    path = tmp_path / "naive.csv"
    path.write_text(CSV["iso-naive"].replace("2026-03-08T03:30:00", "2026-03-08T04:30:00"))
    assert_same(*both(per_cell, path, timezone=zone))


def test_csv_that_is_not_utf8_past_its_head_is_refused_the_same(tmp_path, per_cell):
    path = tmp_path / "late.csv"
    path.write_bytes(b"id,event_time\n" + b"a,1\n" * 40_000 + b"b\xff,2\n")
    fast, slow = both(per_cell, path)
    assert isinstance(slow, str) and fast == slow


def test_parquet_and_json_read_the_same(tmp_path, per_cell):
    rng = random.Random(5)
    n = 200
    frame = pd.DataFrame({
        "id": [f" r{i}" for i in range(n)],
        "key": pd.array([rng.choice(["a", "b", " c", None, "nan", "\u4e2d"]) for _ in range(n)], dtype=object),
        "device": np.array([rng.randint(-3, 3) for _ in range(n)], dtype=np.int64),
        "event_time": [f"2026-01-01T00:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z" for _ in range(n)],
        "arrival_time": [1_767_225_600_000 + rng.randint(0, 4_000_000) for _ in range(n)],
        "ts": pd.to_datetime([1_767_225_600_000_000_123 + rng.randint(0, 10**12) for _ in range(n)], utc=True),
    })
    frame.to_parquet(tmp_path / "s.parquet")
    frame.drop(columns=["ts"]).to_json(tmp_path / "s.jsonl", orient="records", lines=True)
    for path in (tmp_path / "s.parquet", tmp_path / "s.jsonl"):
        assert_same(*both(per_cell, path, time_unit={"arrival_time": "ms"}))
        assert_same(*both(per_cell, path, columns={"key": "device", "event_time": "arrival_time"}, time_unit="ms"))
    assert_same(*both(per_cell, tmp_path / "s.parquet", columns={"event_time": "ts", "arrival_time": "ts"}))


def test_random_files_read_the_same(tmp_path, per_cell):
    """Shuffled rows with many ties at one arrival instant, batches, watermark rows and odd cells."""
    rng = random.Random(11)
    cells = ["1", "2", "2", "3", "10", "007", "-1", " 4 ", "2.5", "", "x"]
    for trial in range(30):
        n = rng.randint(1, 25)
        header = ["id", "key", "kind", "event_time", "arrival_time"] + (["batch"] if trial % 2 else [])
        lines = [",".join(header)]
        for i in range(n):
            kind = rng.choice(["", "event", "event", "watermark"])
            row = ["" if kind == "watermark" and rng.random() < 0.5 else f"i{i}", rng.choice(["a", "b", " a", ""]),
                   kind, rng.choice(cells[:7]) if rng.random() < 0.9 else rng.choice(cells),
                   rng.choice(["1", "2", "2", "3"])] + ([rng.choice(["1", "2"])] if trial % 2 else [])
            lines.append(",".join(row))
        path = tmp_path / f"r{trial}.csv"
        path.write_text("\n".join(lines) + "\n")
        assert_same(*both(per_cell, path))


def test_distinct_strings_are_told_apart_by_their_hashes():
    rng = random.Random(3)
    for _ in range(500):
        values = ["".join(rng.choice("ab\u00e9\u4e2d ") for _ in range(rng.randint(0, rng.choice([3, 12, 30]))))
                  for _ in range(rng.randint(0, 30))]
        chunks, at = [], 0
        while at < len(values):  # chunks, some of them slices of a longer array (an offset into its buffers)
            end = rng.randint(at + 1, len(values))
            part = values[at:end]
            chunks.append(pa.array(["pad", *part, "tail"], type=pa.string()).slice(1, len(part))
                          if rng.random() < 0.5 else pa.array(part, type=pa.string()))
            at = end
        assert all_distinct(pa.chunked_array(chunks, type=pa.string())) == (len(set(values)) == len(values))


def test_iso_text_of_one_shape_is_told_apart_as_the_regex_tells_it():
    """``_one_shape`` says True exactly when every cell matches ISO and is spelled as the first, digit for digit:
    on cells made from a valid first by changing digits (a year 1677 or 2262, an hour 24, a minute 60 among them)
    and now and then a character, in chunks that are slices of longer arrays, and with a million-row chunk."""
    import re

    rng = random.Random(5)
    bases = ["2026-01-01T00:00:00Z", "1999-12-31 23:59:59.123456789+05:30", "2261-06-30T12:30:45.5", "1678-01-01T00:00:00"]
    for _ in range(1500):
        base = rng.choice(bases)
        values = []
        for _ in range(rng.randint(1, 12)):
            cell = [rng.choice("0123456789") if c.isdigit() and rng.random() < 0.04 else c for c in base]
            if rng.random() < 0.1:
                cell[rng.randrange(len(cell))] = rng.choice(" T:-.Z+x9")
            if rng.random() < 0.03:
                del cell[rng.randrange(len(cell))]
            values.append("".join(cell))
        chunks, at = [], 0
        while at < len(values):
            end = rng.randint(at + 1, len(values))
            part = values[at:end]
            chunks.append(pa.array(["pad", *part], type=pa.string()).slice(1) if rng.random() < 0.5 else
                          pa.array(part, type=pa.string()))
            at = end
        first = values[0]
        same = all(len(v) == len(first) and all(a == b or a.isdigit() and b.isdigit() for a, b in zip(v, first))
                   for v in values)
        matches = all(re.fullmatch(columnar.ISO, v) for v in values)
        assert columnar._one_shape(pa.chunked_array(chunks, type=pa.string())) == (same and matches), values
    many = pa.array(["2026-01-01T00:00:00.250Z"] * (1 << 20) + ["2026-01-01T24:00:00.250Z"])
    assert not columnar._one_shape(pa.chunked_array([many]))
    assert columnar._one_shape(pa.chunked_array([many.slice(0, 1 << 20)]))


def test_arrival_order_is_the_whole_key_sort():
    """The order by instant, then only the ties by the whole key, is the one sort by the whole key (issue 34's
    rule: batch, arrival, watermark rows in their file places, event time, id), sorted files or not."""
    from explorer.streams.loading import _marks_before, arrival_order

    rng = np.random.default_rng(4)
    for trial in range(300):
        n = int(rng.integers(1, 40))
        events = pd.DataFrame({"id": [f"e{v}" for v in rng.permutation(n)],
                               "event_time": rng.integers(0, 4, n), "arrival_time": rng.integers(0, 5, n),
                               "batch": rng.integers(0, 3, n)})
        if trial % 3 == 0:
            events = events.sort_values(["batch", "arrival_time"], kind="stable").reset_index(drop=True)
        mark = rng.random(n) < 0.2
        for has_batch in (False, True):
            instant = [events["arrival_time"].to_numpy()] + ([events["batch"].to_numpy()] if has_batch else [])
            expected = np.lexsort([events["id"].to_numpy(dtype=str), events["event_time"].to_numpy(), mark,
                                   _marks_before(mark, instant), *instant])
            assert arrival_order(events, True, has_batch, mark).tolist() == expected.tolist()


def test_a_batch_per_event_is_what_the_general_batching_gives():
    """``batching._one_per_event`` (no masks over ten million rows) against the general code at count:1."""
    from explorer.config import BatchKind, BatchSpec
    from explorer.streams import generate
    from explorer.streams.batching import _assign, _one_per_event

    for name in ("textbook", "kafka-export", "mobile-bursts", "skewed-partitions"):
        stream = generate(name)
        fast = _one_per_event(stream.events["arrival_time"].to_numpy(dtype=np.int64))
        general = _assign(stream, BatchSpec(BatchKind.COUNT, count=1), False)
        for field in ("number", "commit_time", "starts", "opens", "scripted"):
            assert np.array_equal(getattr(fast, field), getattr(general, field)), (name, field)


def test_an_id_in_two_files_is_named_by_both_files_and_rows(tmp_path):
    """The files' ids are checked together, column-wise: the first id seen before, and where it was first seen."""
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text("id,event_time\nx,1\ny,2\n")
    pd.DataFrame({"id": ["w"], "event_time": [3]}).to_parquet(folder / "b.parquet")  # (Arrow strings)
    (folder / "c.jsonl").write_text('{"id": "z", "event_time": 5}\n{"id": " y", "event_time": 6}\n'
                                    '{"id": "x", "event_time": 7}\n')
    with pytest.raises(InputError, match=r"c\.jsonl: column 'id' row 2: duplicate id 'y', also in a\.csv row 2;"):
        load_events(folder)
    (folder / "c.jsonl").write_text('{"id": "z", "event_time": 5}\n')
    assert load_events(folder).events["id"].tolist() == ["x", "y", "w", "z"]


def test_whitespace_beyond_ascii_is_stripped_as_python_strips_it(tmp_path, per_cell):
    """Trimming is skipped for a column none of whose cells begins or ends with a byte that may be whitespace;
    a no-break space (U+00A0) or an ideographic one (U+3000) is several bytes, none ASCII, and is stripped."""
    path = tmp_path / "spaces.csv"
    path.write_text("id,key,event_time,arrival_time\n"
                    "a\u00a0,k1,1,1\n\u3000b,k2\u3000,2,2\nc,\u00a0k1,3,3\nd\u2003,k3,4,4\n", encoding="utf-8")
    fast, slow = both(per_cell, path)
    assert_same(fast, slow)
    assert fast.events["id"].tolist() == ["a", "b", "c", "d"]
    assert fast.events["key"].tolist() == ["k1", "k2", "k1", "k3"]
