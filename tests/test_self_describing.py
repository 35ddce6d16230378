"""Numbers out that say what they are, and durations that round-trip: any common spelling of a duration is
read, every printed duration is exact or says which way it is rounded, tune's answer pasted back reaches the
target, and the JSON and --out files say their units and give the same bytes for the same events."""

import json
import re
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import generate, preset
from explorer.cli import main
from explorer.cli.parser import parse_target
from explorer.cli.text import DELAY_WORDS
from explorer.config import PRESETS, apply_delay
from explorer.core import run_metrics
from explorer.errors import InputError
from explorer.metrics import CURVE_POINTS, tune
from explorer.timeutil import (exact_duration, format_duration, human_duration, human_duration_marked, parse_duration,
                               rounded_human)

from strategies import examples

S = 1_000_000
MIN, H, D = 60 * S, 3600 * S, 86400 * S


@pytest.mark.parametrize("text, micros", [
    ("49m35s", 49 * MIN + 35 * S), ("1h15m", H + 15 * MIN), ("10 minutes", 10 * MIN), ("PT49M35S", 49 * MIN + 35 * S),
    ("250ms", 250_000), ("1.5s", 1_500_000), ("90", 90 * S), ("1 d 2 h", D + 2 * H), ("2 hours", 2 * H),
    ("49 min 35 s", 49 * MIN + 35 * S), ("49m35.001s", 2_975_001_000), ("−55 s", -55 * S), ("7 µs", 7), ("7us", 7),
    ("P1DT2H", D + 2 * H), ("pt0.5s", 500_000), ("P1W", 7 * D), ("1h, 2 min", H + 2 * MIN), ("0.5 sec", 500_000),
    ("3 hrs", 3 * H), ("1.5ms", 1500), ("18.500001s", 18_500_001), (12, 12 * S), (0.25, 250_000),
])
def test_parse_duration_reads_every_common_form(text, micros):
    assert parse_duration(text) == micros


@pytest.mark.parametrize("text", ["", "   ", "nan", "inf", "-inf", "5m5m", "15m1h", "1e3", "P", "PT", "P1DT",
                                  "5 parsecs", "1 y", "9" * 30, "10 s s", "s", "1.2.3s", "x" * 500, float("nan"),
                                  True])
def test_parse_duration_refuses_in_one_line(text):
    with pytest.raises(InputError) as refused:
        parse_duration(text)
    assert "\n" not in str(refused.value) and len(str(refused.value)) < 200


@pytest.mark.parametrize("args, words", [
    (["run", "--synthetic", "voltsp", "--delay=-5s"], "must be ≥ 0"),
    (["run", "--synthetic", "voltsp", "--delay=-PT5S"], "must be ≥ 0"),
    (["curve", "--synthetic", "voltsp", "--delays=0,-5s"], "a delay is ≥ 0"),
    (["run", "--synthetic", "voltsp", "--delay", "nan"], "cannot read duration"),
    (["run", "--synthetic", "voltsp", "--delay", "1e99 days"], "cannot read duration"),
    (["run", "--synthetic", "voltsp", "--delay", "99999999999999999999 d"], "too large"),
    (["run", "--synthetic", "voltsp", "--window", "tumbling:"], "cannot read duration"),
])
def test_bad_durations_on_the_command_line_are_one_line(args, words, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(-400 * D, 400 * D))
def test_every_printed_duration_reads_back(micros):
    """exact_duration and format_duration give the µs back; human_duration gives a value that is the µs when
    nothing says rounded, above them for "rounded up" and below for "rounded down"."""
    assert parse_duration(exact_duration(micros)) == micros
    assert parse_duration(format_duration(micros)) == micros
    for up in (False, True):
        marked = human_duration_marked(micros, up=up)
        text, way = rounded_human(micros, up=up)
        shown = parse_duration(text)
        assert shown == parse_duration(human_duration(micros)) or up
        assert marked == (text if way is None else f"{text} (rounded {way})")
        assert {None: shown == micros, "up": shown > micros, "down": shown < micros}[way]
        if up:
            assert shown >= micros


