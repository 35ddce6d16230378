"""The CLI's contract under hostile-but-fair input (issue 17): exit 0, or exit 2 with exactly one line on stderr
that says what to fix; never a traceback, a hang or an overwritten file. Each case below is an input that once
broke the contract; the fuzz tests at the end look for new ones."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.cli import main

from strategies import examples

GOOD_CSV = "id,event_time,arrival_time\na,1,2\nb,2,3\nc,12,13\nd,25,26\n"


def refused(capsys, argv: list[str], *words: str) -> str:
    """Run the CLI in this process; it must exit 2 with one line on stderr containing every word."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, (word, err)
    return err


@pytest.fixture
def good(tmp_path) -> str:
    path = tmp_path / "good.csv"
    path.write_text(GOOD_CSV)
    return str(path)


# --- options -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["run", "GOOD", "--nope"], ["unrecognized arguments: --nope"]),
    (["run", "GOOD", "--preset", "nope"], ["--preset", "invalid choice"]),
    (["compare", "GOOD", "--presets", "voltsp", "--limit", "x"], ["--limit", "invalid int"]),
    (["compare", "GOOD", "--presets", "voltsp,flink", "--limit", "-1"], ["--limit must be ≥ 0"]),
    (["run", "GOOD", "--window", "tumbling:99999999999999d"], ["100 years"]),
    (["run", "GOOD", "--delay", "99999999999999999999"], ["100 years"]),
    (["run", "GOOD", "--batches", "count:²"], ["count:N"]),
    (["run", "GOOD", "--window", "sliding:1h:1us"], ["3,600,000,000 windows"]),
])
def test_bad_options_are_one_line(capsys, good, argv, words):
    refused(capsys, [good if a == "GOOD" else a for a in argv], *words)


@pytest.mark.parametrize("argv, words", [
    (["textbook", "--mean-delay", "0"], ["--mean-delay must be > 0"]),
    (["textbook", "--spacing", "-1"], ["--spacing must be > 0"]),
    (["textbook", "--spacing", "nan"], ["--spacing must be a number"]),
    (["mobile-bursts", "--seed", "-1"], ["--seed must be ≥ 0"]),
    (["skewed-partitions", "--partitions", "0"], ["--partitions must be ≥ 1"]),
    (["mobile-bursts", "--duration", "1e7", "--rate", "100"], ["events; at most"]),
    (["kafka-export", "--start", "yesterday"], ["--start"]),
])
def test_bad_generator_options_are_one_line(capsys, tmp_path, argv, words):
    refused(capsys, ["generate", *argv, "--out", str(tmp_path / "out.csv")], *words)
    assert not (tmp_path / "out.csv").exists()


# --- output paths --------------------------------------------------------------------------------------

def test_generate_never_overwrites_without_force(capsys, tmp_path):
    target = tmp_path / "mine.csv"
    target.write_text("precious")
    refused(capsys, ["generate", "voltsp", "--out", str(target)], "exists", "--force")
    assert target.read_text() == "precious"
    assert main(["generate", "voltsp", "--out", str(target), "--force"]) == 0
    assert target.read_text().startswith("id,event_time")


def test_generate_by_default_keeps_the_committed_samples(capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).parents[1])
    before = Path("data/voltsp.csv").read_bytes()
    refused(capsys, ["generate", "voltsp"], "data/voltsp.csv", "--force")
    assert Path("data/voltsp.csv").read_bytes() == before


def test_generate_into_a_directory_or_nowhere(capsys, tmp_path):
    refused(capsys, ["generate", "voltsp", "--out", str(tmp_path)], "is a directory")
    refused(capsys, ["generate", "voltsp", "--out", "/proc/nope/x.csv"], "cannot write")
    refused(capsys, ["generate", "voltsp", "--out", str(tmp_path / "x.txt")], "unknown file type")


def test_run_out_refuses_a_file_a_previous_run_and_an_unwritable_place(capsys, tmp_path, good):
    afile = tmp_path / "afile"
    afile.write_text("x")
    refused(capsys, ["run", good, "--out", str(afile)], "is a file")
    refused(capsys, ["run", good, "--out", "/proc/nope"], "cannot create")
    assert main(["run", good, "--out", str(tmp_path / "res")]) == 0
    capsys.readouterr()
    refused(capsys, ["run", good, "--out", str(tmp_path / "res")], "already has events.csv", "--force")
    assert main(["run", good, "--out", str(tmp_path / "res"), "--force"]) == 0


# --- YAML configs --------------------------------------------------------------------------------------

BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi")) + "timeConfig:\n  heartbeat: *i\n"


