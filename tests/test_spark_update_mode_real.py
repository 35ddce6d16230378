"""Spark's update output mode against real Spark: the spark preset with ``--output-mode update`` predicts Spark's
own query (``--engine spark-native``, outputMode("update")) table for table, and the exported PySpark job run on a
generated stream writes the same rows in the same micro-batches (``verify``), for tumbling and sliding windows."""

from dataclasses import replace

import pytest

from explorer import preset, run
from explorer.cli import main
from explorer.config import BatchKind, BatchSpec, Emit, WindowSpec
from explorer.core.result import differences
from explorer.spark.native_result import as_spark_reports, run_spark_native
from explorer.streams import load_events
from explorer.verify import verify

from test_spark_preset import random_stream, straggling_stream

pytestmark = pytest.mark.spark
S = 1_000_000

NATIVE = [(straggling_stream, 100, "tumbling:10", 0), (straggling_stream, 101, "sliding:10:5", 0),
          (random_stream, 3, "tumbling:10", 2.5)]


@pytest.mark.parametrize("make,seed,window,delay", NATIVE,
                         ids=[f"{m.__name__.split('_')[0]}-{w}-delay{d}" for m, _, w, d in NATIVE])
def test_update_mode_predicts_sparks_own_query(spark, make, seed, window, delay):
    stream = make(seed)
    config = replace(preset("spark", delay=round(delay * S), emit=Emit.ON_BATCH), window=WindowSpec.parse(window),
                     batches=BatchSpec(BatchKind.COLUMN))
    real = run_spark_native(stream, config, spark)
    predicted = run(stream, config)
    assert differences(as_spark_reports(predicted), real) == []
    assert (real.windows["reason"] == "UPDATE").all() and real.windows["revision"].max() > 1  # rows written again
    # the comparison can fail: append mode's prediction is not what Spark wrote in update mode
    assert differences(as_spark_reports(run(stream, config.with_time(emit=Emit.ON_CLOSE))), real) != []


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A generated stream as a user has it: four devices for 100 s, some of them offline now and then (their
    buffered events arrive late, and some are dropped)."""
    path = tmp_path_factory.mktemp("generated") / "devices.csv"
    assert main(["generate", "mobile-bursts", "--devices", "4", "--duration", "100", "--seed", "9",
                 "--offline-prob", "0.01", "--out", str(path)]) == 0
    return path


@pytest.mark.parametrize("window", ["tumbling:10", "sliding:10:5"])
def test_the_exported_update_mode_job_writes_what_was_predicted(generated, tmp_path, window):
    stream = load_events(generated)
    config = replace(preset("spark", delay=2 * S, emit=Emit.ON_BATCH), window=WindowSpec.parse(window),
                     batches=BatchSpec.parse("interval:2s"))
    verdict = verify(stream, config, "spark", tmp_path)
    assert verdict.identical
    assert "outputMode(OUTPUT_MODE" in (tmp_path / "job.py").read_text() and \
        "OUTPUT_MODE = 'update'" in (tmp_path / "job.py").read_text()
    assert sum(verdict.engine_drops.values()) > 0  # a stream with drops in it
    assert max(f.revision for f in verdict.predicted) > 1  # windows written in several micro-batches


def test_the_spark_runner_coalesces_as_the_local_engine_does(spark):
    """``--engine spark`` runs the core's on-update decisions inside Spark; its table is coalesced the same way."""
    from explorer.spark.runner import run_spark

    stream = straggling_stream(101)
    config = replace(preset("spark", delay=S, emit=Emit.ON_BATCH), window=WindowSpec.parse("sliding:10:5"),
                     batches=BatchSpec(BatchKind.COLUMN))
    real = run_spark(stream, config, spark)
    assert real is not None and differences(run(stream, config), real) == []
    assert (real.windows["reason"] == "UPDATE").all() and real.windows["revision"].max() > 1
