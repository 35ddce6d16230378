"""The `spark` preset predicts real Spark: the same windows, with the same events, in the same micro-batch.

Each case is a small random stream cut into arrival batches; real Spark runs withWatermark + window /
session_window over them (one micro-batch per batch, trigger availableNow), and ``--engine spark-native`` reads
what it did into a Result, which must equal the preset's table for table: statuses, (event, window) pairs,
emissions, the watermark per micro-batch, the metrics.
"""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from explorer import preset, run
from explorer.config import BatchKind, BatchSpec, Schedule, Scope, WindowSpec
from explorer.spark import NativeEmission, run_native
from explorer.spark.native_result import as_spark_reports, run_spark_native
from explorer.streams import stream_from_frame
from explorer.core.result import differences

pytestmark = pytest.mark.spark
S = 1_000_000


def random_stream(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 28))
    event_time = np.sort(rng.uniform(0, 60, n)).round(1)
    event_time = np.maximum(0, event_time - rng.exponential(6, n).round(1) * (rng.random(n) < 0.4))
    batch = np.sort(rng.integers(1, int(rng.integers(3, 7)) + 1, n))
    frame = pd.DataFrame({"id": [f"e{i}" for i in range(n)], "key": rng.choice(["a", "b"], n),
                          "event_time": event_time, "arrival_time": np.arange(n, dtype=float), "batch": batch})
    return stream_from_frame(frame, name=f"random-{seed}")


def straggling_stream(seed: int):
    """Forty events over twelve batches, a third of them 5–25 s behind: Spark drops some of them, often several of
    one key and window in one micro-batch (which its numRowsDroppedByWatermark counts once)."""
    rng = np.random.default_rng(seed)
    n = 40
    event_time = np.sort(rng.uniform(0, 80, n)).round(1)
    event_time = np.maximum(0, event_time - rng.uniform(5, 25, n).round(1) * (rng.random(n) < 0.35))
    frame = pd.DataFrame({"id": [f"e{i}" for i in range(n)], "key": rng.choice(["a", "b"], n),
                          "event_time": event_time, "arrival_time": np.arange(n, dtype=float),
                          "batch": np.sort(rng.integers(1, 13, n))})
    return stream_from_frame(frame, name=f"straggling-{seed}")


def microsecond_stream(seed: int):
    """Event times with µs digits, bunched within 2 ms after multiples of 4 s: a window or session end then often
    lies less than a millisecond below the max seen, where Spark's ms watermark (t / 1000) has not reached it yet
    and a µs one has."""
    rng = np.random.default_rng(seed)
    n = 40
    event_time = rng.integers(0, 16, n) * 4 * S + rng.integers(0, 2_000, n)
    frame = pd.DataFrame({"id": [f"e{i}" for i in range(n)], "key": rng.choice(["a", "b"], n),
                          "event_time": event_time / S, "arrival_time": np.arange(n, dtype=float),
                          "batch": np.sort(rng.integers(1, 13, n))})
    return stream_from_frame(frame, name=f"microsecond-{seed}")


def emitted_by_watermark(result) -> list[NativeEmission]:
    """The preset's WATERMARK emissions in run_native's form and order (END_OF_STREAM is never emitted by Spark)."""
    windows = result.windows[result.windows["reason"] == "WATERMARK"]
    return sorted((NativeEmission(int(w.emit_batch), w.key, int(w.start), int(w.end), tuple(sorted(w.ids)))
                   for w in windows.itertuples()), key=lambda e: (e.batch, e.key, e.start, e.end))


CASES = [(seed, window, delay) for seed, (window, delay) in enumerate([
    ("tumbling:10", 0), ("tumbling:10", 2.5), ("tumbling:10", 7), ("tumbling:5", 100),
    ("sliding:10:5", 0), ("sliding:10:5", 3.5), ("sliding:20:5", 6),
    ("session:4", 0), ("session:4", 2.5), ("session:8", 5),
])]


STRAGGLING = [(100, "tumbling:10", 0), (101, "sliding:10:5", 0), (102, "session:3", 1)]
# with sub-ms delays too: Spark cuts withWatermark's "2500 microseconds" to 2 ms, as the preset does
MICROSECONDS = [(200, "tumbling:4", 0), (201, "session:4", 0), (202, "session:4", 0.0025), (204, "tumbling:4", 0.001999)]
STREAMS = [(random_stream, seed, w, d) for seed, w, d in CASES] + [(straggling_stream, *case) for case in STRAGGLING] \
    + [(microsecond_stream, *case) for case in MICROSECONDS]


