"""The Spark runner (``--engine spark``): the core's semantics in a real Structured Streaming query, with its
state in Spark's state store, gives the local engine's Result table for table — and survives a restart."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from explorer import generate, load_events, preset
from explorer.config import BatchSpec, Scope, Strategy, WindowSpec
from explorer.core import run
from explorer.core.engine import separable_by_key
from explorer.errors import InputError
from explorer.spark import Cancelled, SparkRunError, run_spark
from explorer.spark.staging import MIN_ROWS_PER_MICRO_BATCH, plan_micro_batches
from explorer.streams import assign_batches, batches_for

from conftest import make_config
from strategies import configs, frames, keys_in_one_partition
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
@given(frames(max_events=14, with_batch=True, with_marks=True), st.data(), st.sampled_from([None, 1, 2, 3]))
def test_spark_equals_local_on_random_streams(spark, frame, data, per_micro_batch):
    """Small streams (≤ 7 arrival batches) so the property stays inside the suite's time; however many arrival
    batches a micro-batch carries, the Result is the same. Streams may hold watermark rows, which the scripted
    strategy follows."""
    stream = stream_from_frame(frame, name="hypothesis")
    config = data.draw(configs(has_batch=True, has_marks=not stream.watermarks.empty))
    assume(config.time.scope is not Scope.PARTITION or keys_in_one_partition(stream))
    config = replace(config, batches=BatchSpec.parse("column"))
    assert_same(run(stream, config, engine="reference"),
                run_spark(stream, config, spark, per_micro_batch=per_micro_batch))


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
    assert run_spark(stream, config, spark, workdir=tmp_path, stop_after=3, per_micro_batch=2) is None
    assert len(list((tmp_path / "checkpoint" / "commits").iterdir())) >= 3  # it stopped part-way
    resumed = run_spark(stream, config, spark, workdir=tmp_path, per_micro_batch=2)
    assert_same(whole, resumed)
    assert_same(run(stream, config), resumed)


def test_a_checkpoint_resumes_only_the_run_it_was_made_for(spark, tmp_path):
    """Another delay, another input, or another micro-batch plan would mix two runs' state: refused, in one line
    that says what differs, before Spark is even asked to start."""
    stream = generate("voltsp", scenario=3)
    config = make_config({"preset": "voltsp", "delay": "2s"})
    assert run_spark(stream, config, spark, workdir=tmp_path, stop_after=1, per_micro_batch=1) is None
    no_spark = lambda: pytest.fail("Spark must not start for a mismatched checkpoint")  # noqa: E731
    with pytest.raises(InputError, match=r"delay 2s there, 5s here") as refused:
        run_spark(stream, make_config({"preset": "voltsp", "delay": "5s"}), no_spark, workdir=tmp_path,
                  per_micro_batch=1)
    assert "\n" not in str(refused.value) and str(tmp_path) in str(refused.value)
    other = generate("voltsp", scenario=4)
    with pytest.raises(InputError, match=r"input .* rows sha256 \w+ there, .* here"):
        run_spark(other, config, no_spark, workdir=tmp_path, per_micro_batch=1)
    with pytest.raises(InputError, match="arrival batches per micro-batch differ"):
        run_spark(stream, config, no_spark, workdir=tmp_path, per_micro_batch=2)
    (tmp_path / "fingerprint.json").unlink()
    with pytest.raises(InputError, match="without a fingerprint"):
        run_spark(stream, config, no_spark, workdir=tmp_path, per_micro_batch=1)


def test_a_finished_checkpoint_gives_its_result_again(spark, tmp_path):
    stream = generate("voltsp", scenario=3)
    config = make_config({"preset": "voltsp", "delay": "2s"})
    first = run_spark(stream, config, spark, workdir=tmp_path)
    assert_same(first, run_spark(stream, config, spark, workdir=tmp_path))


def test_the_plan_never_splits_an_arrival_batch_and_covers_them_all():
    stream = generate("textbook", events=20_000)
    batches = batches_for(stream, replace(preset("voltsp"), batches=BatchSpec.parse("event")))
    plan = plan_micro_batches(batches)
    assert plan.bounds[0] == 0 and plan.bounds[-1] == 20_000 and list(plan.bounds) == sorted(set(plan.bounds))
    assert plan.data_micro_batches == 20_000 // MIN_ROWS_PER_MICRO_BATCH  # the 20k stream: 5,000 rows each
    coarse = assign_batches(stream, BatchSpec.parse("count:7000"))
    plan = plan_micro_batches(coarse)  # an arrival batch bigger than the target is carried whole
    assert list(plan.bounds) == list(range(len(coarse.commit_time))) + [len(coarse.commit_time)]
    assert plan_micro_batches(batches, 7_000).bounds == (0, 7_000, 14_000, 20_000)
    with pytest.raises(InputError, match="arrival-batches-per-micro-batch"):
        plan_micro_batches(batches, 0)


def test_progress_once_per_micro_batch_and_cancel_then_resume(spark, tmp_path):
    stream = generate("voltsp", scenario=4)
    config = make_config({"preset": "voltsp", "idle_timeout": "30s", "delay": "5s"})
    seen = []
    cancel = threading.Event()

    def progress(p):
        seen.append(p)
        cancel.set()  # stop after the first micro-batch

    with pytest.raises(Cancelled, match=str(tmp_path)):
        run_spark(stream, config, spark, workdir=tmp_path, progress=progress, cancel=cancel, per_micro_batch=1)
    assert seen and seen[0].batch == 1 and seen[0].rows > 0
    seen.clear()
    resumed = run_spark(stream, config, spark, workdir=tmp_path, progress=seen.append, per_micro_batch=1)
    assert_same(run(stream, config), resumed)
    numbers = [p.batch for p in seen]
    assert numbers == sorted(numbers) and numbers[-1] == seen[-1].batches  # ends with the end-of-input batch
    assert any(p.watermark is not None for p in seen)


def test_failure_names_the_checkpoint_to_resume_from(spark, tmp_path):
    stream = generate("voltsp", scenario=1)
    config = make_config({"preset": "voltsp"})
    assert run_spark(stream, config, spark, workdir=tmp_path, stop_after=1, per_micro_batch=1) is None
    (tmp_path / "input" / "part-000001.parquet").write_text("not parquet")  # a bad file
    with pytest.raises(SparkRunError) as failure:
        run_spark(stream, config, spark, workdir=tmp_path, per_micro_batch=1)
    message = str(failure.value)
    assert f"--checkpoint {tmp_path}" in message and "\n" not in message
    committed = [f for f in (tmp_path / "checkpoint" / "commits").iterdir() if f.name.isdigit()]
    assert 1 <= len(committed) < 5 and f"with {len(committed)} of 5 micro-batches committed" in message


def test_spark_sweep_gives_the_local_curve(spark):
    from explorer.metrics import curve
    from explorer.spark.sweep import curve_on_spark

    textbook = generate("textbook", events=3000)
    config = preset("textbook")
    delays = [d * S // 2 for d in range(9)]
    assert curve_on_spark(spark, textbook, [config], delays, chunks=3) == curve(textbook, config, delays)
    heard = []  # one task per delay: Spark's status tracker counts them as they finish
    assert curve_on_spark(spark, textbook, [config], delays, progress=heard.append) == curve(textbook, config, delays)
    assert heard[-1].done == heard[-1].total == 9 and [p.done for p in heard] == sorted(p.done for p in heard)
    idle = generate("idle-key")  # idle timeouts and sessions: the reference engine inside the tasks
    config = replace(preset("voltsp", idle_timeout=30 * S), window=WindowSpec.parse("session:4"))
    mixed = [config, config.with_time(strategy=Strategy.MAX)]
    expected = [row for c in mixed for row in curve(idle, c, delays[:3])]
    assert curve_on_spark(spark, idle, mixed, delays[:3]) == expected
    # scripted watermarks travel to the tasks (they used to arrive without them: exit 1 and a traceback)
    scripted = load_events(Path(__file__).parents[1] / "data" / "flink-sliding-scripted.csv")
    config = make_config({"preset": "flink", "strategy": "scripted", "window": "sliding:3:1"})
    assert curve_on_spark(spark, scripted, [config], delays[:2]) == curve(scripted, config, delays[:2])


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


LOOPBACK = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}  # /proc/net's hex


def _listening(pid: int) -> list[str]:
    """The local addresses (as /proc/net writes them) of every socket process ``pid`` listens on."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = fd.readlink().name
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    listening = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                listening.append(fields[1].split(":")[0])
    return listening