@pytest.mark.parametrize("text, words", [
    ("timeConfig: 5\n", ["timeConfig must be a mapping"]),
    ("timeConfig: [1, 2]\n", ["timeConfig must be a mapping"]),
    ("emitter: 5\n", ["emitter must be a mapping"]),
    ("emitter: [tumbling-time-window]\n", ["emitter must be a mapping"]),
    ("emitter:\n  tumbling-time-window: 7\n", ["emitter.tumbling-time-window must be a mapping"]),
    ("emitter:\n  tumbling-time-window:\n    windowSpan: 0s\n", ["positive"]),
    ("emitter:\n  sliding-time-window:\n    windowSpan: 10s\n    slide: 0s\n", ["positive"]),
    ("timeConfig:\n  idleTimeout: 5s\n  heartbeat: 0s\n", ["heartbeat", "positive"]),
    ("timeConfig:\n  idleTimeout: 5s\n  heartbeat: -10s\n", ["heartbeat", "positive"]),
    ("timeConfig:\n  delayWindowClose: " + "9" * 400 + "\n", ["delayWindowClose", "too large"]),
    ("timeConfig:\n  delayWindowClose: .inf\n", ["delayWindowClose", "finite"]),
    ("timeConfig:\n  delayWindowClose: true\n", ["delayWindowClose"]),
    ("timeConfig:\n  delayWindowClos: 3s\n", ["unknown timeConfig setting", "did you mean 'delayWindowClose'"]),
    ("timeconfig:\n  delayWindowClose: 3s\n", ["unknown top-level setting", "did you mean 'timeConfig'"]),
    ("timeConfig: {a: [}\n", ["not valid YAML at line 1"]),
    (BOMB, ["aliases"]),
    ("a: &a [*a]\ntimeConfig: {}\n", ["aliases"]),
    ("[" * 5000 + "]" * 5000, ["nested too deeply"]),
])
def test_bad_yaml_is_one_line_naming_the_file(capsys, tmp_path, good, text, words):
    config = tmp_path / "config.yaml"
    config.write_text(text)
    refused(capsys, ["run", good, "--config", str(config)], str(config), *words)


def test_yaml_in_utf16_is_read_and_a_directory_is_refused(capsys, tmp_path, good):
    config = tmp_path / "utf16.yaml"
    config.write_bytes("timeConfig:\n  eventTimeExtractor: event_time\n  delayWindowClose: 3s\n".encode("utf-16"))
    assert main(["run", good, "--config", str(config), "--format", "json"]) == 0
    assert '"delay": 3000000' in capsys.readouterr().out
    refused(capsys, ["run", good, "--config", str(tmp_path)], "is a directory")


def test_an_event_time_extractor_naming_a_missing_column_is_refused(capsys, tmp_path, good):
    config = tmp_path / "config.yaml"
    config.write_text("timeConfig:\n  eventTimeExtractor: org.acme.Event::ts\n")
    refused(capsys, ["run", good, "--config", str(config)], "'ts' not in the file", "eventTimeExtractor")


# --- event files ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, content, words", [
    ("utf16.csv", GOOD_CSV.encode("utf-16"), ["UTF-16", "UTF-8"]),
    ("binary.csv", bytes(range(256)) * 4, ["not a text file", "UTF-8 CSV"]),
    ("latin1.csv", "id,event_time\ncafé,1\n".encode("latin-1"), ["not a text file", "0xe9"]),
    ("binary.jsonl", b"\x89PNG\r\n\x1a\n\x00\x00", ["not a text file", "JSON lines"]),
    ("extra.csv", b"id,event_time,arrival_time\na,1,2\nb,2,3\nc,3,4,5\nd,4,5\n", ["row 3 (line 4) has 4 fields"]),
    ("corrupt.parquet", b"PAR1" + b"\x00" * 64 + b"PAR1", ["cannot be read as PARQUET"]),
])
def test_unreadable_files_say_what_they_are(capsys, tmp_path, name, content, words):
    path = tmp_path / name
    path.write_bytes(content)
    refused(capsys, ["validate", str(path)], str(path), *words)


def test_a_symlink_loop_is_not_called_missing(capsys, tmp_path):
    loop = tmp_path / "loop.csv"
    os.symlink(loop, loop)
    err = refused(capsys, ["validate", str(loop)], "symbolic links")
    assert "not found" not in err


