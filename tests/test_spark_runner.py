"""The Spark runner (``--engine spark``): the core's semantics in a real Structured Streaming query, with its
state in Spark's state store, gives the local engine's Result table for table — and survives a restart."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from explorer import generate, preset
from explorer.config import BatchSpec, Scope, Strategy, WindowSpec
from explorer.core import run
from explorer.core.engine import separable_by_key
from explorer.spark import Cancelled, SparkRunError, run_spark

from conftest import make_config
from strategies import configs, frames
from explorer.streams import stream_from_frame

S = 1_000_000
SCENARIOS = yaml.safe_load((Path(__file__).parent / "scenarios" / "voltsp_worked_example.yaml").read_text())


def assert_same(local, spark):
    for table in ("events", "assignments", "windows", "watermarks"):
        pd.testing.assert_frame_equal(getattr(local, table), getattr(spark, table), check_dtype=False, obj=table)
    assert local.metrics == spark.metrics
    assert spark.engine == "spark"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_worked_examples_on_spark(spark, scenario):
    stream = generate(scenario["stream"]["generator"], scenario=scenario["stream"]["scenario"])
    config = make_config(scenario["config"])
    assert_same(run(stream, config), run_spark(stream, config, spark))


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(frames(max_events=14, with_batch=True), configs(has_batch=True))
def test_spark_equals_local_on_random_streams(spark, frame, config):
    """Small streams (≤ 7 micro-batches) so the property stays inside the suite's time."""
    stream = stream_from_frame(frame, name="hypothesis")
    config = replace(config, batches=BatchSpec.parse("column"))
    assert_same(run(stream, config, engine="reference"), run_spark(stream, config, spark))


def test_state_per_key_when_keys_are_independent(spark):
    stream = generate("mobile-bursts", devices=4, duration=200.0)
    config = replace(preset("voltsp", delay=2 * S, allowed_lateness=5 * S), window=WindowSpec.parse("session:3"),
                     batches=BatchSpec.parse("count:200"))
    assert separable_by_key(config)  # one state per key, spread over Spark's tasks
    assert_same(run(stream, config), run_spark(stream, config, spark))
    assert not separable_by_key(config.with_time(scope=Scope.GLOBAL))


def test_restart_from_checkpoint_loses_and_repeats_nothing(spark, tmp_path):
    stream = generate("idle-key")
    config = replace(preset("voltsp", delay=1 * S, idle_timeout=20 * S), batches=BatchSpec.parse("count:6"))
    whole = run_spark(stream, config, spark)
    assert run_spark(stream, config, spark, workdir=tmp_path, stop_after=3) is None
    resumed = run_spark(stream, config, spark, workdir=tmp_path)
    assert_same(whole, resumed)
    assert_same(run(stream, config), resumed)


def test_progress_once_per_micro_batch_and_cancel_then_resume(spark, tmp_path):
    stream = generate("voltsp", scenario=4)
    config = make_config({"preset": "voltsp", "idle_timeout": "30s", "delay": "5s"})
    seen = []
    cancel = threading.Event()

    def progress(p):
        seen.append(p)
        cancel.set()  # stop after the first micro-batch

    with pytest.raises(Cancelled, match=str(tmp_path)):
        run_spark(stream, config, spark, workdir=tmp_path, progress=progress, cancel=cancel)
    assert seen and seen[0].batch == 1 and seen[0].rows > 0
    seen.clear()
    resumed = run_spark(stream, config, spark, workdir=tmp_path, progress=seen.append)
    assert_same(run(stream, config), resumed)
    numbers = [p.batch for p in seen]
    assert numbers == sorted(numbers) and numbers[-1] == seen[-1].batches  # ends with the end-of-input batch
    assert any(p.watermark is not None for p in seen)


def test_failure_names_the_checkpoint_to_resume_from(spark, tmp_path):
    stream = generate("voltsp", scenario=1)
    config = make_config({"preset": "voltsp"})
    assert run_spark(stream, config, spark, workdir=tmp_path, stop_after=1) is None
    (tmp_path / "input" / "part-000001.json").write_text('{"grp": "*", "row": null, "batch": 2}\n')  # a bad file
    with pytest.raises(SparkRunError) as failure:
        run_spark(stream, config, spark, workdir=tmp_path)
    message = str(failure.value)
    assert f"--checkpoint {tmp_path}" in message and "\n" not in message


def test_spark_sweep_gives_the_local_curve(spark):
    from explorer.metrics import curve
    from explorer.spark.sweep import curve_on_spark

    textbook = generate("textbook", events=3000)
    config = preset("textbook")
    delays = [d * S // 2 for d in range(9)]
    assert curve_on_spark(spark, textbook, [config], delays, chunks=3) == curve(textbook, config, delays)
    idle = generate("idle-key")  # idle timeouts and sessions: the reference engine inside the tasks
    config = replace(preset("voltsp", idle_timeout=30 * S), window=WindowSpec.parse("session:4"))
    mixed = [config, config.with_time(strategy=Strategy.MAX)]
    expected = [row for c in mixed for row in curve(idle, c, delays[:3])]
    assert curve_on_spark(spark, idle, mixed, delays[:3]) == expected


def test_cli_curve_and_run_on_spark(spark, capsys):
    from explorer.cli import main

    args = ["--synthetic", "voltsp", "--scenario", "3", "--delay", "2"]
    assert main(["curve", *args[:4], "--delays", "0,2,5"]) == 0
    local = capsys.readouterr().out
    assert main(["curve", *args[:4], "--delays", "0,2,5", "--engine", "spark"]) == 0
    assert capsys.readouterr().out == local
    assert main(["run", *args, "--format", "json"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["run", *args, "--format", "json", "--engine", "spark"]) == 0
    on_spark = json.loads(capsys.readouterr().out)
    assert on_spark.pop("engine") == "spark" and local.pop("engine") == "local"
    assert on_spark == local
