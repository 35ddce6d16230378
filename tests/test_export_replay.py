"""Every exported Python program reads the user's file with the same few functions (``export.replay.READING``),
and they must read it as the explorer did: the same ids, keys, event times to the µs, and the same arrival order.
Otherwise a verify that differs would blame the engine for a misread file."""

import numpy as np
import pandas as pd
import pytest

from explorer.cli import main
from explorer.export.common import ExportSource
from explorer.export.replay import READING, settings_block, source_settings
from explorer.streams import load_events

COLUMNS = {"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id"}


def program_reads(path, source: ExportSource) -> list[dict]:
    """The events as the program's own code reads them, run here as the program runs it."""
    namespace: dict = {"np": np, "pd": pd}
    exec(settings_block(source_settings(source)) + "\n" + READING, namespace)
    return namespace["events_in_arrival_order"](namespace["read_events"](str(path)))


def explorer_reads(stream) -> list[dict]:
    ev = stream.events
    return [{"id": str(i), "key": str(k), "t": int(t), "arrival": int(a)}
            for i, k, t, a in zip(ev["id"], ev["key"], ev["event_time"], ev["arrival_time"])]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_the_programs_read_the_users_file_as_the_explorer_did(tmp_path, suffix):
    path = tmp_path / f"topic-export{suffix}"
    assert main(["generate", "kafka-export", "--devices", "5", "--duration", "600", "--out", str(path)]) == 0
    stream = load_events(path, columns=COLUMNS)
    source = ExportSource.of(stream)
    ours = explorer_reads(stream)
    theirs = program_reads(path, source)
    assert len(ours) > 500 and len({e["arrival"] for e in ours}) < len(ours)  # arrival ties, so order matters
    assert theirs == ours


def test_a_file_without_arrival_or_id_columns_arrives_in_file_order(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("event_time,key\n5,a\n3,b\n9,a\n1,b\n9,b\n")
    stream = load_events(path)
    assert program_reads(path, ExportSource.of(stream)) == explorer_reads(stream)
    assert [e["id"] for e in explorer_reads(stream)] == ["e1", "e2", "e3", "e4", "e5"]
