"""Spark: a local SparkSession set up as measured on this machine, and Spark's own windowed queries.

``runner`` runs the core's own semantics as a Structured Streaming query with its state in Spark's state
store (``--engine spark``), its input planned and staged by ``staging`` and its working directory guarded by
``fingerprint``. ``native`` runs real Structured Streaming queries (withWatermark + window/session_window count) over a
stream's arrival batches; the ``spark`` preset of the core is tested against it.
"""

from explorer.spark.native import NativeEmission, run_native
from explorer.spark.runner import Cancelled, Progress, SparkRunError, run_spark
from explorer.spark.session import spark_session
from explorer.spark.staging import MicroBatchPlan, expected_seconds, plan_micro_batches

__all__ = ["Cancelled", "MicroBatchPlan", "NativeEmission", "Progress", "SparkRunError", "expected_seconds",
           "plan_micro_batches", "run_native", "run_spark", "spark_session"]