def test_a_directory_blames_the_file_and_its_own_row(capsys, tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text(GOOD_CSV)
    (folder / "b.csv").write_text("id,event_time,arrival_time\nx,30,31\nb,31,32\n")
    refused(capsys, ["validate", str(folder)], str(folder / "b.csv"), "row 2", "duplicate id 'b', also in a.csv row 2")
    (folder / "b.csv").write_text("id,event_time,arrival_time\nx,2026-01-01T00:00:00Z,2026-01-01T00:00:01Z\n")
    refused(capsys, ["validate", str(folder)], str(folder / "b.csv"), "ISO-8601", "a.csv holds")


# --- the hostile corpus: once wrong numbers with exit 0, or a traceback ----------------------------------

MAPPED = "id,event_time,arrival_time,key,partition\na,1,2,k0,p0\nb,2,3,k1,p1\nc,12,13,k0,p0\n"


def test_a_mapped_column_shadows_the_files_own_and_one_column_takes_one_mapping(capsys, tmp_path):
    """--key-col partition once gave keys "['k0' 'p0']"; two mappings onto one column read the other column; a
    mapping onto a column named after another role raised AttributeError."""
    from explorer import load_events

    path = tmp_path / "mapped.csv"
    path.write_text(MAPPED)
    assert load_events(path, columns={"key": "partition"}).events["key"].tolist() == ["p0", "p1", "p0"]
    by_arrival = load_events(path, columns={"event_time": "arrival_time"}).events
    assert by_arrival["event_time"].tolist() == [2_000_000, 3_000_000, 13_000_000]
    shadowed = tmp_path / "ts.csv"
    shadowed.write_text("id,event_time,ts\na,1,5\nb,2,7\n")  # --event-time-col ts: the file's event_time is ignored
    assert load_events(shadowed, columns={"event_time": "ts"}).events["event_time"].tolist() == [5_000_000, 7_000_000]
    unique = tmp_path / "unique.csv"
    unique.write_text("id,event_time,key\na,1,k0\nb,2,k1\n")
    assert load_events(unique, columns={"id": "key"}).events["id"].tolist() == ["k0", "k1"]
    refused(capsys, ["run", str(path), "--event-time-col", "arrival_time", "--arrival-time-col", "arrival_time"],
            str(path), "'arrival_time' is mapped to both event_time and arrival_time")
    refused(capsys, ["run", str(path), "--id-col", "key"], str(path), "column 'id'", "duplicate id 'k0' in rows 1, 3")
    for option in (["--event-time-col", "arrival_time"], ["--key-col", "partition"]):
        assert main(["run", str(path), *option, "--format", "json"]) == 0
    assert "'k0'" not in capsys.readouterr().out


@pytest.mark.parametrize("name, content, words", [
    ("trailing.csv", b"id,event_time,arrival_time\na,1,2,\nb,2,3,\nc,12,13,\n",
     ["row 1 (line 2) has 4 fields; the header has 3"]),
    ("short.csv", b"id,event_time,key\na,1,k\n\nb,2\nc,3,\n", ["row 2 (line 4) has 2 fields; the header has 3"]),
    ("late_nul.csv", b"id,event_time,key\n" + b"".join(b"e%d,%d,key\n" % (i, i) for i in range(8000)) + b"z,1,k\x00ey\n",
     ["not a text file", "NUL byte", "line 8002"]),
    ("batch_inf.csv", b"id,event_time,batch\na,1,1\nb,2,inf\n", ["column 'batch' row 2: 'inf' is not a whole number"]),
    ("batch_big.csv", b"id,event_time,batch\na,1,1\nb,2,9223372036854775808\n", ["column 'batch' row 2", "64-bit"]),
    ("offset_max.csv", b"id,event_time,partition,offset\na,1,0,18446744073709551615\n",
     ["column 'offset' row 1", "64-bit integer range"]),
    ("mixed_units.csv", ("id,event_time\n" + "".join(f"e{i},{1767225600000 + i * 1000}\n" for i in range(10))
                         + "x,1767225611\ny,1767225612\n").encode(), ["column 'event_time' rows 1 and 11", "--time-unit"]),
    ("far.csv.xz", b"\xfd7zXZ\x00", ["unknown file type '.csv.xz'"]),
    ("far.csv.bz2", b"BZh9", ["cannot be read as bzip2"]),
])
def test_the_hostile_corpus_is_refused_in_one_line(capsys, tmp_path, name, content, words):
    path = tmp_path / name
    path.write_bytes(content)
    err = refused(capsys, ["validate", str(path)], str(path), *words)
    assert "negative" not in err


@pytest.mark.parametrize("content, words", [
    (b"id,event_time\na,1,\nb,2,\n", "row 1 (line 2) has 3 fields; the header has 2"),
    (b"id,event_time,key\na,1,k\nb,2\n", "row 2 (line 3) has 2 fields; the header has 3"),
    (b"id,event_time,key\na,1,k\nb,2,k\x00ey\n", "a NUL byte at offset 29, line 3"),
])
def test_an_upload_is_held_to_the_same_widths_and_bytes(content, words):
    from explorer.errors import InputError
    from explorer.streams.upload import read_upload

    with pytest.raises(InputError) as refused:
        read_upload("up.csv", content)
    assert str(refused.value).startswith("up.csv: ") and words in str(refused.value)


def test_offsets_past_2_to_the_53_are_distinct(capsys, tmp_path):
    path = tmp_path / "offsets.csv"
    path.write_text("id,event_time,partition,offset\na,1,0,9007199254740992\nb,2,0,9007199254740993\n")
    assert main(["validate", str(path)]) == 0


def test_a_device_is_not_called_empty(capsys, tmp_path):
    link = tmp_path / "random.csv"
    os.symlink("/dev/urandom", link)
    err = refused(capsys, ["validate", str(link)], str(link), "not a regular file")
    assert "empty" not in err


@pytest.mark.parametrize("year", [20000, -1000])
def test_parquet_timestamps_past_the_calendar_are_refused(capsys, tmp_path, year):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "far.parquet"
    micros = (year - 1970) * 31_556_952 * 10**6
    pq.write_table(pa.table({"event_time": pa.array([0, micros], pa.timestamp("us"))}), path)
    refused(capsys, ["run", str(path)], str(path), "column 'event_time' row 2", "outside the years 1–9999")


def test_gzip_parts_and_files_are_read(capsys, tmp_path):
    """A .csv.gz part of a directory was skipped in silence: 50 of 100 events."""
    import gzip

    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text("id,event_time\n" + "".join(f"a{i},{i}\n" for i in range(50)))
    with gzip.open(folder / "b.csv.gz", "wt") as handle:
        handle.write("id,event_time\n" + "".join(f"b{i},{i + 50}\n" for i in range(50)))
    with gzip.open(tmp_path / "one.jsonl.gz", "wt") as handle:
        handle.write("".join(json.dumps({"id": f"x{i}", "event_time": i}) + "\n" for i in range(7)))
    assert main(["validate", str(folder)]) == 0
    assert main(["validate", str(tmp_path / "one.jsonl.gz")]) == 0
    out = capsys.readouterr().out
    assert "OK, 100 events" in out and "OK, 7 events" in out
    (folder / "c.csv.gz").write_bytes(b"not gzip at all")
    refused(capsys, ["validate", str(folder)], str(folder / "c.csv.gz"), "cannot be read as gzip")
    (folder / "c.csv.gz").unlink()
    (folder / "d.csv.xz").write_bytes(b"\xfd7zXZ\x00")
    refused(capsys, ["validate", str(folder)], str(folder / "d.csv.xz"), "decompress it")


EPOCH_NS = "id,event_time\na,1767225600000000000\nb,1767225601000000500\nc,1767225611000001500\n"


@pytest.mark.parametrize("argv", [["run", "FILE", "--format", "json"], ["run", "FILE", "--time-unit", "ns"],
                                  ["run", "FILE", "--time-unit", "ns", "--format", "json"],
                                  ["compare", "FILE", "--presets", "voltsp,flink", "--format", "json"],
                                  ["compare", "FILE", "--presets", "voltsp,flink"], ["validate", "FILE"]])
def test_epoch_nanoseconds_reach_every_output(capsys, tmp_path, argv):
    """KeyError: 'ns' in the output step."""
    path = tmp_path / "ns.csv"
    path.write_text(EPOCH_NS)
    assert main([str(path) if a == "FILE" else a for a in argv]) == 0
    out = capsys.readouterr().out
    if "json" in argv:
        json.loads(out)


def progress_line(**fields) -> str:
    record = {"id": "q", "runId": "r", "name": "sales", "timestamp": "2026-11-24T09:00:00.000Z", "batchId": 0,
              "numInputRows": 2, "durationMs": {"triggerExecution": 100},
              "eventTime": {"watermark": "2026-11-24T09:00:00.000Z"}, "stateOperators": [],
              "sources": [{"description": "KafkaV2", "startOffset": {"t": {"0": 0}}, "endOffset": {"t": {"0": 2}}}]}
    text = json.dumps(record)
    for old, new in fields.items():
        text = text.replace(old, new)
    return text + "\n"


@pytest.mark.parametrize("swap, words", [
    ({'"numInputRows": 2': '"numInputRows": 1e400'}, ["numInputRows inf"]),
    ({'"triggerExecution": 100': '"triggerExecution": Infinity'}, ["durationMs.triggerExecution inf"]),
    ({'"0": 2}': '"0": 1e400}'}, ["offset of t partition 0 inf"]),
    ({'"0": 2}': '"0": 1e30}'}, ["offset of t partition 0 1e+30 is out of range"]),
    ({'"batchId": 0': '"batchId": 1e30'}, ["batchId 1e+30 is out of range"]),
    ({'"timestamp": "2026': '"timestamp": "0000'}, ["timestamp '0000-11-24T09:00:00.000Z'", "years 1–9999"]),
    ({'"watermark": "2026': '"watermark": "10000'}, ["eventTime.watermark '10000-11-24", "years 1–9999"]),
])
@pytest.mark.parametrize("with_export", [False, True])
def test_a_hostile_progress_log_is_one_line_naming_the_field_and_line(capsys, tmp_path, swap, words, with_export):
    log = tmp_path / "progress.jsonl"
    log.write_text(progress_line() + progress_line(**swap).replace('"batchId": 0,', '"batchId": 1,', 1)
                   if "batchId" not in next(iter(swap)) else progress_line() + progress_line(**swap))
    export = tmp_path / "export.csv"
    export.write_text("id,event_time,arrival_time,partition,offset\na,2026-11-24T08:59:00Z,2026-11-24T08:59:00Z,0,0\n"
                      "b,2026-11-24T08:59:01Z,2026-11-24T08:59:01Z,0,1\n")
    refused(capsys, ["spark-log", str(log), *([str(export)] if with_export else [])], f"{log} line 2", *words)


# --- fuzz: the contract over bytes and over mutations of valid files, options and YAML -------------------

FUZZ = settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow],
                database=None)
