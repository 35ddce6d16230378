"""Spark: a local SparkSession set up as measured on this machine, and Spark's own windowed queries.

``native`` runs real Structured Streaming queries (withWatermark + window/session_window count) over a
stream's arrival batches; the ``spark`` preset of the core is tested against it.
"""

from explorer.spark.native import NativeEmission, run_native
from explorer.spark.session import spark_session

__all__ = ["NativeEmission", "run_native", "spark_session"]