@pytest.mark.parametrize("make,seed,window,delay", STREAMS, ids=[f"{m.__name__.split('_')[0]}-{w}-delay{d}-seed{s}"
                                                                  for m, s, w, d in STREAMS])
def test_spark_preset_predicts_real_spark(spark, make, seed, window, delay):
    stream = make(seed)
    spec = WindowSpec.parse(window)
    config = replace(preset("spark", delay=round(delay * S)), window=spec, batches=BatchSpec(BatchKind.COLUMN))
    real = run_spark_native(stream, config, spark)
    assert real.engine == "spark-native"
    assert differences(as_spark_reports(run(stream, config)), real) == []


LIVE_CASES = [(2, "tumbling:10", 7), (5, "sliding:10:5", 3.5), (8, "session:4", 2.5)]


@pytest.mark.parametrize("seed,window,delay", LIVE_CASES, ids=[f"live-{w}-delay{d}" for _, w, d in LIVE_CASES])
def test_live_schedule_predicts_spark_with_live_arrivals(spark, seed, window, delay):
    """Batches handed to a running query one by one: Spark's no-data micro-batches make it the live schedule."""
    stream = random_stream(seed)
    spec = WindowSpec.parse(window)
    config = replace(preset("spark", delay=round(delay * S), schedule=Schedule.LIVE), window=spec,
                     batches=BatchSpec(BatchKind.COLUMN))
    real = run_native(spark, stream, spec, round(delay * S), BatchSpec(BatchKind.COLUMN), live=True)
    assert real.emissions == emitted_by_watermark(run(stream, config))


def test_live_schedule_differs_from_backlog():
    """Replaying a backlog (availableNow) and live arrivals give different emissions, as measured."""
    stream = random_stream(3)
    backlog = replace(preset("spark", delay=2 * S), window=WindowSpec.parse("tumbling:10"),
                      batches=BatchSpec(BatchKind.COLUMN))
    live = backlog.with_time(schedule=Schedule.LIVE)
    a, b = run(stream, backlog).windows, run(stream, live).windows
    assert a["emit_batch"].tolist() != b["emit_batch"].tolist() or len(a) != len(b)


def two_inputs(seed: int):
    """Two partitions, Q's event times 15 s behind P's, arriving together over ten batches."""
    rng = np.random.default_rng(seed)
    n = 30
    part = rng.choice(["P", "Q"], n)
    t = np.sort(rng.uniform(0, 60, n)).round(1)
    t = np.where(part == "Q", np.maximum(0, t - 15), t)
    frame = pd.DataFrame({"id": [f"e{i}" for i in range(n)], "key": rng.choice(["a", "b"], n), "partition": part,
                          "event_time": t, "arrival_time": np.arange(n, dtype=float),
                          "batch": np.sort(rng.integers(1, 11, n))})
    return stream_from_frame(frame, name=f"two-inputs-{seed}")


MULTI = [(1, "min", 0), (1, "max", 0), (4, "max", 2)]


@pytest.mark.parametrize("seed,policy,delay", MULTI, ids=[f"{p}-delay{d}-seed{s}" for s, p, d in MULTI])
def test_multiple_watermark_policy(spark, seed, policy, delay):
    """Each partition a separate input with its own watermark, merged by spark.sql.streaming.multipleWatermarkPolicy:
    the partition-min / partition-max scopes predict it; max drops the lagging input's events."""
    stream = two_inputs(seed)
    spec = WindowSpec.parse("tumbling:10")
    scope = Scope.PARTITION_MIN if policy == "min" else Scope.PARTITION_MAX
    config = replace(preset("spark", delay=delay * S, scope=scope), window=spec, batches=BatchSpec(BatchKind.COLUMN))
    predicted = run(stream, config)
    real = run_spark_native(stream, config, spark)
    assert differences(as_spark_reports(predicted), real) == []
    lost = predicted.events[predicted.events["status"] == "dropped"]
    if policy == "min":  # the watermark follows the lagging input, whose own times only increase
        assert lost.empty
    else:  # the leading input's watermark runs ahead of the lagging one
        assert not lost.empty and set(lost["partition"]) == {"Q"}
