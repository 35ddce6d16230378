"""One local SparkSession with the settings that matter here (measured: 200 shuffle partitions made a
micro-batch 15× slower; the UI and console noise only cost time).

In local mode the driver is the whole of Spark, so it listens on the loopback interface only: by default its
RPC and block-manager ports bind to every address the host has, with ``spark.authenticate`` off, which would
let anyone on the network talk to it. A cluster run needs the opposite, and its own security (README,
"Spark on a cluster").
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TypeAlias

from explorer.errors import InputError

if TYPE_CHECKING:  # (pyspark is imported when a session starts)
    from pyspark.sql import SparkSession

    # a session, or how to start one once a run is known to fit
    SparkOrStarter: TypeAlias = SparkSession | Callable[[], SparkSession]


LOG_CONFIG = Path(__file__).with_name("log4j2.properties")


def spark_session(master: str = "local[2]", app: str = "watermark-explorer", ui: bool = False) -> SparkSession:
    """Get or create the session. Java 17 must be on the PATH. ``ui=True`` serves Spark's web UI (port 4040
    or the next free one) for watching the queries; it is off otherwise, as it only costs time."""
    if shutil.which("java") is None:
        raise InputError("Spark needs Java 17: 'java' is not on the PATH")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers need this venv: they import explorer
    from pyspark.sql import SparkSession

    cores = master[master.find("[") + 1:master.find("]")] if "[" in master else "2"
    builder = SparkSession.builder.master(master).appName(app)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # what the web UI binds to, when it is on
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    session = (builder
               .config("spark.ui.enabled", "true" if ui else "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile={LOG_CONFIG}")
               .config("spark.sql.shuffle.partitions", cores if cores.isdigit() else "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.streaming.stateStore.providerClass",
                       "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


def started(spark: SparkOrStarter) -> SparkSession:
    """A session as given, or started by the callable given: a caller passes ``spark_session`` (or a partial of
    it) so that Spark starts only after the memory check has passed."""
    return spark() if callable(spark) else spark
