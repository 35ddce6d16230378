"""Naive local times (issue 31: "naive times are read as UTC, with no way to say the zone"): --timezone names the
zone they were written in. Expected instants are computed here with Python's own zoneinfo and datetime
arithmetic (fold=0 is the first occurrence of a repeated local time), never with the loader's pandas."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pandas as pd
import pytest

from explorer import InputError, load_events
from explorer.cli import build_parser, main

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def instant_us(text: str, zone: str) -> int:
    written = datetime.fromisoformat(text)  # an offset written in the text is kept
    local = written if written.tzinfo else written.replace(tzinfo=ZoneInfo(zone))  # fold=0: the first occurrence
    return (local - EPOCH) // timedelta(microseconds=1)


# NYC TLC yellow trips write pickup and dropoff as naive New York wall-clock times; 2026-11-01 01:00–02:00 happens
# twice (EDT, then EST)
TAXI = [("t1", "2026-10-31 23:58:10.250000", "2026-11-01 00:20:00"),
        ("t2", "2026-11-01 00:40:00", "2026-11-01 01:15:30"),  # dropoff in the repeated hour
        ("t3", "2026-11-01 01:05:00", "2026-11-01 01:40:00"),  # both in it
        ("t4", "2026-11-01 02:10:00", "2026-11-01 02:31:07.5")]


def taxi(tmp_path, rows=TAXI):
    path = tmp_path / "yellow_tripdata.csv"
    path.write_text("trip,tpep_pickup_datetime,tpep_dropoff_datetime,PULocationID\n"
                    + "".join(f"{t},{p},{d},{132 + i}\n" for i, (t, p, d) in enumerate(rows)))
    return path


TAXI_COLUMNS = {"id": "trip", "event_time": "tpep_pickup_datetime", "arrival_time": "tpep_dropoff_datetime",
                "key": "PULocationID"}


def test_naive_local_times_are_read_in_the_zone_given(tmp_path):
    stream = load_events(taxi(tmp_path), columns=TAXI_COLUMNS, timezone="America/New_York")
    events = stream.events.set_index("id")
    for trip, pickup, dropoff in TAXI:
        assert events.loc[trip, "event_time"] == instant_us(pickup, "America/New_York")
        assert events.loc[trip, "arrival_time"] == instant_us(dropoff, "America/New_York")
    assert stream.time_formats["event_time"].describe() == (
        "ISO-8601 date-times (no time zone, read as local time in America/New_York; 1 ambiguous (the clocks fell "
        "back) taken at their first occurrence)")
    assert "2 ambiguous" in stream.time_formats["arrival_time"].describe()
    utc = load_events(taxi(tmp_path), columns=TAXI_COLUMNS).events.set_index("id")
    assert utc.loc["t1", "event_time"] == instant_us(TAXI[0][1], "UTC")  # the default stays UTC


def test_validate_says_which_zone_naive_times_were_read_in(tmp_path, capsys):
    args = ["validate", str(taxi(tmp_path)), "--event-time-col", "tpep_pickup_datetime", "--arrival-time-col",
            "tpep_dropoff_datetime", "--id-col", "trip"]
    assert main(args) == 0
    assert "event_time: ISO-8601 date-times (no time zone, read as UTC (--timezone ZONE for local times))" in \
        capsys.readouterr().out
    assert main([*args, "--timezone", "Europe/Berlin"]) == 0
    assert "read as local time in Europe/Berlin" in capsys.readouterr().out


def test_a_local_time_the_clocks_skipped_is_refused_naming_the_row(tmp_path, capsys):
    """2026-03-08 02:00–03:00 never happens in New York: no instant to take, so no guess."""
    rows = [*TAXI[:2], ("t5", "2026-03-08 02:30:00", "2026-03-08 03:10:00"),
            ("t6", "2026-03-08 02:59:59", "2026-03-08 03:10:00")]
    path = taxi(tmp_path, rows)
    with pytest.raises(InputError) as info:
        load_events(path, columns=TAXI_COLUMNS, timezone="America/New_York")
    assert str(info.value).startswith(f"{path}: column 'event_time' row 3: '2026-03-08 02:30:00' never happened in "
                                      "America/New_York")
    assert "2 such row(s)" in str(info.value)
    assert load_events(path, columns=TAXI_COLUMNS, timezone="Europe/Berlin")  # no gap there that day


@pytest.mark.parametrize("command", [["run"], ["curve", "--delays", "0,5"], ["tune", "--target", "99"],
                                     ["compare", "--presets", "voltsp,flink"], ["export", "--to", "pyspark"],
                                     ["verify", "--engine", "spark"], ["validate"]])
def test_the_zone_reaches_every_command_that_loads_a_file(tmp_path, capsys, command):
    """Each command reads the file in the zone given: the skipped time is refused (one line, exit 2) with it, and
    read as UTC without it. (verify refuses before it starts an engine.)"""
    path = taxi(tmp_path, [("a", "2026-03-29T02:30:00", "2026-03-29T03:30:00"),
                           ("b", "2026-03-29T03:30:00", "2026-03-29T03:31:00")])
    argv = [command[0], str(path), *command[1:], "--event-time-col", "tpep_pickup_datetime",
            "--arrival-time-col", "tpep_dropoff_datetime", "--id-col", "trip"]
    assert main([*argv, "--timezone", "Europe/Berlin"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "row 1: '2026-03-29T02:30:00' never happened in Europe/Berlin" in err
    if command[0] in ("run", "validate", "export"):
        assert main(argv) == 0


def test_every_command_with_time_unit_takes_timezone():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # noqa: SLF001 (argparse keeps them there)
    for name, sub in commands.items():
        options = {o for action in sub._actions for o in action.option_strings}  # noqa: SLF001
        assert ("--time-unit" in options) == ("--timezone" in options), name


def test_zoned_times_and_epoch_numbers_ignore_the_zone(tmp_path):
    path = tmp_path / "zoned.csv"
    path.write_text("id,event_time,arrival_time\na,2026-11-01T01:30:00-05:00,1793514600000\n"
                    "b,2026-11-01T05:31:00Z,1793514700000\n")
    plain = load_events(path).events
    pd.testing.assert_frame_equal(load_events(path, timezone="Asia/Kolkata").events, plain)
    assert plain["event_time"].tolist() == [instant_us("2026-11-01T01:30:00-05:00", "UTC"),
                                            instant_us("2026-11-01T05:31:00+00:00", "UTC")]


def test_a_naive_time_beside_a_zoned_one_is_allowed_once_the_zone_is_named(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_text("id,event_time,arrival_time\na,2026-07-01T12:00:00,2026-07-01T10:00:05Z\n")
    with pytest.raises(InputError, match="has no time zone but arrival_time does; .* or name it with --timezone"):
        load_events(path)
    stream = load_events(path, timezone="Europe/Berlin")
    assert stream.events["event_time"].tolist() == [instant_us("2026-07-01T12:00:00", "Europe/Berlin")]


def test_naive_parquet_timestamps_are_read_in_the_zone(tmp_path):
    written = ["2026-11-01 01:30:00.000001", "2026-11-01 03:00:00"]
    frame = pd.DataFrame({"event_time": pd.to_datetime(written, format="ISO8601").astype("datetime64[us]")})
    frame.to_parquet(tmp_path / "naive.parquet")
    stream = load_events(tmp_path / "naive.parquet", timezone="America/Chicago")
    assert stream.events["event_time"].tolist() == [instant_us(t, "America/Chicago") for t in written]
    assert stream.time_formats["event_time"].describe() == (
        "timestamps (no time zone, read as local time in America/Chicago; 1 ambiguous (the clocks fell back) taken "
        "at their first occurrence)")


@pytest.mark.parametrize("zone, words", [("Europe/Berln", "did you mean 'Europe/Berlin'?"),
                                         ("../../etc/passwd", "not an IANA time zone name"), ("", "not an IANA")])
def test_a_zone_that_is_not_one_is_one_line(tmp_path, capsys, zone, words):
    assert main(["validate", str(taxi(tmp_path)), "--event-time-col", "tpep_pickup_datetime", "--timezone", zone]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "--timezone" in err
