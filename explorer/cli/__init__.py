"""``python -m explorer``: run, curve, tune, compare, export, validate, generate, spark-log. Bad input exits 2
with one line, never a traceback (``errors.exit_status`` says which status each kind of error gets).

This module holds the commands (``cmd_*``, dispatched by :data:`COMMANDS` from :func:`main`) and the files they
write. Around it: ``parser`` (the arguments, and the stream and configuration they name), ``text`` (what is
printed for a person to read) and ``spark_runs`` (the Spark engines, with progress and their own log).
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from explorer.cli.parser import (COLUMN_OPTIONS, build_config, build_parser, generator_kwargs, load_source,
                                 parse_target)
from explorer.cli.spark_runs import divert_spark_output, run_on_spark, run_on_spark_native
from explorer.cli.text import print_comparison, print_frontier, print_run_table, print_tuning, print_validation
from explorer.compare import compare, side_config
from explorer.config import TIME_FIELDS, BatchSpec, RunConfig, WindowSpec
from explorer.core import Result, run
from explorer.core.result import json_units, pane_columns
from explorer.errors import EXIT_STATUS, ExplorerError, InputError, Interrupted, exit_status
from explorer.export import ExportSource, export
from explorer.metrics import curve, default_delays, format_curve_table, frontier, tune
from explorer.spark.output import user_stderr
from explorer.streams import GENERATORS, Stream, generate
from explorer.streams.generators import make_frame
from explorer.timeutil import MICROS, exact_duration, parse_duration

__all__ = ["COLUMN_OPTIONS", "COMMANDS", "build_config", "build_parser", "load_source", "main"]


def cmd_run(args: argparse.Namespace) -> None:
    config, column = build_config(args)
    if args.out:
        _check_out_dir(Path(args.out), args.force)
    stream = load_source(args, column)
    runners = {"local": lambda: run(stream, config), "spark": lambda: run_on_spark(stream, config, args),
               "spark-native": lambda: run_on_spark_native(stream, config, args)}
    result = runners[args.engine]()
    if args.out:
        with _writing(Path(args.out)):
            _write_out(result, Path(args.out), stream, args.events)
    elif args.format == "json":
        result.write_json(sys.stdout)
    else:
        print_run_table(result, stream)


def cmd_curve(args: argparse.Namespace) -> None:
    config, column = build_config(args)
    stream = load_source(args, column)
    if args.delays is None:
        delays = default_delays(stream, config)
    else:
        try:
            delays = [parse_duration(d) for d in args.delays.split(",") if d.strip()]
        except InputError as exc:
            raise InputError(f"--delays: {exc}") from None
        if not delays:
            raise InputError("--delays needs at least one value")
        if min(delays) < 0:
            raise InputError(f"--delays: a delay is ≥ 0, not {exact_duration(min(delays))}")
    if args.engine == "spark":
        from explorer.spark import spark_session
        from explorer.spark.sweep import curve_on_spark

        if args.own_process:
            divert_spark_output(None)
        rows = curve_on_spark(partial(spark_session, args.master, ui=args.spark_ui), stream, [config], delays)
    else:
        rows = curve(stream, config, delays)
    if args.format == "json":
        print(json.dumps([row.in_micros() for row in rows]))
    elif args.format == "csv":
        print(pd.DataFrame([row.in_micros() for row in rows]).to_csv(index=False), end="")
    else:
        print(format_curve_table(rows))


def cmd_spark_log(args: argparse.Namespace) -> None:
    """The job's micro-batches as its log has them; with the events export (whose batch column is Spark's
    batchId, or whose Kafka partition and offset the log's source offsets place), the spark preset's replay
    beside them."""
    from explorer.spark.job_log import explain_job, format_explanation, format_log
    from explorer.spark.progress import read_progress_log

    progress = read_progress_log(args.log)
    if not args.events and not args.synthetic:
        print(format_log(progress))
        return
    if args.preset not in (None, "spark"):
        raise InputError("spark-log replays a Spark job: --preset is spark")
    args.preset = "spark"
    config, column = build_config(args)
    stream = load_source(args, column)
    print(format_explanation(explain_job(progress, stream, config, parse_target(args.target)), stream.absolute))


def cmd_tune(args: argparse.Namespace) -> None:
    config, column = build_config(args)
    target = parse_target(args.target)
    live = args.completeness == "live"
    if args.grid is not None and not live:
        raise InputError("--grid is the live search's: add --completeness live (final completeness is searched exactly)")
    if args.second and live:
        raise InputError("--with searches final completeness; with --completeness live, tune the delay alone")
    if args.second:
        print_frontier(frontier(load_source(args, column), config, target, args.second), args)
        return
    if live:
        from explorer.metrics import CURVE_POINTS, Tuning, tune_live

        points = CURVE_POINTS if args.grid is None else args.grid
        found: Tuning = tune_live(load_source(args, column), config, target, points)
    else:
        found = tune(load_source(args, column), config, target)
    if args.format == "json":
        print(json.dumps(found.to_dict()))
        return
    print_tuning(found, config, target)


def cmd_compare(args: argparse.Namespace) -> None:
    if args.limit < 0:
        raise InputError(f"compare --limit must be ≥ 0, not {args.limit}")
    window = WindowSpec.parse(args.window) if args.window else None
    delay = parse_duration(args.delay) if args.delay else None
    batches = BatchSpec.parse(args.batches) if args.batches else None
    labels = [label.strip() for label in args.presets.split(",") if label.strip()]
    sides = {label: side_config(label, window, delay, batches) for label in labels}
    comparison = compare(load_source(args), sides)
    print_comparison(comparison, labels, args.format == "json", args.limit)


def cmd_export(args: argparse.Namespace) -> None:
    config, column = build_config(args)
    given = args.events or args.synthetic
    source = ExportSource.of(load_source(args, column)) if given else ExportSource(column or "event_time")
    print(export(config, args.to, source), end="")


class Differs(Exception):
    """verify's answer "they differ": printed already; the exit status is 1, as diff's is."""


def cmd_verify(args: argparse.Namespace) -> None:
    from explorer.verify import report, verify

    config, column = build_config(args)
    stream = load_source(args, column)
    with tempfile.TemporaryDirectory(prefix="wx-verify-") as scratch:
        verdict = verify(stream, config, args.engine, Path(args.work or scratch))
    print("\n".join(report(verdict)))
    if not verdict.identical:
        raise Differs()


def cmd_validate(args: argparse.Namespace) -> None:
    stream = load_source(args)
    print_validation(stream, args.events)


def cmd_generate(args: argparse.Namespace) -> None:
    options = generator_kwargs(args, args.name)
    out = Path(args.out or f"data/{args.name}.csv")
    if out.is_dir():
        raise InputError(f"--out {out}: is a directory; give a file name such as {out / (args.name + '.csv')}")
    if out.suffix.lower() not in (".csv", ".jsonl", ".ndjson", ".json", ".parquet"):
        raise InputError(f"--out {out}: unknown file type {out.suffix!r}; use .csv, .jsonl or .parquet")
    if out.exists() and not args.force:  # data/ holds the committed samples: never replace one unasked
        raise InputError(f"--out {out}: the file exists; use --force to overwrite it, or another name")
    with _writing(out):
        out.parent.mkdir(parents=True, exist_ok=True)
        if GENERATORS[args.name].columns:  # an export keeps its own columns and time formats
            _write_table(make_frame(args.name, **options), out)
            return
        _write_stream(generate(args.name, **options), out)


RUN_OUTPUTS = ("events.csv", "assignments.csv", "windows.csv", "watermarks.csv", "metrics.json")


def _check_out_dir(out: Path, force: bool) -> None:
    """Before the run: --out must be a directory we may write, and never silently overwrite a previous run."""
    try:
        _check_out_dir_or_raise(out, force)
    except OSError as exc:  # a name too long, a path through a file, no permission: one line, before the run
        raise InputError(f"--out {out}: cannot use this directory ({exc.strerror or exc.__class__.__name__})") from None


def _check_out_dir_or_raise(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file; give a directory for {', '.join(RUN_OUTPUTS)}")
    existing = [name for name in RUN_OUTPUTS if (out / name).exists()]
    if existing and not force:
        raise InputError(f"--out {out}: already has {', '.join(existing)}; use --force to overwrite, or another "
                         "directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot create this directory ({exc.strerror})") from None


def _write_out(result: Result, out: Path, stream: Stream, file: str | None) -> None:
    """The run's tables as CSV (times in integer µs, events named by their ids in every file) and metrics.json:
    the metrics with the whole configuration and the input they are for. All five are written into a folder of
    their own inside ``out`` and moved into place only once every one is whole, so a failed write (a full disk)
    leaves no half-written Result. Text a file cannot encode (a lone surrogate in a key) is escaped, not fatal."""
    staging = Path(tempfile.mkdtemp(prefix=".wx-writing-", dir=out))
    try:
        result.events.to_csv(staging / "events.csv", index=False, errors="backslashreplace")
        assignments = result.assignments.copy()  # the Result names an event by its row; the file by its id
        assignments["event"] = result.events["id"].to_numpy()[assignments["event"].to_numpy(dtype=np.int64)]
        assignments.to_csv(staging / "assignments.csv", index=False, errors="backslashreplace")
        _write_windows(result.windows, staging / "windows.csv")
        result.watermarks.to_csv(staging / "watermarks.csv", index=False, errors="backslashreplace")
        document = {"units": {**json_units(result.absolute), "csv files": "times and durations in integer µs, as "
                              "'times' and 'durations' say; events named by their id"},
                    "input": input_fingerprint(stream, file), "config": full_config(result.config),
                    "engine": result.engine, "metrics": result.metrics.to_dict()}
        (staging / "metrics.json").write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8",
                                              errors="backslashreplace")
        for name in RUN_OUTPUTS:
            os.replace(staging / name, out / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(f"wrote {out}/events.csv, assignments.csv, windows.csv, watermarks.csv, metrics.json (times in µs)")


def full_config(config: RunConfig) -> dict[str, object]:
    """Every setting of a run, each duration as integer µs (``delay_us``) and as the CLI writes it (``delay``)."""
    window = config.window
    out: dict[str, object] = {
        "preset": config.preset, "window": str(window), "window_kind": window.kind.value,
        **({"window_gap_us": window.gap} if window.kind.value == "session" else
           {"window_size_us": window.size, "window_slide_us": window.slide}),
        "batches": str(config.batches) if config.batches else "default (the file's batch column if it has one, "
                                                               "else one batch per event)",
    }
    if config.batches is not None and config.batches.interval:
        out["batches_interval_us"] = config.batches.interval
    for field in TIME_FIELDS:
        value = getattr(config.time, field.name)
        out[field.name] = value if field.values is bool else field.to_text(value)
        if field.values is None:  # a duration: its µs too (None: off)
            out[f"{field.name}_us"] = value
    return out


def input_fingerprint(stream: Stream, file: str | None) -> dict[str, object]:
    """Which input the numbers are for: the file, its rows, and a sha256 of the events' ids and times as the
    run read them (so the same events in ISO or in epoch ms hash alike)."""
    ev = stream.events
    digest = hashlib.sha256()
    for column in ("event_time", "arrival_time"):
        digest.update(ev[column].to_numpy(dtype=np.int64).astype("<i8").tobytes())
    ids = [str(v) for v in ev["id"].tolist()]
    digest.update(np.array([len(v) for v in ids], dtype="<i8").tobytes())  # lengths: no two id lists collide
    digest.update("".join(ids).encode())
    return {"file": file, "name": stream.name, "rows": len(ev), "sha256": digest.hexdigest(),
            "sha256_of": "event_time and arrival_time as int64 µs (little-endian), then each id's length (int64) "
                         "and the ids in UTF-8, in arrival order"}


IDS_PER_WRITE = 1_000_000


def _write_windows(windows: pd.DataFrame, path: Path) -> None:
    """windows.csv, each emission's ids as a JSON list and its pane (index and timing), written a slice at a time:
    with allowed lateness a window re-fired by each of 20,000 late events lists 2·10⁸ ids, text that must not be
    held at once."""
    listed = np.cumsum(windows["ids"].map(len).to_numpy()) // IDS_PER_WRITE
    bounds = np.flatnonzero(np.diff(listed)) + 1
    panes = pane_columns(windows)  # of the whole table: a merged session's pane index counts from its first row
    with path.open("w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        for i, (a, b) in enumerate(zip(np.r_[0, bounds], np.r_[bounds, len(windows)])):
            part = windows.iloc[a:b].copy()
            part["ids"] = part["ids"].map(lambda ids: json.dumps(list(ids)))
            beside = list(part.columns).index("revision") + 1  # the pane beside the revision, as in the JSON
            for at, (name, column) in enumerate(panes.iloc[a:b].items(), beside):
                part.insert(at, name, column)
            part.to_csv(handle, index=False, header=i == 0)


def _write_stream(stream: Stream, out: Path) -> None:
    frame = stream.events.copy()
    for column in ("event_time", "arrival_time"):
        frame[column] = frame[column] / MICROS["s"]
    frame["id"] = frame["id"].astype(object)  # (a loaded stream's are Arrow text: the file is written as before)
    keep = ["id", "event_time", "arrival_time"] + [c for c, flag in
                                                   (("key", stream.has_keys), ("batch", stream.has_batch),
                                                    ("partition", stream.has_partition)) if flag]
    _write_table(frame[keep], out)


@contextmanager
def _writing(out: Path) -> Iterator[None]:
    """An output place we cannot write (no such directory, /proc, read-only, full disk) is one sentence."""
    try:
        yield
    except OSError as exc:
        raise InputError(f"{exc.filename or out}: cannot write ({exc.strerror or exc.__class__.__name__})") from None


def _write_table(frame: pd.DataFrame, out: Path) -> None:
    suffix = out.suffix.lower()
    if suffix == ".parquet":
        frame.to_parquet(out, index=False)
    elif suffix in (".jsonl", ".ndjson", ".json"):
        frame.to_json(out, orient="records", lines=True)
    else:
        frame.to_csv(out, index=False)
    print(f"wrote {len(frame)} events to {out}")


COMMANDS = {"run": cmd_run, "curve": cmd_curve, "tune": cmd_tune, "spark-log": cmd_spark_log, "compare": cmd_compare,
            "export": cmd_export, "verify": cmd_verify, "validate": cmd_validate,
            "generate": cmd_generate}


def _drop_stdout() -> None:
    """After a failed write to standard output, point it at /dev/null, so the interpreter's last flush of what is
    still buffered does not fail again with a traceback."""
    try:
        sys.stdout.flush()
    except OSError:
        pass
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)


def _small_pages() -> None:
    """numpy asks Linux for 2 MB pages for each large array (madvise). On the project's VM a fresh 2 MB page costs
    the kernel far more than 512 small ones: ``run`` on 10M events spent 7.4–9.0 s of system time with them and
    4.3–4.7 s without (benchmarks/RESULTS.md, issue 31). The command's own process uses small pages; a notebook
    or a caller that passes ``argv`` keeps numpy's choice."""
    np._core.multiarray._set_madvise_hugepage(False)  # type: ignore[attr-defined]  # (numpy's switch has no stub)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Without ``argv`` it is the process's own command line (``python -m explorer``, the
    ``watermark-explorer`` script), so Spark's own output may go to a log for the rest of the process; a caller
    that passes ``argv`` and goes on (a test, a notebook) keeps its stderr."""
    if isinstance(sys.stdout, io.TextIOWrapper):  # a key no terminal can print (a lone surrogate) is escaped
        sys.stdout.reconfigure(errors="backslashreplace")
    if argv is None:
        _small_pages()
    try:
        args = build_parser().parse_args(argv)
        args.own_process = argv is None
        COMMANDS[args.command](args)
    except ExplorerError as exc:
        print(f"error: {exc}", file=user_stderr())
        return exit_status(exc)
    except Differs:
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=user_stderr())
        return EXIT_STATUS[Interrupted]
    except BrokenPipeError:
        return 0
    except (MemoryError, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno != errno.ENOMEM:  # the answer could not be written: a full device
            print(f"error: cannot write the output: {exc.strerror or exc.__class__.__name__}", file=user_stderr())
            _drop_stdout()
        else:  # past what budget.py predicted: one line, not a traceback, nor taken for a write error
            print("error: the machine ran out of memory for this command; sample the stream, or use --engine spark",
                  file=user_stderr())
        return EXIT_STATUS[InputError]
    return 0
