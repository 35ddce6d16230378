"""Speed of the Spark paths, as figures and ratios against baselines measured in the same run.

    .venv/bin/python benchmarks/bench_spark.py [--sweep-events 1000000] [--skip-sweep] [--only-goals]

Goals (issue 16, local[2], end to end from a cold session, each with a Result identical to the local one): the
20k-event textbook stream with one arrival batch per event ≤ 60 s; 1M events (one batch per event) ≤ 5 min.
Baselines: the local engine on the same stream, and one arrival batch per micro-batch (as before issue 16) timed
on the first 200 batches and scaled up.
Goals (issue 3): the streaming runner's median micro-batch ≤ 1.3× that of a native windowed count
(withWatermark + groupBy(window).count()) on the same 50 batches × 400 events; the 41-delay sweep over 1M
events under 2 minutes.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

from explorer import generate, preset
from explorer.config import BatchSpec
from explorer.core import run
from explorer.metrics import curve
from explorer.spark import plan_micro_batches, run_native, run_spark, spark_session
from explorer.spark.sweep import curve_on_spark
from explorer.streams import batches_for
from explorer.core.result import differences  # the Result comparison the explorer's agreement badge uses

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


def goals() -> None:
    """Issue 16's two goals; the session is started inside the first measurement (a cold start)."""
    config = replace(preset("voltsp", delay=5 * S), batches=BatchSpec.parse("event"))
    start = time.perf_counter()
    spark = spark_session()
    started = time.perf_counter() - start
    for events in (20_000, 1_000_000):
        stream = generate("textbook", events=events)
        start = time.perf_counter()
        local = run(stream, config)
        local_s = time.perf_counter() - start
        plan = plan_micro_batches(batches_for(stream, config))
        start = time.perf_counter()
        result = run_spark(stream, config, spark)
        spark_s = time.perf_counter() - start + started
        goal = 60 if events == 20_000 else 300
        print(f"textbook {events:,} events, one arrival batch per event, {plan.describe()}: "
              f"{spark_s:.1f} s end to end{' (Spark start ' + format(started, '.1f') + ' s included)' if started else ''}"
              f" (goal <= {goal} s: {'met' if spark_s <= goal else 'NOT met'}); identical Result: "
              f"{not differences(local, result)}; local engine {local_s:.2f} s, ratio {spark_s / local_s:,.0f}x")
        started = 0.0
    sample = generate("textbook", events=200)
    start = time.perf_counter()
    run_spark(sample, config, spark, per_micro_batch=1)
    per_batch = (time.perf_counter() - start) / 201
    print(f"one arrival batch per micro-batch (before issue 16): {per_batch:.2f} s per micro-batch on 200 batches, "
          f"so about {per_batch * 20_001 / 60:,.0f} min for the 20k stream")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sweep-events", type=int, default=1_000_000)
    parser.add_argument("--skip-sweep", action="store_true")
    parser.add_argument("--only-goals", action="store_true")
    parser.add_argument("--only-sweep", action="store_true")
    args = parser.parse_args()
    if not args.only_sweep:
        goals()
    if args.only_goals:
        return
    spark = spark_session()
    if not args.only_sweep:
        runner_against_native(spark)
    if not args.skip_sweep:
        sweep(spark, args.sweep_events)


def runner_against_native(spark) -> None:
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


def sweep(spark, sweep_events: int) -> None:
    curve_on_spark(spark, generate("textbook", events=2_000), [preset("textbook")], [0, S])  # warm-up
    delays = [d * S // 4 for d in range(41)]
    for events in (sweep_events // 4, sweep_events):
        big = generate("textbook", events=events)
        start = time.perf_counter()
        rows = curve_on_spark(spark, big, [preset("textbook")], delays)
        spark_s = time.perf_counter() - start
        start = time.perf_counter()
        local = curve(big, preset("textbook"), delays)
        local_s = time.perf_counter() - start
        print(f"sweep {events:,} events x 41 delays: spark {spark_s:.1f} s (goal < 120 s), local loop {local_s:.1f} s, "
              f"same rows: {rows == local}")
    big = generate("textbook", events=sweep_events // 4)
    for n_delays in (11, 41, 161):
        delays = [d * S // 4 for d in range(n_delays)]
        start = time.perf_counter()
        curve_on_spark(spark, big, [preset("textbook")], delays)
        print(f"sweep {len(big.events):,} events x {n_delays} delays: spark {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
