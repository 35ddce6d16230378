"""What compare's causes cost beside compare itself: three presets on 003's stream (20,000 events) and on the
generated Kafka topic export (50,052 events), the disagreements first, then each group's cause found by re-running
one side with one setting changed (``explorer.compare_cause``), timed in the same run.

    .venv/bin/python benchmarks/bench_compare.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from explorer import generate
from explorer.cli import main as cli
from explorer.compare import compare, side_config
from explorer.config import WindowSpec
from explorer.streams import load_events

COLUMNS = {"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id"}


def timed(name: str, stream, presets: tuple[str, ...], window: str) -> None:  # type: ignore[no-untyped-def]
    sides = {p: side_config(p, window=WindowSpec.parse(window)) for p in presets}
    began = time.perf_counter()
    comparison = compare(stream, sides)
    compared = time.perf_counter()
    groups = comparison.groups
    done = time.perf_counter()
    print(f"{name:<28} {len(stream):>7,} events  compare {compared - began:5.2f} s  causes {done - compared:5.2f} s  "
          f"({len(comparison.counterfactuals.runs)} re-runs, {len(groups)} groups)")


def main() -> None:
    timed("textbook: voltsp,flink,spark", generate("textbook"), ("voltsp", "flink", "spark"), "tumbling:10")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "topic-export.csv"
        assert cli(["generate", "kafka-export", "--out", str(path)]) == 0
        timed("kafka: spark,flink,kafka-str.", load_events(path, columns=COLUMNS), ("spark", "flink", "kafka-streams"),
              "tumbling:1m")


if __name__ == "__main__":
    main()