SECONDS_PER_RUN = 20  # a 12-row file: anything near this is a hang

HOSTILE = ["", " ", "nan", "NaN", "inf", "-inf", "-1", "0", "1e30", "-1e30", "1e400", "9" * 40, "true", "null",
           "²", "٣", "1,5", "0x10", "2026-13-45", "2026-01-01T00:00:00", "2026-01-01T00:00:00+05:00", "1.5e3",
           "\t", "é", "a\"b", "-0", "18446744073709551615", "9223372036854.775807"]
OPTIONS = {
    "--window": ["tumbling:{d}", "sliding:{d}:{d}", "session:{d}", "tumbling", "{x}", "sliding:{d}"],
    "--delay": ["{d}", "{x}"], "--bound": ["{d}"], "--allowed-lateness": ["{d}"], "--idle-timeout": ["{d}", "off"],
    "--heartbeat": ["{d}"], "--source-idle-timeout": ["{d}"], "--batches": ["count:{x}", "interval:{d}", "column",
                                                                            "event", "{x}"],
    "--preset": ["voltsp", "flink", "spark", "bytewax", "storm", "textbook"],
    "--strategy": ["min", "max", "bounded", "event-clock"], "--scope": ["key", "global", "partition-min"],
    "--time": ["event", "processing"], "--late": ["drop", "side-output"], "--time-unit": ["{x}", "ms", "us",
                                                                                          "arrival_time={x}"],
    "--event-time-col": ["{x}", "ts", "{c}", "{c}.{x}", "meta.{c}"], "--key-col": ["{x}", "key", "{c}", "meta.key"],
    "--timezone": ["{x}", "Europe/Berlin", "America/New_York", "UTC", "Europe/Berln"],
    # mapping collisions: a role mapped onto a column named after another role, or two roles onto one column
    "--arrival-time-col": ["{c}"], "--id-col": ["{c}"], "--partition-col": ["{c}"], "--batch-col": ["{c}"],
}
ROLE_NAMES = ["id", "key", "event_time", "arrival_time", "batch", "partition"]
durations = st.one_of(st.sampled_from(["0", "1", "5s", "10", "1us", "500ms", "-5", "1h", "99999d", "0.0000001",
                                       "1e3", "nan", "", "³"]), st.integers(-10, 10**6).map(str))


