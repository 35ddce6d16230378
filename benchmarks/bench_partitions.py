"""Many partitions cost what few do (issue 17): the same events spread over 4 partitions and over one partition
per two events, for every preset that merges partitions, timed in the same run.

    .venv/bin/python benchmarks/bench_partitions.py

Before the merge was a tree (``core/compiled/watermarks.py``), every element read every partition's mark: 40k
events over 20k partitions took 2.7 s with the flink preset, against 0.03 s over 4, and the ratio grew with the
stream. Goal: the ratio stays flat as events and partitions grow together, i.e. the cost is linear in events.
What remains of it is output: a watermark trace row per partition each batch touches (one per event here).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from explorer import preset
from explorer.config import RunConfig, Scope
from explorer.core import run
from explorer.streams import Stream, stream_from_frame

from bench_families import timed

S = 1_000_000
MERGING: dict[str, RunConfig] = {
    "flink (partition min)": preset("flink", delay=S),
    "flink + partition idleness 5 s": preset("flink", delay=S, source_idle_timeout=5 * S),
    "storm (partition min, 1 s batches)": preset("storm", delay=S),
    "voltsp, partition max": preset("voltsp", delay=S, scope=Scope.PARTITION_MAX),
    "bytewax event clock, partition min": preset("bytewax", delay=S, scope=Scope.PARTITION_MIN),
}


def spread(events: int, partitions: int, seed: int = 1) -> Stream:
    """10 ms apart in event time, arriving after an exponential delay (mean 0.5 s), 50 keys, round-robin
    over ``partitions``."""
    rng = np.random.default_rng(seed)
    event_time = np.arange(events) * 0.01
    frame = pd.DataFrame({"id": [f"e{i}" for i in range(events)], "key": [f"k{i % 50}" for i in range(events)],
                          "partition": [f"p{i % partitions}" for i in range(events)], "event_time": event_time,
                          "arrival_time": event_time + rng.exponential(0.5, events)})
    return stream_from_frame(frame.sort_values("arrival_time", kind="stable"), name=f"{partitions} partitions")


def main() -> None:
    print(f"python {sys.version.split()[0]}; best of 3 runs; ratio = many partitions / 4 partitions, same run")
    print("| events | partitions | setting | 4 partitions | many | ratio |\n|---|---|---|---|---|---|")
    for events in (20_000, 40_000, 200_000):
        few, many = spread(events, 4), spread(events, events // 2)
        for name, config in MERGING.items():
            t_few = timed(lambda few=few, config=config: run(few, config), 3)
            t_many = timed(lambda many=many, config=config: run(many, config), 3)
            print(f"| {events:,} | {events // 2:,} | {name} | {t_few * 1000:.0f} ms | {t_many * 1000:.0f} ms | "
                  f"{t_many / t_few:.2f} |")


if __name__ == "__main__":
    main()