def test_local_spark_listens_on_the_loopback_interface_only(spark):
    """Every socket the driver's JVM listens on (RPC, block manager, py4j) is bound to 127.0.0.1 / ::1."""
    listening = _listening(spark.sparkContext._gateway.proc.pid)
    assert len(listening) >= 2, listening  # the RPC and block-manager ports, at least
    assert set(listening) <= LOOPBACK, listening


def _children(pid: int) -> list[int]:
    """Every descendant process of ``pid`` (from /proc)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _command_name(pid: int) -> str:
    """A process's name, or "" when it has exited since it was listed (Spark starts short-lived helpers)."""
    try:
        return Path(f"/proc/{pid}/comm").read_text()
    except OSError:
        return ""


@pytest.mark.spark
def test_the_jvm_dying_mid_run_gives_one_line_and_the_committed_count(tmp_path):
    """Kill only Spark's JVM once a micro-batch has committed: exit 2, one line that counts the committed
    micro-batches and names the checkpoint, and no PySpark or py4j traceback on stderr. (Before that: with the
    web UI on, it too listens on the loopback interface only.)"""
    import os
    import signal
    import subprocess
    import sys
    import time

    work = tmp_path / "work"
    cli = subprocess.Popen([sys.executable, "-m", "explorer", "run", "--synthetic", "textbook", "--events", "3000",
                            "--engine", "spark", "--spark-ui", "--checkpoint", str(work),
                            "--arrival-batches-per-micro-batch", "20",
                            "--format", "json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    commits = work / "checkpoint" / "commits"
    deadline = time.monotonic() + 240
    while not (commits.is_dir() and any(f.name.isdigit() for f in commits.iterdir())):
        assert cli.poll() is None and time.monotonic() < deadline, "the run ended before a micro-batch committed"
        time.sleep(0.2)
    java = [pid for pid in _children(cli.pid) if "java" in _command_name(pid)]
    assert len(java) == 1
    listening = _listening(java[0])
    assert len(listening) >= 3 and set(listening) <= LOOPBACK, listening  # RPC, block manager, web UI
    for pid in java:
        os.kill(pid, signal.SIGKILL)
    _, stderr = cli.communicate(timeout=240)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert cli.returncode == 1, stderr  # an engine that failed on valid input, not bad input (2)
    assert "Traceback" not in stderr and "py4j" not in stderr.lower(), stderr
    assert len(lines) == 1 and lines[0].startswith("error: Spark failed with "), stderr
    assert "JVM stopped" in lines[0] and str(work / "spark.log") in lines[0]
    committed = int(lines[0].split("with ")[1].split(" of ")[0])
    assert committed >= 1 and f"--checkpoint {work}" in lines[0]


def test_kafka_streams_stream_time_per_partition_on_spark(spark):
    """The kafka-streams preset's watermark per partition (scope partition) lives in Spark's state like the
    others: a Kafka export (each device in one partition) gives the local Result, sessions included."""
    stream = generate("kafka-export", devices=6, duration=90, offline_prob=0.02, mean_offline=20)
    for window in ("tumbling:10s", "session:4s"):
        config = replace(preset("kafka-streams", delay=2 * S), window=WindowSpec.parse(window))
        local = run(stream, config)
        assert local.metrics.dropped > 0, window
        assert_same(local, run_spark(stream, config, spark))


@pytest.mark.parametrize("per_micro_batch", [1, 4])
def test_scripted_watermarks_on_spark(spark, per_micro_batch):
    """The input's watermark rows reach the engine inside Spark, those alone in their arrival batch too (Flink's
    WindowOperatorTest case, one batch per row): the local Result, however the batches are cut into
    micro-batches. The runner used to refuse the scripted strategy."""
    stream = load_events(Path(__file__).parents[1] / "data" / "flink-sliding-scripted.csv")
    config = replace(make_config({"preset": "flink", "strategy": "scripted", "window": "sliding:3:1"}),
                     batches=BatchSpec.parse("event"))
    local = run(stream, config)
    assert (np.diff(batches_for(stream, config).starts) == 0).any()  # batches holding a watermark row alone
    assert local.metrics.windows_emitted > 0
    assert_same(local, run_spark(stream, config, spark, per_micro_batch=per_micro_batch))


@pytest.mark.spark
def test_ctrl_c_mid_run_exits_130_with_one_line_saying_how_to_resume(tmp_path):
    """Ctrl-C reaches the whole process group (the JVM too): exit 130 and one line with the micro-batches done and
    the checkpoint to resume from (it used to end by the signal, −2, with nothing on stderr)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    work = tmp_path / "work"
    cli = subprocess.Popen([sys.executable, "-m", "explorer", "run", "--synthetic", "textbook", "--events", "3000",
                            "--engine", "spark", "--checkpoint", str(work), "--arrival-batches-per-micro-batch", "20"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    commits = work / "checkpoint" / "commits"
    deadline = time.monotonic() + 240
    while not (commits.is_dir() and any(f.name.isdigit() for f in commits.iterdir())):
        assert cli.poll() is None and time.monotonic() < deadline, "the run ended before a micro-batch committed"
        time.sleep(0.2)
    os.killpg(cli.pid, signal.SIGINT)
    _, stderr = cli.communicate(timeout=120)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert cli.returncode == 130, stderr
    assert len(lines) == 1 and lines[0].startswith("error: interrupted after "), stderr
    assert int(lines[0].split("after ")[1].split(" of ")[0]) >= 1  # what the checkpoint holds, counted there
    assert lines[0].endswith(f"resume with --checkpoint {work}")