@st.composite
def option_lists(draw) -> list[str]:
    argv = []
    for option in draw(st.lists(st.sampled_from(sorted(OPTIONS)), max_size=4, unique=True)):
        template = draw(st.sampled_from(OPTIONS[option]))
        value = template.replace("{x}", draw(st.sampled_from(HOSTILE))).replace("{c}", draw(st.sampled_from(ROLE_NAMES)))
        while "{d}" in value:
            value = value.replace("{d}", draw(durations), 1)
        argv += [option, value]
    return argv


@st.composite
def mutated_events(draw) -> tuple[str, bytes]:
    """A valid small events table, then a few cells, columns or rows made hostile; as CSV or JSON lines. Times
    are relative seconds, or a shape of the hostile corpus: epoch ms with rows in seconds (mixed magnitudes), epoch
    ns or ISO with 9 digits on half-µs ties, batch labels past 2^53."""
    n = draw(st.integers(1, 12))
    rows = [{"id": f"e{i}", "key": draw(st.sampled_from("ab")), "event_time": draw(st.integers(0, 40)),
             "arrival_time": draw(st.integers(0, 60)), "batch": draw(st.integers(1, 3)),
             "partition": draw(st.sampled_from("PQ"))} for i in range(n)]
    shape = draw(st.sampled_from(["relative", "relative", "mixed", "ns", "iso9", "big_batch", "local"]))
    for row in rows:
        for column in ("event_time", "arrival_time"):
            t = row[column]
            if shape == "mixed":  # epoch ms, some rows in seconds
                row[column] = 1_767_225_600 + t if draw(st.integers(0, 3)) == 0 else (1_767_225_600 + t) * 1000
            elif shape == "ns":
                row[column] = (1_767_225_600 + t) * 10**9 + draw(st.sampled_from([500, 1_500, 2_500, 999_999_500, 0]))
            elif shape == "iso9":
                row[column] = f"2026-01-01T00:00:{t:02d}.{draw(st.sampled_from(['000000500', '999999500', '0000015']))}Z"
            elif shape == "local":  # naive, around Berlin's and New York's DST changes (gaps and overlaps)
                day = draw(st.sampled_from(["2026-03-29T02", "2026-10-25T02", "2026-03-08T02", "2026-11-01T01"]))
                row[column] = f"{day}:{t:02d}:00"
        if shape == "big_batch":
            row["batch"] = 2**53 + row["batch"] * draw(st.sampled_from([1, 10**9]))
    columns = draw(st.lists(st.sampled_from(["key", "arrival_time", "batch", "partition"]), unique=True))
    columns = ["id", "event_time", *columns]
    for _ in range(draw(st.integers(0, 3))):
        row = draw(st.integers(0, n - 1))
        rows[row][draw(st.sampled_from(columns))] = draw(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=8),
                                                                   st.floats(), st.booleans(), st.none()))
    if draw(st.booleans()):
        columns = draw(st.permutations(columns))
    if draw(st.booleans()):
        return "jsonl", "".join(json.dumps({c: r[c] for c in columns}) + "\n" for r in rows).encode()
    if draw(st.integers(0, 5)) == 0:  # a JSON array of nested records: {"meta": {…}}, maybe cut off
        text = json.dumps([{"meta": {c: r[c] for c in columns}} for r in rows], indent=1)
        return "json", text[:draw(st.integers(1, len(text)))].encode()
    lines = [",".join(columns)] + [",".join(str(r[c]) for c in columns) for r in rows]
    if draw(st.booleans()):  # a structural fault: a row with a field more or less, or a cut-off file
        i = draw(st.integers(0, len(lines) - 1))
        lines[i] = draw(st.sampled_from([lines[i] + ",x", lines[i].rpartition(",")[0], lines[i][:3], ""]))
    if draw(st.integers(0, 4)) == 0:  # a delimiter at the end of every data row
        lines = lines[:1] + [line + "," for line in lines[1:]]
    return "csv", ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


