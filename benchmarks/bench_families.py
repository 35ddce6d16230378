"""Every family of settings at slider speed (issue 13): one table, each row timed in the same run and given
as a ratio to the baseline, the voltsp preset with tumbling windows and no idle timeout.

    .venv/bin/python benchmarks/bench_families.py [--quick] [--against REV]

``--against REV`` also times the vectorised path that REV had (``explorer/core/fast.py``, which covered
only the baseline family), loaded from git into this process, so "within 3× of the old fast path" is
measured in the same run. ``--quick`` skips the 1M-event stream and the 1M curves.

Goals: every family ≤ 30 ms at 20k events; ≤ 1.5 s for the full Result at 1M; within 3× of the old fast
path on the same stream; the 41-delay curve at 1M ≤ 15 s for every preset.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from explorer import generate, preset
from explorer.config import Emit, Panes, RunConfig, TimeSource, WindowSpec
from explorer.core import run
from explorer.metrics import curve
from explorer.streams import Stream, stream_from_frame

S = 1_000_000
BASELINE = "voltsp, tumbling, no idle timeout"
FAMILIES: dict[str, RunConfig] = {
    BASELINE: preset("voltsp", delay=5 * S),
    "voltsp + idle timeout 30 s, processing clock": preset("voltsp", delay=5 * S, idle_timeout=30 * S),
    "voltsp + idle timeout 30 s, event clock": preset("voltsp", delay=5 * S, idle_timeout=30 * S,
                                                      idle_clock=TimeSource.EVENT),
    "session gap 5 s": replace(preset("voltsp", delay=5 * S), window=WindowSpec.parse("session:5")),
    "processing time": preset("voltsp", time_source=TimeSource.PROCESSING),
    "spark preset (backlog)": preset("spark", delay=5 * S),
    "bytewax preset (event clock)": preset("bytewax", delay=5 * S),
    "flink + partition idleness 5 s": preset("flink", delay=5 * S, source_idle_timeout=5 * S),
    "flink, allowed lateness 30 s (a firing per late element)": preset("flink", delay=5 * S,
                                                                      allowed_lateness=30 * S),
    "kafka-streams preset (stream time per partition, record cache: updates per 30 s commit)":
        preset("kafka-streams", delay=5 * S),
    "kafka-streams, emit on-update (the record cache off)": preset("kafka-streams", delay=5 * S, emit=Emit.ON_UPDATE),
    "kafka-streams, emit on-close": preset("kafka-streams", delay=5 * S, emit=Emit.ON_CLOSE),
    "beam, allowed lateness 30 s, discarding panes": preset("beam", delay=5 * S, allowed_lateness=30 * S,
                                                            panes=Panes.DISCARDING),
}
PRESETS = ("voltsp", "textbook", "spark", "flink", "bytewax", "beam", "kafka-streams", "storm")


def timed(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time in seconds of ``repeat`` runs after one warm-up."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def keyed_stream(events: int) -> Stream:
    """A Kafka-like keyed, partitioned stream: 40 devices (some go offline and flush), 4 partitions."""
    frame = generate("mobile-bursts", devices=40, duration=events / 40).events
    frame = frame.assign(partition="p" + (frame["key"].str[-2:].astype(int) % 4).astype(str),
                         event_time=frame["event_time"] / S, arrival_time=frame["arrival_time"] / S)
    return stream_from_frame(frame[["id", "key", "partition", "event_time", "arrival_time"]], name="keyed")


def old_fast_path(rev: str):
    """REV's explorer/core/fast.py, imported beside today's package (it reads only the Stream and Result)."""
    source = subprocess.run(["git", "show", f"{rev}:explorer/core/fast.py"], capture_output=True, text=True,
                            check=True, cwd=Path(__file__).resolve().parent.parent).stdout
    path = Path(tempfile.mkdtemp()) / "old_fast.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_fast", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run_fast


def families_table(name: str, stream: Stream, repeat: int, old=None) -> None:
    print(f"\n{name}: {len(stream):,} events")
    times = {family: timed(lambda c=config: run(stream, c), repeat) for family, config in FAMILIES.items()}
    base = times[BASELINE]
    old_time = timed(lambda: old(stream, FAMILIES[BASELINE]), repeat) if old else None
    print("| setting | full Result | × baseline |" + (" × old fast path |" if old else ""))
    print("|---|---|---|" + ("---|" if old else ""))
    if old:
        print(f"| old fast path (vectorised, baseline family only) | {old_time * 1000:.1f} ms | "
              f"{old_time / base:.2f} | 1.00 |")
    for family, seconds in times.items():
        row = f"| {family} | {seconds * 1000:.1f} ms | {seconds / base:.2f} |"
        print(row + (f" {seconds / old_time:.2f} |" if old else ""))


def curves_table(stream: Stream) -> None:
    delays = [round(d * S) for d in range(41)]
    print(f"\n41-delay curve (0…40 s) at {len(stream):,} events, metrics only, per preset")
    print("| preset | curve |\n|---|---|")
    for name in PRESETS:
        seconds = timed(lambda n=name: curve(stream, preset(n), delays), 1)
        print(f"| {name} | {seconds:.1f} s |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="skip the 1M-event stream")
    parser.add_argument("--against", metavar="REV", help="also time REV's vectorised fast path (e.g. 85f5293)")
    args = parser.parse_args(argv)
    old = old_fast_path(args.against) if args.against else None
    print(f"python {sys.version.split()[0]}; best of N runs; ratios are to the baseline row of the same run")
    families_table("20k textbook stream", generate("textbook"), 5, old)
    families_table("200k keyed, partitioned stream", keyed_stream(200_000), 3, old)
    if not args.quick:
        big = generate("textbook", events=1_000_000)
        families_table("1M events (textbook generator)", big, 2, old)
        curves_table(big)


if __name__ == "__main__":
    main()
