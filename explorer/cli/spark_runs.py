"""The two Spark engines as commands run them: a progress bar on stderr, Spark's own output diverted to a log, and
the checks that refuse a run up front (Spark's own query cannot express every setting, nor run a million
micro-batches in reasonable time).

A module of its own because it is the only part of the CLI that starts a JVM (PySpark is imported only once a
run asks for Spark), and its concerns (a JVM's output, its time) are none of the local commands'.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.config import RunConfig
from explorer.core import Result
from explorer.errors import ExplorerError, InputError
from explorer.spark.output import user_stderr
from explorer.streams import Stream, batches_for
from explorer.timeutil import human_duration

if TYPE_CHECKING:  # (explorer.spark is imported when a run asks for it)
    from explorer.spark import BatchProgress, Progress


def run_on_spark(stream: Stream, config: RunConfig, args: argparse.Namespace) -> Result:
    """The Spark runner with a progress bar on stderr; Spark's own output goes to a log (``spark.output``)."""
    from tqdm import tqdm

    from explorer.spark import SparkRunError, run_spark, spark_session

    if args.checkpoint:
        _usable_checkpoint(Path(args.checkpoint))
    log = divert_spark_output(args.checkpoint) if args.own_process else None
    spark = partial(spark_session, args.master, ui=args.spark_ui)  # started once the run is known to fit
    with tqdm(total=None, unit="batch", desc="spark", file=user_stderr(), disable=None) as bar:
        def progress(p: Progress) -> None:
            bar.total = p.batches
            bar.update(p.batch - bar.n)
            bar.set_postfix(rows=p.rows, ms=p.duration_ms)
        try:
            result = run_spark(stream, config, spark, workdir=args.checkpoint, progress=progress,
                               per_micro_batch=args.per_micro_batch)
        except SparkRunError as error:
            raise SparkRunError(f"{error} (Spark's own output: {log})" if log else str(error)) from None
    assert result is not None  # a whole run always returns its Result
    return result


NATIVE_MAX_SECONDS = 3_600  # Spark's own query runs one micro-batch per arrival batch: past this, say so first


def run_on_spark_native(stream: Stream, config: RunConfig, args: argparse.Namespace) -> Result:
    """Spark's own query with a progress bar on stderr; refused up front when Spark cannot express the settings
    or would take over an hour."""
    from tqdm import tqdm

    from explorer.spark import native_query, native_seconds, spark_session
    from explorer.spark.native_result import run_spark_native

    for given, option in ((args.checkpoint, "--checkpoint"), (args.per_micro_batch, "--arrival-batches-per-micro-batch")):
        if given is not None:
            raise InputError(f"{option} is for --engine spark; Spark's own query runs one micro-batch per arrival "
                             "batch, from scratch")
    native_query(config)
    batches = len(batches_for(stream, config).commit_time)
    seconds = native_seconds(batches)
    if seconds > NATIVE_MAX_SECONDS:
        raise InputError(f"Spark's own query runs one micro-batch per arrival batch: {batches:,} batches would take "
                         f"about {human_duration(seconds * 1_000_000)}; cut the stream into fewer batches "
                         "(--batches interval:…), or use --engine spark")
    log = divert_spark_output(None) if args.own_process else None
    spark = partial(spark_session, args.master, ui=args.spark_ui)
    with tqdm(total=batches, unit="batch", desc="spark-native", file=user_stderr(), disable=None) as bar:
        def progress(p: BatchProgress, _batches: int) -> None:
            bar.update(min(p.batch_id + 1, batches) - bar.n)
            bar.set_postfix(rows=p.input_rows, ms=p.duration_ms)
        try:
            return run_spark_native(stream, config, spark, progress=progress)
        except ExplorerError as error:
            raise type(error)(f"{error} (Spark's own output: {log})" if log else str(error)) from None


def _usable_checkpoint(folder: Path) -> None:
    """A checkpoint must be a directory this process can write: said before Spark starts, in one line."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=folder, prefix=".wx-probe-")
        probe.close()
    except FileExistsError:
        raise InputError(f"--checkpoint {folder}: is a file; give a directory") from None
    except OSError as exc:
        raise InputError(f"--checkpoint {folder}: cannot write there ({exc.strerror or exc.__class__.__name__})") from None


def divert_spark_output(checkpoint: str | None) -> Path:
    """Spark's banner and the JVM's tracebacks go to a log: in the checkpoint directory when there is one. Only
    when the process is the command's own (``python -m explorer``): the diversion lasts as long as the process."""
    from explorer.spark.output import divert_to

    if checkpoint:
        Path(checkpoint).mkdir(parents=True, exist_ok=True)
        return divert_to(Path(checkpoint) / "spark.log")
    return divert_to(Path(tempfile.gettempdir()) / f"wx-spark-{os.getpid()}.log")
