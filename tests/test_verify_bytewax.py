"""What you tune is what you deploy, on Bytewax: the exported dataflow, run by real Bytewax 0.21.1 from its own venv
(``make engines``) on the user's own file, emits the windows and calls late the items the bytewax preset predicted.
"""

from dataclasses import replace

import pytest

from explorer import generate, preset
from explorer.cli import main
from explorer.config import BatchSpec, WindowSpec
from explorer.core import run
from explorer.errors import InputError
from explorer.streams import load_events
from explorer.verify import held_against, report, verify

S = 1_000_000
COLUMNS = {"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id"}
WINDOWS = ["tumbling:1m", "sliding:2m:30s", "session:45s", "tumbling:1m+20s"]  # the last offset (align_to)


@pytest.fixture(scope="module")
def kafka_export(tmp_path_factory):
    """A Kafka-like export as a user has it: ISO event times, epoch-ms arrivals (ties among them), devices that go
    offline and flush."""
    path = tmp_path_factory.mktemp("export") / "topic-export.csv"
    assert main(["generate", "kafka-export", "--devices", "8", "--duration", "1800", "--out", str(path)]) == 0
    return path


@pytest.mark.engines
@pytest.mark.parametrize("window", WINDOWS)
def test_the_exported_dataflow_reproduces_the_prediction_on_the_users_file(kafka_export, window, tmp_path):
    stream = load_events(kafka_export, columns=COLUMNS)
    config = replace(preset("bytewax", delay=20 * S), window=WindowSpec.parse(window))
    verdict = verify(stream, config, "bytewax", tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    assert len(verdict.predicted) > 20 and len(verdict.engine_refused or ()) > 50  # a test with late items in it
    assert "def main(events, outdir)" in (tmp_path / "job.py").read_text()  # the user's program, kept


@pytest.mark.engines
@pytest.mark.parametrize("name, options, window, delay", [
    ("textbook", {}, "tumbling:10", 5),  # 003's stream
    ("mobile-bursts", {"seed": 3}, "sliding:20:5", 8),  # devices offline, then flushing
    ("future-outliers", {"seed": 5}, "tumbling:10", 2),  # clocks running fast: stamped ahead of arrival
    ("idle-key", {"seed": 7}, "session:4", 1),  # a key that goes silent
])
def test_the_exported_dataflow_reproduces_the_prediction_on_built_in_streams(name, options, window, delay, tmp_path):
    stream = generate(name, **options)
    config = replace(preset("bytewax", delay=delay * S), window=WindowSpec.parse(window))
    verdict = verify(stream, config, "bytewax", tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    assert verdict.engine_emitted


@pytest.mark.engines
def test_the_comparison_fails_when_the_prediction_is_another_jobs(kafka_export, tmp_path):
    stream = load_events(kafka_export, columns=COLUMNS)
    config = replace(preset("bytewax", delay=20 * S), window=WindowSpec.parse("tumbling:1m"))
    verdict = verify(stream, config, "bytewax", tmp_path)
    other_config = replace(config, time=replace(config.time, bound=5 * S))
    other = run(stream, other_config)
    differs = held_against(verdict, other)
    assert not differs.identical and differs.refused_differ
    assert report(differs)[0].startswith("bytewax: DIFFERENT")


def test_a_setting_bytewax_has_not_is_refused_before_it_starts(tmp_path):
    stream = generate("voltsp", scenario=3)
    lateness = replace(preset("bytewax"), time=replace(preset("bytewax").time, allowed_lateness=5 * S))
    with pytest.raises(InputError, match="--allowed-lateness 5s is a what-if"):
        verify(stream, lateness, "bytewax", tmp_path)
    with pytest.raises(InputError, match="under spark"):
        verify(stream, preset("spark"), "bytewax", tmp_path)
    with pytest.raises(InputError, match="one at a time"):
        verify(stream, replace(preset("bytewax"), batches=BatchSpec.parse("interval:1s")), "bytewax", tmp_path)
    assert not (tmp_path / "job.py").exists()


def test_a_missing_engine_venv_is_one_line_naming_make_engines(tmp_path, monkeypatch):
    from explorer.verify import engines

    monkeypatch.setattr(engines, "ENGINES_DIR", tmp_path / "nowhere")
    with pytest.raises(InputError, match="run `make engines` once"):
        verify(generate("voltsp", scenario=3), preset("bytewax"), "bytewax", tmp_path)
