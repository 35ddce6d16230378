"""Spark: a local SparkSession set up as measured on this machine, and Spark's own windowed queries.

``runner`` runs the core's own semantics as a Structured Streaming query with its state in Spark's state
store (``--engine spark``), its input planned and staged by ``staging`` and its working directory guarded by
``fingerprint``. ``native`` runs Spark's own Structured Streaming query (withWatermark + window/session_window) over a
stream's arrival batches and ``native_result`` reads what it did into a Result (``--engine spark-native``), the
ground truth the ``spark`` preset is held against. ``progress`` reads Spark's StreamingQueryProgress, of that
query or of a production job's log. ``sweep`` evaluates many configurations in one Spark job (the curve).

This package's names are the API the explorer's UI reaches Spark through (``tests/test_architecture.py``).
"""

from explorer.spark.job_log import JobExplanation, explain_job, format_explanation, format_log
from explorer.spark.native import NativeEmission, NativeRun, run_native
from explorer.spark.native_result import as_spark_reports, native_query, native_seconds, run_spark_native
from explorer.spark.progress import BatchProgress, read_progress_log
from explorer.spark.runner import Cancelled, Progress, SparkRunError, run_spark
from explorer.spark.session import spark_session
from explorer.spark.staging import MicroBatchPlan, expected_seconds, plan_micro_batches
from explorer.spark.sweep import SweepProgress, curve_on_spark

__all__ = ["BatchProgress", "Cancelled", "JobExplanation", "MicroBatchPlan", "NativeEmission", "NativeRun", "Progress",
           "SparkRunError", "SweepProgress", "as_spark_reports", "curve_on_spark", "expected_seconds", "explain_job",
           "format_explanation", "format_log", "native_query", "native_seconds", "plan_micro_batches",
           "read_progress_log", "run_native", "run_spark", "run_spark_native", "spark_session"]
