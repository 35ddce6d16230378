"""Speed of the Spark paths, as figures and ratios against a native Spark query measured in the same run.

    .venv/bin/python benchmarks/bench_spark.py [--sweep-events 1000000] [--skip-sweep]

Goals (issue 3, local[2]): the streaming runner's median micro-batch ≤ 1.3× that of a native windowed
count (withWatermark + groupBy(window).count()) on the same 50 batches × 400 events; the 41-delay sweep
over 1M events under 2 minutes.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

from explorer import generate, preset
from explorer.config import BatchSpec
from explorer.metrics import curve
from explorer.spark import run_native, run_spark, spark_session
from explorer.spark.sweep import curve_on_spark

S = 1_000_000


class BatchTimes:
    """Collects every micro-batch's duration of every query in the session."""

    def __new__(cls):
        from pyspark.sql.streaming import StreamingQueryListener

        class Listener(StreamingQueryListener):
            durations: list[int] = []

            def onQueryStarted(self, event) -> None:
                pass

            def onQueryProgress(self, event) -> None:
                if event.progress.numInputRows:
                    Listener.durations.append(int(event.progress.batchDuration))

            def onQueryIdle(self, event) -> None:
                pass

            def onQueryTerminated(self, event) -> None:
                pass

        return Listener()


def median_batch_ms(spark, work) -> tuple[float, float]:
    """(median micro-batch ms, wall seconds) of ``work()``; progress events arrive asynchronously."""
    listener = BatchTimes()
    type(listener).durations = []
    spark.streams.addListener(listener)
    start = time.perf_counter()
    work()
    wall = time.perf_counter() - start
    time.sleep(2)
    spark.streams.removeListener(listener)
    return statistics.median(type(listener).durations), wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sweep-events", type=int, default=1_000_000)
    parser.add_argument("--skip-sweep", action="store_true")
    args = parser.parse_args()
    spark = spark_session()
    stream = generate("textbook", events=20_000)
    config = replace(preset("voltsp", delay=5 * S), batches=BatchSpec.parse("count:400"))
    run_native(spark, generate("textbook", events=800), config.window, 5 * S, config.batches)  # warm-up
    for attempt in range(2):
        native_ms, native_wall = median_batch_ms(spark, lambda: run_native(spark, stream, config.window, 5 * S,
                                                                            config.batches))
        runner_ms, runner_wall = median_batch_ms(spark, lambda: run_spark(stream, config, spark))
        print(f"50 batches x 400 events, round {attempt + 1}: native count median {native_ms:.0f} ms/batch "
              f"({native_wall:.1f} s end to end); runner median {runner_ms:.0f} ms/batch ({runner_wall:.1f} s end to "
              f"end); ratio {runner_ms / native_ms:.2f}x (goal <= 1.3x)")
    if args.skip_sweep:
        return
    delays = [d * S // 4 for d in range(41)]
    for events in (args.sweep_events // 4, args.sweep_events):
        big = generate("textbook", events=events)
        start = time.perf_counter()
        rows = curve_on_spark(spark, big, [preset("textbook")], delays)
        spark_s = time.perf_counter() - start
        start = time.perf_counter()
        local = curve(big, preset("textbook"), delays)
        local_s = time.perf_counter() - start
        print(f"sweep {events:,} events x 41 delays: spark {spark_s:.1f} s (goal < 120 s), local loop {local_s:.1f} s, "
              f"same rows: {rows == local}")
    big = generate("textbook", events=args.sweep_events // 4)
    for n_delays in (11, 41, 161):
        delays = [d * S // 4 for d in range(n_delays)]
        start = time.perf_counter()
        curve_on_spark(spark, big, [preset("textbook")], delays)
        print(f"sweep {len(big.events):,} events x {n_delays} delays: spark {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
