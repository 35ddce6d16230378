"""What you tune is what you deploy, on Flink: the exported PyFlink job and the exported Java job, run by real
Flink 2.3 (PyFlink's venv and its jars, ``make engines``) on the user's own file, fire the windows and send to the
late side output the events the flink preset predicted, with watermarks once per auto-watermark interval of
arrival time.

One engine run per case, shared by the tests that read it (module-scoped fixtures): each Flink job takes 15-30 s.
"""

import bz2
import gzip
import json
import subprocess
from dataclasses import replace

import pytest

from explorer import generate, preset
from explorer.cli import main
from explorer.config import BatchSpec, WindowSpec
from explorer.core import run
from explorer.errors import InputError
from explorer.export import export
from explorer.streams import load_events
from explorer.verify import Verdict, held_against, predicted_refused, report, verify
from explorer.export.common import ExportSource
from explorer.verify.engines import _java_on_flink_jars

S = 1_000_000
COLUMNS = {"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id"}
CASES = [("tumbling:1m", 0), ("tumbling:1m", 30), ("sliding:2m:30s", 0), ("sliding:2m:30s", 30),
         ("session:45s", 0), ("session:45s", 30), ("tumbling:1m+15s", 30)]  # the last with Flink's window offset


@pytest.fixture(scope="module")
def kafka_export(tmp_path_factory):
    """A Kafka-like export as a user has it: ISO event times, epoch-ms arrivals (ties among them), four partitions
    (the watermark is their min), devices that go offline and flush."""
    path = tmp_path_factory.mktemp("export") / "topic-export.csv"
    assert main(["generate", "kafka-export", "--devices", "6", "--duration", "1200", "--out", str(path)]) == 0
    return path


def _config(window: str, allowed: int, delay: int = 20) -> object:
    return replace(preset("flink", delay=delay * S, allowed_lateness=allowed * S), window=WindowSpec.parse(window))


@pytest.fixture(scope="module")
def pyflink_runs(kafka_export, tmp_path_factory):
    """The PyFlink job's verdict per (window, allowed lateness), run on demand and kept."""
    stream = load_events(kafka_export, columns=COLUMNS)
    runs: dict[tuple[str, int], Verdict] = {}

    def get(window: str, allowed: int) -> Verdict:
        if (window, allowed) not in runs:
            runs[window, allowed] = verify(stream, _config(window, allowed), "flink",
                                           tmp_path_factory.mktemp("flink"))
        return runs[window, allowed]
    return get


@pytest.mark.engines
@pytest.mark.parametrize("window, allowed", CASES)
def test_the_exported_pyflink_job_reproduces_the_prediction_on_the_users_file(pyflink_runs, window, allowed):
    verdict = pyflink_runs(window, allowed)
    assert verdict.identical, "\n".join(report(verdict))
    assert len(verdict.engine_emitted) > 10 and len(verdict.engine_refused or ()) > 50  # late events in it
    if allowed:  # late events kept: windows fired again, as the prediction's LATE_UPDATE
        assert any(w.revision > 1 for w in verdict.engine_emitted)