def tune_lines(capsys, *args):
    assert main(["tune", *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", ["spark", "kafka-streams", "textbook", "voltsp"])
def test_tunes_printed_answer_pasted_back_reaches_the_target(name, capsys):
    """Every spelling of the answer tune prints (seconds, the exact duration, the human form rounded up) reaches
    the target when run; the human form rounded down would not (the issue's 49 min 35 s for 2,975.001 s)."""
    stream = generate("textbook", events=5000)
    out = tune_lines(capsys, "--synthetic", "textbook", "--events", "5000", "--preset", name, "--target", "99%")
    first = out.splitlines()[0]
    seconds = re.search(r": ([\d.]+) s", first).group(1)
    exact = re.search(r"--delay (\S+) reaches it", out).group(1)
    printed = [f"{seconds}s", exact]
    human = re.search(r"\(([^,)]+)(, rounded up)?\)$", first)
    if human:
        printed.append(human.group(1))
    assert f"{name}'s {DELAY_WORDS[name]}" in out or f"{name}' {DELAY_WORDS[name]}" in out
    for text in printed:
        assert run_metrics(stream, apply_delay(preset(name), parse_duration(text))).completeness >= 0.99, text
    delay = parse_duration(exact)
    assert parse_duration(f"{seconds}s") == delay
    assert run_metrics(stream, apply_delay(preset(name), delay - 1)).completeness < 0.99
    if human and human.group(2) is None:  # printed without "rounded": it is the delay itself
        assert parse_duration(human.group(1)) == delay


def test_tune_says_rounded_up_where_the_human_form_is_not_exact(capsys):
    out = tune_lines(capsys, "--synthetic", "textbook", "--events", "5000", "--preset", "spark", "--target", "0.99")
    delay = tune(generate("textbook", events=5000), preset("spark"), 0.99).delay
    human, way = rounded_human(delay, up=True)
    assert delay % 1000 == 0 and delay % S  # Spark's whole ms, not whole seconds: the human form is rounded
    assert out.splitlines()[0] == f"smallest delay reaching 99.00%: {delay / S:g} s ({human}, rounded {way})"
    assert f"  as spark's withWatermark delay (delayThreshold): --delay {exact_duration(delay)} reaches it" in out


def test_a_rounded_validate_says_which_way(tmp_path, capsys):
    """23 h 58 min is no longer "max 1 d" unqualified."""
    base = datetime(2026, 11, 20, tzinfo=timezone.utc)
    rows = [(0, 1), (10, 20), (30, 23 * 3600 + 58 * 60 + 30)]
    text = "id,event_time,arrival_time\n" + "".join(
        f"e{i},{(base + timedelta(seconds=e)).isoformat()},{(base + timedelta(seconds=a)).isoformat()}\n"
        for i, (e, a) in enumerate(rows))
    (tmp_path / "late.csv").write_text(text)
    assert main(["validate", str(tmp_path / "late.csv")]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "delay (arrival − event)" in x)
    printed = re.search(r"max (.+)$", line).group(1)
    assert printed == "1 d (rounded up)"
    assert parse_duration(printed.removesuffix(" (rounded up)")) > 23 * H + 58 * MIN


@pytest.mark.parametrize("text, fraction", [("99%", 0.99), ("99", 0.99), ("0.99", 0.99), ("99.9 %", 0.999),
                                            ("1", 1.0), ("100%", 1.0), ("50", 0.5)])
def test_target_reads_per_cent_and_fractions(text, fraction):
    assert parse_target(text) == pytest.approx(fraction)


@pytest.mark.parametrize("text", ["0", "0%", "101", "101%", "-5", "nan", "inf", "abc", ""])
def test_a_target_out_of_range_is_one_line(text, capsys):
    assert main(["tune", "--synthetic", "voltsp", "--target", text]) == 2
    err = capsys.readouterr().err
    assert "--target" in err and err.count("\n") == 1


def test_every_target_form_gives_the_same_answer(capsys):
    outputs = {tune_lines(capsys, "--synthetic", "textbook", "--events", "2000", "--target", t)
               for t in ("99%", "99", "0.99")}
    assert len(outputs) == 1


def test_every_preset_has_its_engines_word_for_the_delay():
    assert set(DELAY_WORDS) == set(PRESETS)
    assert DELAY_WORDS["kafka-streams"] == "grace" and DELAY_WORDS["flink"] == "forBoundedOutOfOrderness (L)"


def test_negative_latencies_are_explained(capsys):
    assert main(["run", "--synthetic", "textbook", "--events", "2000", "--preset", "kafka-streams",
                 "--emit", "on-update"]) == 0
    out = capsys.readouterr().out
    assert "−" in out and "negative: emitted before the window's end" in out


# --- JSON and --out -------------------------------------------------------------------------------------------

EVENTS = [("e1", "a", 0, 1.2), ("e2", "a", 3.5, 4), ("e3", "b", 12, 13), ("e4", "a", 2, 19), ("e5", "b", 25, 26.25)]
BASE = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)


def write_both(tmp_path):
    """The same events as an ISO-8601 file and as an epoch-ms file, each named events.csv."""
    def iso(s):
        return (BASE + timedelta(seconds=s)).isoformat().replace("+00:00", "Z")

    def ms(s):
        return round((BASE + timedelta(seconds=s)).timestamp() * 1000)

    paths = []
    for form, spell in (("iso", iso), ("ms", ms)):
        (tmp_path / form).mkdir()
        path = tmp_path / form / "events.csv"
        path.write_text("id,key,event_time,arrival_time\n" +
                        "".join(f"{i},{k},{spell(e)},{spell(a)}\n" for i, k, e, a in EVENTS))
        paths.append(str(path))
    return paths


def test_the_same_events_in_iso_and_epoch_ms_give_byte_identical_json(tmp_path, capsys):
    outputs = []
    for path in write_both(tmp_path):
        assert main(["run", path, "--delay", "2s", "--format", "json"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    doc = json.loads(outputs[0])
    assert "µs since the Unix epoch" in doc["units"]["times"] and doc["config"]["delay"] == 2 * S
    first = doc["windows"][0]
    start = int(BASE.timestamp()) * S + 10 * S
    assert (first["key"], first["start"], first["start_iso"]) == ("b", start, "2026-11-20T09:00:10Z")
    assert first["end_iso"] == "2026-11-20T09:00:20Z" and isinstance(first["latency_event"], int)
    event = next(e for e in doc["events"] if e["id"] == "e1")
    assert event["windows_iso"] == [["2026-11-20T09:00:00Z", "2026-11-20T09:00:10Z"]]


def test_out_files_say_the_run_and_name_events_by_id(tmp_path, capsys):
    fingerprints = []
    for path, form in zip(write_both(tmp_path), ("iso", "ms")):
        out = tmp_path / f"out-{form}"
        assert main(["run", path, "--preset", "spark", "--delay", "1m30.5s", "--out", str(out)]) == 0
        metrics = json.loads((out / "metrics.json").read_text())
        config = metrics["config"]
        assert (config["preset"], config["window"], config["delay_us"]) == ("spark", "tumbling:10s", 90_500_000)
        assert parse_duration(config["delay"]) == 90_500_000 and config["window_size_us"] == 10 * S
        assert {f"{f}_us" for f in ("bound", "delay", "allowed_lateness", "idle_timeout", "heartbeat")} <= set(config)
        assert metrics["input"]["file"] == path and metrics["input"]["rows"] == len(EVENTS)
        assert metrics["metrics"]["events"] == len(EVENTS) and "µs" in metrics["units"]["times"]
        fingerprints.append(metrics["input"]["sha256"])
        events = pd.read_csv(out / "events.csv")
        assignments = pd.read_csv(out / "assignments.csv")
        assert set(assignments["event"]) == set(events["id"]) == {e[0] for e in EVENTS}
    assert fingerprints[0] == fingerprints[1]


def test_curve_sweeps_by_default_and_names_its_units(capsys):
    assert main(["curve", "--synthetic", "textbook", "--events", "2000", "--preset", "textbook"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].lstrip().startswith("delay (s)") and "latencies in s" in lines[0]
    assert len(lines) == 2 + CURVE_POINTS
    assert main(["curve", "--synthetic", "textbook", "--events", "2000", "--preset", "textbook",
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    stream = generate("textbook", events=2000)
    p999 = (stream.events["arrival_time"] - stream.events["event_time"]).quantile(0.999)
    assert rows[0]["delay_us"] == 0 and rows[-1]["delay_us"] >= p999 and len(rows) == CURVE_POINTS
    assert all(isinstance(r["delay_us"], int) for r in rows)
    assert rows[-1]["completeness"] >= rows[0]["completeness"]


def test_tune_json_gives_the_delay_exactly(capsys):
    assert main(["tune", "--synthetic", "textbook", "--events", "5000", "--preset", "spark", "--target", "99",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["delay_us"] == tune(generate("textbook", events=5000), preset("spark"), 0.99).delay
    assert parse_duration(out["delay_exact"]) == out["delay_us"]


def test_printed_instants_are_exact():
    from explorer.timeutil import format_instant, iso_instant

    assert format_instant(1_795_165_205_250_000, True) == "2026-11-20 09:00:05.250"
    assert format_instant(1_795_165_205_250_001, True) == "2026-11-20 09:00:05.250001"
    assert format_instant(123_456_789_500_001, False) == "123456789.500001 s"
    assert iso_instant(1_795_165_205_250_000) == "2026-11-20T09:00:05.25Z" and iso_instant(-1) == \
        "1969-12-31T23:59:59.999999Z"


def test_relative_run_table_names_its_unit(capsys):
    assert main(["run", "--synthetic", "voltsp", "--scenario", "3"]) == 0
    out = capsys.readouterr().out
    assert "start (s)" in out and "processing-time latency below 0" in out


def test_compare_json_in_micros_whatever_the_input(tmp_path, capsys):
    outputs = []
    for path in write_both(tmp_path):
        assert main(["compare", path, "--presets", "voltsp,flink", "--delay", "1s", "--format", "json"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    doc = json.loads(outputs[0])
    assert "µs since the Unix epoch" in doc["units"]["times"]
    assert all(isinstance(t, int) for d in doc["disagreements"] if d["kind"] == "window" for t in d["window"])


def test_each_emission_says_its_pane_index_and_timing_in_the_json_and_in_windows_csv(tmp_path, capsys):
    """Beam's PaneInfo for every row: pane_index = revision − 1; EARLY, ON_TIME or LATE by the reason (early
    firings, watermark or end of input, a late element). Rows of update output are EARLY while the window is open
    (the effective watermark before its end) and LATE once it has closed: the record cache flushes both kinds."""
    beam = ["--synthetic", "mobile-bursts", "--seed", "3", "--window", "tumbling:10s", "--preset", "beam",
            "--allowed-lateness", "20s", "--early-firings", "2s"]
    assert main(["run", *beam, "--format", "json"]) == 0
    windows = json.loads(capsys.readouterr().out)["windows"]
    assert all(w["pane_index"] == w["revision"] - 1 for w in windows)
    timing_of = {"EARLY": "EARLY", "WATERMARK": "ON_TIME", "END_OF_STREAM": "ON_TIME", "LATE_UPDATE": "LATE"}
    assert all(w["pane_timing"] == timing_of[w["reason"]] for w in windows)
    assert {w["pane_timing"] for w in windows} == {"EARLY", "ON_TIME", "LATE"}

    cached = ["--synthetic", "mobile-bursts", "--seed", "3", "--window", "tumbling:10s", "--preset", "kafka-streams",
              "--delay", "20s"]
    assert main(["run", *cached, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["windows"]
    assert {w["pane_timing"] == ("LATE" if w["effective_watermark"] >= w["end"] else "EARLY") for w in rows} == {True}
    assert {w["pane_timing"] for w in rows} == {"EARLY", "LATE"}
    assert main(["run", *cached, "--out", str(tmp_path)]) == 0
    table = pd.read_csv(tmp_path / "windows.csv")
    columns = list(table.columns)
    assert columns[columns.index("revision") + 1:columns.index("revision") + 3] == ["pane_index", "pane_timing"]
    assert table["pane_timing"].tolist() == [w["pane_timing"] for w in rows]
    assert table["pane_index"].tolist() == [w["pane_index"] for w in rows]