yaml_scalars = st.one_of(st.sampled_from(HOSTILE + ["MAX_EVENT_TIME", "3s", "PROCESSING_TIME", "*a", "&a x"]),
                         st.integers(), st.floats(), st.booleans(), st.none(), st.text(max_size=6))
yaml_keys = st.sampled_from(["timeConfig", "emitter", "window", "batches", "preset", "tumbling-time-window",
                             "sliding-time-window", "session-window", "windowSpan", "slide", "gap",
                             "eventTimeExtractor", "watermarkStrategy", "delayWindowClose", "idleTimeout",
                             "heartbeat", "allowedLateness", "scope", "bound", "x"])
yaml_docs = st.recursive(yaml_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                               st.dictionaries(yaml_keys, inner, max_size=4)),
                         max_leaves=12)


def holds_the_contract(argv: list[str]) -> None:
    """exit 0, or exit 2 with exactly one line on stderr; no exception escapes; done in SECONDS_PER_RUN."""
    def too_slow(*_):
        raise TimeoutError(f"the CLI took over {SECONDS_PER_RUN} s: {argv}")

    err, out = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(SECONDS_PER_RUN)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            status = main(argv)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert status in (0, 2), (status, argv)
    if status == 2:
        assert err.getvalue().startswith("error: ") and err.getvalue().count("\n") == 1, (err.getvalue(), argv)