@pytest.mark.engines
@pytest.mark.parametrize("window, allowed", [("sliding:2m:30s+10s", 30), ("session:45s", 30)])
def test_the_exported_java_job_reproduces_the_prediction_on_flinks_own_window_operator(kafka_export, window, allowed,
                                                                                       tmp_path):
    stream = load_events(kafka_export, columns=COLUMNS)
    verdict = verify(stream, _config(window, allowed), "flink-java", tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    assert any(w.revision > 1 for w in verdict.engine_emitted)
    assert "public static void main" in (tmp_path / "Job.java").read_text()  # the user's program, kept


@pytest.mark.engines
@pytest.mark.parametrize("engine, name, options, window, delay, allowed", [
    ("flink", "voltsp", {"scenario": 3}, "tumbling:10", 0, 0),  # the explorer's own worked example
    ("flink", "mobile-bursts", {"seed": 3}, "sliding:20:5", 8, 10),  # devices offline, then flushing
    ("flink-java", "future-outliers", {"seed": 5}, "tumbling:10", 2, 5),  # clocks running fast
    # a key that goes silent (not sessions: its times have µs, which Flink's ms timestamps truncate, so a session's
    # bounds would differ by under 1 ms, its contents not)
    ("flink-java", "idle-key", {"seed": 7}, "sliding:6:2", 1, 2),
    # two partitions whose arrivals trail each other: the watermark is their min (verify writes the column)
    ("flink", "skewed-partitions", {}, "tumbling:10", 2, 0),
])
def test_the_exported_jobs_reproduce_the_prediction_on_built_in_streams(engine, name, options, window, delay, allowed,
                                                                       tmp_path):
    stream = generate(name, **options)
    verdict = verify(stream, _config(window, allowed, delay), engine, tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    assert verdict.engine_emitted


@pytest.mark.engines
def test_an_idle_partition_leaves_the_watermark_as_flinks_withidleness_does(kafka_export, tmp_path):
    """Flink's own WatermarksWithIdleness per partition, its timer on the replay's clock: a partition silent for
    the timeout leaves the min, and the watermark runs ahead of its late flush."""
    stream = load_events(kafka_export, columns=COLUMNS)
    config = replace(_config("tumbling:1m", 0), time=replace(_config("tumbling:1m", 0).time,
                                                             source_idle_timeout=2 * S))
    verdict = verify(stream, config, "flink-java", tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    without = predicted_refused(run(stream, _config("tumbling:1m", 0)))
    assert len(verdict.engine_refused or ()) > len(without)  # idleness made a difference


@pytest.mark.engines
@pytest.mark.parametrize("engine, options, window, delay, allowed, idle, batches", [
    ("flink", {}, "tumbling:10", 2, 0, S, None),
    ("flink-java", {}, "tumbling:10", 2, 0, S, None),
    # random ones: three partitions, sliding windows kept 5 s for late events; four partitions, sessions, a 500 ms
    # auto-watermark interval
    ("flink-java", {"seed": 8086, "partitions": 3, "spacing": 1.5}, "sliding:20:5", 3, 5, S, None),
    ("flink", {"seed": 2718, "partitions": 4, "skew": 3, "events": 3000}, "session:8", 2, 0, 1500 * S // 1000,
     "interval:500ms"),
])
def test_withidleness_goes_idle_and_back_as_flinks_timer_says_on_skewed_partitions(engine, options, window, delay,
                                                                                   allowed, idle, batches, tmp_path):
    """Partitions that trail each other, withIdleness at Flink's auto-watermark interval: each goes idle and back
    again and again, and all are idle at once in the gaps. Flink's IdlenessTimer starts its clock at the first
    periodic emit without a record and declares idle strictly past the timeout; the emits of silent intervals
    count; when every partition is idle the multiplexer takes the highest mark. The rule before (idle the timeout
    after the last arrival, at commits only, all idle holding the watermark) refused 566 events on the first,
    where Flink refuses 543, and differed on the random ones too."""
    stream = generate("skewed-partitions", **options)
    config = _config(window, allowed, delay=delay)
    if batches:
        config = replace(config, batches=BatchSpec.parse(batches))
    verdict = verify(stream, replace(config, time=replace(config.time, source_idle_timeout=idle)), engine, tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    assert not held_against(verdict, run(stream, config)).identical  # idleness made a difference


@pytest.mark.engines
def test_the_comparison_fails_when_the_prediction_is_another_jobs(kafka_export, pyflink_runs):
    """Flink's firings held against a prediction with another delay: the verdict must say DIFFERENT."""
    verdict = pyflink_runs("tumbling:1m", 0)
    stream = load_events(kafka_export, columns=COLUMNS)
    other_config = _config("tumbling:1m", 0, delay=25)
    other = run(stream, other_config)
    differs = held_against(verdict, other)
    assert not differs.identical and differs.refused_differ
    assert report(differs)[0].startswith("flink: DIFFERENT")


def test_the_exported_programs_are_whole_and_name_the_settings():
    config = replace(preset("flink", delay=20 * S, allowed_lateness=30 * S), window=WindowSpec.parse("sliding:2m:30s"))
    program = export(config, "pyflink")
    compile(program, "job.py", "exec")  # valid Python
    for setting in ("BOUND_MS = 20000", "ALLOWED_LATENESS_MS = 30000", "SIZE_MS = 120000", "SLIDE_MS = 30000",
                    "TICK_EVERY_US = 200000", "SlidingEventTimeWindows.of", "side_output_late_data",
                    "def main(events, outdir)", "class ArrivalTicks"):
        assert setting in program, setting
    assert "import explorer" not in program and "from explorer" not in program  # the user's to keep
    java = export(config, "flink-java")
    for setting in ("static final Long BOUND_MS = 20000L;", "SlidingEventTimeWindows.of(Duration.ofMinutes(2), "
                    "Duration.ofSeconds(30))", ".allowedLateness(Duration.ofMillis(ALLOWED_LATENESS_MS))",
                    ".sideOutputLateData(late)", "public class Job", "forBoundedOutOfOrderness(Duration.ofSeconds(20))",
                    "setAutoWatermarkInterval(200)"):
        assert setting in java, setting
    assert "NOTE" not in program + java  # the flink preset's own settings: nothing left out
    offset = replace(config, window=WindowSpec.parse("tumbling:1h+15m"))
    assert "OFFSET_MS = 900000" in export(offset, "pyflink")
    assert "TumblingEventTimeWindows.of(Duration.ofHours(1), Duration.ofMinutes(15))" in export(offset, "flink-java")


def test_a_job_flink_cannot_replay_is_refused_before_it_starts(tmp_path):
    stream = generate("voltsp", scenario=3)
    with pytest.raises(InputError, match="under spark"):
        verify(stream, preset("spark"), "flink", tmp_path)
    with pytest.raises(InputError, match="batch column"):
        verify(stream, replace(preset("flink"), batches=BatchSpec.parse("column")), "flink-java", tmp_path)
    idle = replace(preset("flink", source_idle_timeout=30 * S), batches=BatchSpec.parse("event"))
    with pytest.raises(InputError, match="withIdleness counts auto-watermark intervals"):
        verify(stream, idle, "flink", tmp_path)
    with pytest.raises(InputError, match="whole number of ms"):
        verify(stream, preset("flink", delay=1500), "flink", tmp_path)
    assert not list(tmp_path.iterdir())  # refused before anything was written


def java_reads(path, stream, tmp_path) -> list[dict]:
    """The events as the Java program's own code reads them (``java Job.java --read EVENTS``: no Flink run)."""
    program = tmp_path / "Job.java"
    program.write_text(export(preset("flink"), "flink-java", replace(ExportSource.of(stream), path=str(path))))
    ran = subprocess.run([*_java_on_flink_jars(), str(program), "--read", str(path)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    return [json.loads(line) for line in ran.stdout.splitlines()]


def explorer_reads(stream) -> list[dict]:
    ev = stream.events
    return [{"id": str(i), "key": str(k), "t": int(t), "arrival": int(a), "partition": str(p) if p == p else ""}
            for i, k, t, a, p in zip(ev["id"], ev["key"], ev["event_time"], ev["arrival_time"], ev["partition"])]


@pytest.mark.engines
def test_the_java_job_reads_the_users_file_as_the_explorer_did(kafka_export, tmp_path):
    """The Java program has its own reader (Flink's jars have no pandas): the Kafka-like export (ISO event times,
    epoch-ms arrivals with ties, partitions); nested JSON lines, gzipped, naive times in a zone; epoch ns on
    half-µs ties with a scripted watermark row; a file without arrival or id columns."""
    stream = load_events(kafka_export, columns=COLUMNS)
    assert java_reads(kafka_export, stream, tmp_path) == explorer_reads(stream)
    nested = tmp_path / "events.jsonl.gz"
    with gzip.open(nested, "wt") as f:
        for m in range(40):
            f.write(json.dumps({"payload": {"after": {"ts": f"2026-03-29T01:{m:02d}:30", "device": f"d{m % 3}"},
                                            "source": {"ts_ms": 1774745400000 + 60_000 * m + 999_999 % (m + 1)}}})
                    + "\n")
    columns = {"event_time": "payload.after.ts", "key": "payload.after.device", "arrival_time": "payload.source.ts_ms"}
    stream = load_events(nested, columns=columns, timezone="Europe/Berlin")
    assert java_reads(nested, stream, tmp_path) == explorer_reads(stream)
    exact = tmp_path / "exact.csv"
    exact.write_text("id,key,event_time,arrival_time,kind\n"
                     "a,k,2026-10-25T02:30:00.0000005,1792888200000000500,\n"
                     "b,k,2026-10-25T02:30:00.0000015,1792888200000001500,\n"
                     "w,,2026-10-25T02:00:00,1792888200000002000,watermark\n"
                     "c,k,2026-10-25 03:10:00.999999500,1792888200000002500,\n")
    stream = load_events(exact, time_unit={"arrival_time": "ns"}, timezone="Europe/Berlin")
    assert java_reads(exact, stream, tmp_path) == explorer_reads(stream)
    zoned = tmp_path / "zoned.csv"
    zoned.write_text("id,key,event_time\na,k,2026-10-25T02:30:00.0000015+01:00\nb,k,2026-10-25 03:10:00.9999995Z\n"
                     "c,k,2026-10-25T04:00:00+0200\n")
    stream = load_events(zoned)
    assert java_reads(zoned, stream, tmp_path) == explorer_reads(stream)
    plain = tmp_path / "plain.csv"
    plain.write_text('event_time,key\n5,a\n3,"b, c"\n9,a\n1.5,b\n9,b\n')
    stream = load_events(plain)
    assert java_reads(plain, stream, tmp_path) == explorer_reads(stream)
    packed = tmp_path / "plain.csv.bz2"  # the explorer reads it; Flink's jars have no bzip2: refused, not misread
    packed.write_bytes(bz2.compress(plain.read_bytes()))
    with pytest.raises(AssertionError, match="bzip2 and Zstandard have no reader among Flink's jars"):
        java_reads(packed, load_events(packed), tmp_path)


@pytest.mark.engines
def test_a_file_the_java_job_cannot_read_is_handed_to_it_as_csv_and_the_report_says_so(kafka_export, tmp_path):
    """Flink's jars have no Parquet, Avro or bzip2 reader: verify writes the loaded events as a µs CSV for the Java
    job and says so in the report, so the Kafka-like export as Parquet (or bzip2) is held like the CSV; PyFlink
    (pandas) reads the Parquet itself and says nothing."""
    import pandas as pd

    parquet = tmp_path / "topic-export.parquet"
    pd.read_csv(kafka_export, dtype=str).to_parquet(parquet)
    packed = tmp_path / "topic-export.csv.bz2"
    packed.write_bytes(bz2.compress(kafka_export.read_bytes()))
    config = _config("tumbling:1m", 30)
    for path, named in ((parquet, "not parquet"), (packed, "not csv (bz2)")):
        verdict = verify(load_events(path, columns=COLUMNS), config, "flink-java", tmp_path / path.suffix[1:])
        assert verdict.identical and verdict.note and named in verdict.note, verdict.note
    verdict = verify(load_events(kafka_export, columns=COLUMNS), config, "flink-java", tmp_path / "csv")
    assert verdict.identical and verdict.note is None
