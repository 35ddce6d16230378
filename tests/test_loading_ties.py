"""Watermark rows that share an arrival time with events (issue 34, item 3): at one arrival instant, a watermark
row sits where the file puts it among that instant's events, as a test harness replaying the file row by row
has it; events between the same watermark rows are ordered by event time then id, whatever the file order."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from explorer.cli import main
from explorer.streams import stream_from_frame

ROWS = {"a": ("a", "event", 1, 0), "W": ("", "watermark", 10, 5), "x": ("x", "event", 3, 5),
        "y": ("y", "event", 2, 5), "V": ("", "watermark", 12, 5)}


def csv(tmp_path, order):
    path = tmp_path / f"{''.join(order)}.csv"
    path.write_text("id,kind,event_time,arrival_time\n" + "".join(",".join(map(str, ROWS[r])) + "\n" for r in order))
    return path


def statuses(capsys, path):
    assert main(["run", str(path), "--preset", "flink", "--strategy", "scripted", "--delay", "0", "--window",
                 "tumbling:5", "--batches", "event", "--format", "json"]) == 0
    return {e["id"]: e["status"] for e in json.loads(capsys.readouterr().out)["events"]}


@pytest.mark.parametrize("order, late", [("aWx", True), ("axW", False)])
def test_a_watermark_row_at_an_events_arrival_keeps_its_place_in_the_file(tmp_path, capsys, order, late):
    """x@3 is in window [0, 5): after watermark 10 (written before it, same arrival 5) it is late; written
    before the watermark, it is on time."""
    found = statuses(capsys, csv(tmp_path, order))
    assert found["a"] == "on_time"
    assert (found["x"] != "on_time") is late, found


def test_events_between_the_same_watermark_rows_are_in_event_time_order_whatever_the_file_says(tmp_path):
    streams = {order: stream_from_frame(pd.read_csv(csv(tmp_path, order)), name=order)
               for order in ("axyWV", "ayxWV", "aWyxV", "aWxyV", "aWVyx")}
    ids = {order: s.events["id"].tolist() for order, s in streams.items()}
    after = {order: s.watermarks["after"].tolist() for order, s in streams.items()}
    assert ids["axyWV"] == ids["ayxWV"] == ["a", "y", "x"] and after["axyWV"] == after["ayxWV"] == [3, 3]
    assert ids["aWyxV"] == ids["aWxyV"] == ["a", "y", "x"] and after["aWyxV"] == after["aWxyV"] == [1, 3]
    assert after["aWVyx"] == [1, 1]  # two watermark rows at one instant, in file order
    assert streams["aWVyx"].watermarks["watermark"].tolist() == [10_000_000, 12_000_000]