@FUZZ
@given(events=mutated_events(), options=option_lists(), command=st.sampled_from(["run", "validate", "curve"]))
def test_fuzz_mutated_event_files_and_options(tmp_path_factory, events, options, command):
    suffix, content = events
    path = tmp_path_factory.mktemp("fuzz") / f"events.{suffix}"
    path.write_bytes(content)
    extra = {"run": ["--format", "json"], "validate": [], "curve": ["--delays", "0,2"]}[command]
    holds_the_contract([command, str(path), *extra, *(options if command != "validate" else options[-2:])])


@FUZZ
@given(content=st.binary(max_size=400), suffix=st.sampled_from(["csv", "jsonl", "json", "parquet", "avro", "yaml"]))
def test_fuzz_arbitrary_bytes(tmp_path_factory, content, suffix):
    folder = tmp_path_factory.mktemp("bytes")
    path = folder / f"input.{suffix}"
    path.write_bytes(content)
    if suffix == "yaml":
        (folder / "good.csv").write_text(GOOD_CSV)
        holds_the_contract(["run", str(folder / "good.csv"), "--config", str(path)])
    else:
        holds_the_contract(["validate", str(path)])


@FUZZ
@given(doc=yaml_docs, options=option_lists())
def test_fuzz_yaml_configs(tmp_path_factory, doc, options):
    folder = tmp_path_factory.mktemp("yaml")
    (folder / "good.csv").write_text(GOOD_CSV)
    (folder / "config.yaml").write_text(yaml.safe_dump(doc))
    holds_the_contract(["run", str(folder / "good.csv"), "--config", str(folder / "config.yaml"), *options])


# --- resources ----------------------------------------------------------------------------------------------

def test_run_json_is_streamed_and_identical_to_the_document(capsys, monkeypatch):
    """--format json is written record by record (5M events once took 10 GB as one string), byte for byte what
    json.dumps of the whole document gives."""
    from explorer.core import Result
    from explorer.core import run as run_core
    from explorer.streams import generate

    result = run_core(generate("textbook", events=300))
    expected = json.dumps(result.to_json())
    out = io.StringIO()
    result.write_json(out)
    assert out.getvalue() == expected + "\n"
    monkeypatch.setattr(Result, "to_json", lambda self: pytest.fail("the CLI built the whole document"))
    assert main(["run", "--synthetic", "textbook", "--events", "300", "--format", "json"]) == 0
    assert capsys.readouterr().out == expected + "\n"


