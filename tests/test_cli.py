"""The command line's stable surface: JSON fields, --out files, YAML configs, presets, generate."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from explorer.cli import main

S = 1_000_000


def cli_json(capsys, *args):
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_run_json_has_the_contract_fields(capsys):
    out = cli_json(capsys, "run", "--synthetic", "voltsp", "--scenario", "3", "--strategy", "max", "--format", "json")
    assert set(out) >= {"windows", "events", "watermarks", "metrics"}
    first = out["windows"][0]
    assert set(first) >= {"key", "start", "end", "count", "ids", "emit_batch", "emit_time", "watermark",
                          "effective_watermark", "reason", "revision"}
    assert first["ids"] == ["e1", "e2", "e6"] and first["emit_batch"] == 2 and first["watermark"] == 12 * S
    assert {e["id"]: e["status"] for e in out["events"]}["e3"] == "side_output"
    assert [(w["batch"], w["watermark"] // S) for w in out["watermarks"]] == [(1, 5), (2, 12), (3, 12), (4, 25)]
    assert "from the stream's zero" in out["units"]["times"] and "start_iso" not in first
    m = out["metrics"]
    assert m["on_time"] + m["late_updated"] + m["side_output"] + m["dropped"] == m["events"] == 6


def test_durations_and_late_policy(capsys):
    out = cli_json(capsys, "run", "--synthetic", "voltsp", "--scenario", "3", "--strategy", "max",
                   "--delay", "3000ms", "--format", "json")
    assert out["config"]["delay"] == 3_000_000 and out["metrics"]["side_output"] == 0
    out = cli_json(capsys, "run", "--synthetic", "voltsp", "--scenario", "3", "--strategy", "max",
                   "--late", "drop", "--format", "json")
    assert out["metrics"]["dropped"] == 1 and out["metrics"]["side_output"] == 0


def test_allowed_lateness_reemits_a_revision(capsys):
    out = cli_json(capsys, "run", "--synthetic", "voltsp", "--scenario", "3", "--strategy", "max",
                   "--allowed-lateness", "5s", "--format", "json")
    first = [w for w in out["windows"] if w["start"] == 0]
    assert [(w["revision"], w["reason"], w["ids"]) for w in first] == [
        (1, "WATERMARK", ["e1", "e2", "e6"]), (2, "LATE_UPDATE", ["e1", "e2", "e6", "e3"])]
    assert out["metrics"]["late_updated"] == 1 and out["metrics"]["updates"] == 1


def test_the_summary_counts_kafka_streams_tombstones(tmp_path, capsys):
    """Gap 10 s, grace 20 s: a@0 and b@20 are two sessions; c@10 merges them, forwarding a tombstone for each
    first."""
    (tmp_path / "s.csv").write_text("id,key,event_time\na,k,0\nb,k,20\nc,k,10\n")
    assert main(["run", str(tmp_path / "s.csv"), "--preset", "kafka-streams", "--window", "session:10",
                 "--delay", "20s", "--emit", "on-update"]) == 0
    assert "updates 1, tombstones 2 (sessions a record replaced)," in capsys.readouterr().out
    assert main(["run", str(tmp_path / "s.csv"), "--preset", "spark", "--window", "session:10"]) == 0
    assert "tombstones" not in capsys.readouterr().out


def test_yaml_config_in_voltsp_words(tmp_path, capsys):
    (tmp_path / "pipeline.yaml").write_text("""
emitter:
  tumbling-time-window:
    windowSpan: 10s
    keyExtractor: org.acme.Event::userId
    timeConfig:
      eventTimeExtractor: "org.acme.Event::event_time"
      watermarkStrategy: MAX_EVENT_TIME
      delayWindowClose: 3s
      idleTimeout: 5m
