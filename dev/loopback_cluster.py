"""Dev check (not part of `make test`): a real multi-process Spark standalone cluster on 127.0.0.1 — a
master and a worker started from pyspark's bundled launcher — runs `--engine spark` and the sweep, and
both must equal the local engine.

    .venv/bin/python dev/loopback_cluster.py
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyspark

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"


def wait_for_port(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def main() -> None:
    env = {**os.environ, "SPARK_HOME": str(SPARK_CLASS.parent.parent), "PYSPARK_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1"}
    logs = Path(tempfile.mkdtemp(prefix="wx-cluster-"))
    master = subprocess.Popen([str(SPARK_CLASS), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", "7077", "--webui-port", "18080"], env=env,
                              stdout=open(logs / "master.log", "w"), stderr=subprocess.STDOUT)
    worker = None
    try:
        wait_for_port(7077)
        worker = subprocess.Popen([str(SPARK_CLASS), "org.apache.spark.deploy.worker.Worker", "spark://127.0.0.1:7077",
                                   "--host", "127.0.0.1", "--cores", "2", "--memory", "1g", "--webui-port", "18081"],
                                  env=env, stdout=open(logs / "worker.log", "w"), stderr=subprocess.STDOUT)
        time.sleep(5)
        from dataclasses import replace

        import pandas as pd

        from explorer import generate, preset
        from explorer.config import BatchSpec
        from explorer.core import run
        from explorer.metrics import curve
        from explorer.spark import run_spark, spark_session
        from explorer.spark.sweep import curve_on_spark

        spark = spark_session("spark://127.0.0.1:7077")
        stream = generate("mobile-bursts", devices=3, duration=120.0)
        config = replace(preset("voltsp", delay=2 * 10**6, idle_timeout=20 * 10**6), batches=BatchSpec.parse("count:60"))
        start = time.perf_counter()
        on_cluster = run_spark(stream, config, spark)
        local = run(stream, config)
        for table in ("events", "assignments", "windows", "watermarks"):
            pd.testing.assert_frame_equal(getattr(local, table), getattr(on_cluster, table), check_dtype=False)
        assert local.metrics == on_cluster.metrics
        print(f"run --engine spark on the loopback cluster: identical Result ({time.perf_counter() - start:.1f} s)")
        textbook = generate("textbook", events=20_000)
        delays = [d * 10**6 for d in range(11)]
        assert curve_on_spark(spark, textbook, [preset("textbook")], delays) == curve(textbook, preset("textbook"), delays)
        print("curve --engine spark on the loopback cluster: identical rows")
        spark.stop()
    finally:
        for process in (worker, master):
            if process is not None:
                process.terminate()
                process.wait(20)
        launched = "Launching executor" in (logs / "master.log").read_text()
        print(f"executor in its own JVM, launched by the worker: {launched}; logs in {logs}")


if __name__ == "__main__":
    main()