def test_a_run_too_big_for_the_machine_is_refused_with_the_figure(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr("explorer.budget.available_bytes", lambda: 1024**3)
    refused(capsys, ["run", "--synthetic", "textbook", "--window", "sliding:1000:1"],
            "this run (20,000 events × 1,000 windows each) needs about 3.2 GiB", "1.0 GiB is available", "--engine spark")
    assert main(["run", "--synthetic", "textbook", "--window", "sliding:20:10"]) == 0
    capsys.readouterr()
    path = tmp_path / "events.parquet"
    pd.DataFrame({"event_time": range(5000)}).to_parquet(path)
    monkeypatch.setattr("explorer.budget.available_bytes", lambda: 1024**2)
    refused(capsys, ["validate", str(path)], "5,000 rows needs about", "sample it")


def test_a_sweep_counts_every_evaluation_it_runs_at_once(monkeypatch):
    """A curve runs one evaluation per worker at once; memory for one run is not enough for two."""
    from explorer.budget import run_bytes
    from explorer.config import preset
    from explorer.errors import InputError
    from explorer.metrics import curve, tune
    from explorer.streams import generate

    stream, config = generate("textbook", events=20_000), preset("textbook")
    one = run_bytes(len(stream), config)
    monkeypatch.setattr("explorer.budget.available_bytes", lambda: int(1.5 * one / 0.8))  # room for 1.5 runs
    assert len(curve(stream, config, [0, 1_000_000], workers=1)) == 2
    assert tune(stream, config, 0.5).evaluations >= 1
    with pytest.raises(InputError, match=r"this sweep \(2 evaluations at once of 20,000 events\) needs about"):
        curve(stream, config, [0, 1_000_000], workers=2)
    monkeypatch.setattr("explorer.budget.available_bytes", lambda: int(0.5 * one / 0.8))
    with pytest.raises(InputError, match=r"this sweep \(1 evaluation at once"):
        tune(stream, config, 0.5)


@pytest.mark.parametrize("argv", [["run", "--synthetic", "textbook", "--engine", "spark"],
                                  ["curve", "--synthetic", "textbook", "--engine", "spark", "--delays", "0,1"]])
def test_spark_is_not_started_for_a_run_or_sweep_that_cannot_fit(capsys, monkeypatch, argv):
    """Run on Spark needs the local session (about 1 GiB) on top of the Result: refused before Spark starts."""
    monkeypatch.setattr("explorer.budget.available_bytes", lambda: 1024**3)
    monkeypatch.setattr("explorer.spark.spark_session", lambda *a, **k: pytest.fail("Spark was started"))
    refused(capsys, argv, "Spark", "needs about 1.", "GiB but 1.0 GiB is available", "--master")


@pytest.mark.parametrize("window", ["tumbling:10", "sliding:100:10", "session:5"])
def test_the_memory_prediction_is_an_upper_bound(window):
    """The figure a run is refused by must not be optimistic: measured peaks stay under it."""
    import tracemalloc

    from explorer.budget import run_bytes
    from explorer.config import WindowSpec, preset
    from explorer.core import run as run_core
    from explorer.streams import generate

    stream = generate("textbook", events=20_000)
    config = preset("voltsp").__class__(window=WindowSpec.parse(window))
    run_core(stream, config)  # caches of the stream and the kernel are not the run's
    tracemalloc.start()
    try:
        run_core(stream, config)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= run_bytes(len(stream), config), (peak, run_bytes(len(stream), config))


PROGRESS_FIELDS = ['"numInputRows": 2', '"triggerExecution": 100', '"batchId": 0', '"0": 2}', '"0": 0}',
                   '"timestamp": "2026-11-24T09:00:00.000Z"', '"watermark": "2026-11-24T09:00:00.000Z"']


@FUZZ
@given(swaps=st.lists(st.tuples(st.sampled_from(PROGRESS_FIELDS), st.sampled_from(HOSTILE)), min_size=1, max_size=3),
       with_export=st.booleans())
def test_fuzz_hostile_progress_logs(tmp_path_factory, swaps, with_export):
    """A progress log's numbers and instants replaced by hostile values: spark-log gives its answer or one line."""
    folder = tmp_path_factory.mktemp("progress")
    second = progress_line().replace('"batchId": 0,', '"batchId": 1,', 1)
    for field, value in swaps:
        name = field.split(":")[0]
        second = second.replace(field, f"{name}: {json.dumps(value) if field.endswith(chr(34)) else value}"
                                + ("}" if field.endswith("}") else ""))
    log = folder / "progress.jsonl"
    log.write_text(progress_line() + second)
    export = folder / "export.csv"
    export.write_text("id,event_time,arrival_time,partition,offset\na,2026-11-24T08:59:00Z,2026-11-24T08:59:00Z,0,0\n"
                      "b,2026-11-24T08:59:01Z,2026-11-24T08:59:01Z,0,1\n")
    holds_the_contract(["spark-log", str(log), *([str(export)] if with_export else [])])


def test_an_avro_file_cut_anywhere_is_one_line(tmp_path):
    """A valid Avro file (deflate blocks of 5 records) cut at any byte: read, or one line naming the file."""
    import fastavro

    schema = {"type": "record", "name": "R", "fields": [
        {"name": "id", "type": "string"}, {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}}]}
    whole = tmp_path / "whole.avro"
    with whole.open("wb") as handle:
        fastavro.writer(handle, fastavro.parse_schema(schema), [{"id": f"e{i}", "ts": 1_795_165_200_000 + i}
                                                                for i in range(20)], codec="deflate", sync_interval=40)
    content = whole.read_bytes()
    for cut in range(1, len(content), 5):
        path = tmp_path / "cut.avro"
        path.write_bytes(content[:cut])
        holds_the_contract(["validate", str(path)])


@pytest.mark.parametrize("failure", [MemoryError(), OSError(12, "Cannot allocate memory")])
def test_running_out_of_memory_past_the_prediction_is_one_line_not_a_write_error(capsys, monkeypatch, failure):
    """Should a run outgrow what budget.py predicted (numpy's MemoryError, or the kernel's arena failing to map:
    ENOMEM), the command ends with one line saying so, not a traceback, nor 'cannot write the output'."""
    import explorer.core.compiled

    def fail(*args, **kwargs):
        raise failure

    monkeypatch.setattr(explorer.core.compiled, "evaluate", fail)
    err = refused(capsys, ["run", "--synthetic", "textbook", "--events", "300"], "ran out of memory", "sample the")
    assert "cannot write" not in err