""")
    out = cli_json(capsys, "run", "--synthetic", "voltsp", "--scenario", "4", "--config",
                   str(tmp_path / "pipeline.yaml"), "--format", "json")
    assert [w["reason"] for w in out["windows"]] == ["IDLE_TIMEOUT", "IDLE_TIMEOUT"]
    assert out["windows"][0]["emit_time"] == 360 * S


def test_yaml_errors_are_one_line(tmp_path):
    (tmp_path / "bad.yaml").write_text("timeConfig:\n  watermarkStrategy: SOMETIMES\n")
    proc = subprocess.run([sys.executable, "-m", "explorer", "run", "--synthetic", "voltsp", "--config",
                           str(tmp_path / "bad.yaml")], capture_output=True, text=True)
    assert proc.returncode == 2 and "watermarkStrategy must be one of" in proc.stderr


@pytest.mark.parametrize("args,message", [
    (["run", "--synthetic", "voltsp", "--window", "hopping:5"], "unknown window"),
    (["run", "--synthetic", "voltsp", "--delay", "soon"], "cannot read duration"),
    (["run", "--synthetic", "voltsp", "--batches", "count:0"], "count:N"),
    (["run", "--synthetic", "voltsp", "--seed", "3"], "has no option(s) --seed"),
    (["run"], "an events file"),
])
def test_bad_options_exit_2(args, message, capsys):
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_out_dir_and_generate_roundtrip(tmp_path, capsys):
    target = tmp_path / "idle.parquet"
    assert main(["generate", "idle-key", "--silent-after", "20", "--out", str(target)]) == 0
    assert main(["run", str(target), "--idle-timeout", "30s", "--out", str(tmp_path / "res")]) == 0
    windows = pd.read_csv(tmp_path / "res" / "windows.csv")
    quiet = windows[windows["key"] == "quiet"]
    assert (quiet["reason"] == "IDLE_TIMEOUT").any()
    events = pd.read_csv(tmp_path / "res" / "events.csv")
    assert len(events) == len(pd.read_parquet(target))
    assert json.loads((tmp_path / "res" / "metrics.json").read_text())["metrics"]["events"] == len(events)


def test_windows_csv_written_in_slices_is_the_whole_table(tmp_path, capsys, monkeypatch):
    """windows.csv is written a bounded number of ids at a time; cut small, it must still be the one table."""
    import explorer.cli

    args = ["run", "--synthetic", "textbook", "--events", "400", "--preset", "flink", "--allowed-lateness", "30s"]
    assert main(args + ["--out", str(tmp_path / "whole")]) == 0
    monkeypatch.setattr(explorer.cli, "IDS_PER_WRITE", 7)
    assert main(args + ["--out", str(tmp_path / "sliced")]) == 0
    whole, sliced = (tmp_path / "whole" / "windows.csv").read_text(), (tmp_path / "sliced" / "windows.csv").read_text()
    assert whole == sliced and whole.count("\n") > 40 and whole.startswith("key,start,end,count,ids,")
    first = pd.read_csv(tmp_path / "sliced" / "windows.csv").iloc[0]
    assert len(json.loads(first["ids"])) == first["count"]


def test_curve_formats(capsys):
    rows = cli_json(capsys, "curve", "--synthetic", "textbook", "--events", "1000", "--preset", "textbook",
                    "--delays", "0,5s", "--format", "json")
    assert [r["delay_us"] for r in rows] == [0, 5 * S]
    assert set(rows[0]) == {"delay_us", "completeness", "completeness_live", "open_at_end", "dropped", "side_output",
                            "late_updated", "avg_emit_latency_us", "p95_latency_us", "processing_latency_us"}
    assert 0 < rows[0]["completeness"] < rows[1]["completeness"] <= 1
    # a live job never gets the windows only the end of input closes: on the textbook stream the last one
    assert all(r["open_at_end"] >= 1 and r["completeness_live"] < r["completeness"] for r in rows)
    assert main(["curve", "--synthetic", "textbook", "--events", "500", "--delays", "1", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("delay_us,completeness,completeness_live,open_at_end,dropped")


def test_voltsp_yaml_round_trip(tmp_path):
    import yaml
    from explorer.config import (LatePolicy, Schedule, Scope, Strategy, TimeSource, load_yaml_config, preset,
                                 time_config_to_voltsp)
    S = 1_000_000
    config = preset("voltsp", delay=3 * S, strategy=Strategy.MAX, idle_timeout=300 * S, idle_clock=TimeSource.EVENT,
                    allowed_lateness=5 * S, late_policy=LatePolicy.DROP, scope=Scope.GLOBAL, schedule=Schedule.BACKLOG)
    path = tmp_path / "out.yaml"
    path.write_text(yaml.safe_dump({"window": "tumbling:10", "timeConfig": time_config_to_voltsp(config.time, "ts")}))
    loaded = load_yaml_config(path)
    assert loaded.config.time == config.time and loaded.event_time_column == "ts"


def test_scripted_watermark_rows_replay_flinks_sliding_test(capsys):
    """data/flink-sliding-scripted.csv is Flink's testSideOutputDueToLatenessSliding (watermarks + 1 ms): one
    side output, two elements dropped from one window but kept by another."""
    args = ["data/flink-sliding-scripted.csv", "--time-unit", "ms", "--preset", "flink", "--delay", "0",
            "--window", "sliding:3s:1s", "--batches", "event"]
    out = cli_json(capsys, "run", *args, "--strategy", "scripted", "--format", "json")
    statuses = {e["id"]: e["status"] for e in out["events"]}
    assert [i for i, s in statuses.items() if s == "side_output"] == ["h"]
    assert out["metrics"]["partly_dropped"] == 2 and out["metrics"]["events"] == 8
    assert main(["run", *args]) == 0
    assert "4 scripted watermark row(s) were not used: --strategy scripted follows them" in capsys.readouterr().out
    assert main(["run", "--synthetic", "voltsp", "--strategy", "scripted"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "strategy scripted follows the input's watermark rows" in err


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_watermark_rows_read_alike_from_every_format(tmp_path, suffix):
    from explorer.streams import load_events

    frame = pd.read_csv("data/flink-sliding-scripted.csv", dtype=str, keep_default_na=False)
    frame["event_time"] = frame["event_time"].astype(int)
    path = tmp_path / f"scripted{suffix}"
    if suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.to_json(path, orient="records", lines=True)
    ours, theirs = load_events("data/flink-sliding-scripted.csv", "ms"), load_events(path, "ms")
    assert ours.watermarks.to_dict("list") == theirs.watermarks.to_dict("list")
    assert ours.watermarks["watermark"].tolist() == [2_000_000, 3_001_000, 6_001_000, 25_001_000]
    assert ours.watermarks["after"].tolist() == [1, 2, 7, 8]
    assert ours.events["id"].tolist() == theirs.events["id"].tolist() == list("abcdefgh")


@pytest.mark.parametrize("error, status", [
    ("InputError", 2),  # bad input
    ("SparkRunError", 1), ("NativeMismatch", 1),  # an engine failed on valid input
    ("Cancelled", 130), ("NativeCancelled", 130), ("KeyboardInterrupt", 130),  # the user stopped it
])
def test_the_exit_status_says_whose_fault_it_was(monkeypatch, capsys, error, status):
    """Dispatched by the error's type: a JVM crash is not "bad input" (it used to exit 2)."""
    import explorer.cli as cli
    from explorer.errors import InputError
    from explorer.spark.native import NativeCancelled
    from explorer.spark.native_result import NativeMismatch
    from explorer.spark.runner import Cancelled, SparkRunError

    kind = {"InputError": InputError, "SparkRunError": SparkRunError, "NativeMismatch": NativeMismatch,
            "Cancelled": Cancelled, "NativeCancelled": NativeCancelled, "KeyboardInterrupt": KeyboardInterrupt}[error]

    def fail(_args):
        raise kind("what went wrong")

    monkeypatch.setitem(cli.COMMANDS, "run", fail)
    assert cli.main(["run", "--synthetic", "textbook"]) == status
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
