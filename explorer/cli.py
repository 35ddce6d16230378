"""``python -m explorer``: run, curve, validate, generate. Bad input exits 2 with one line, never a traceback."""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import tempfile
from dataclasses import replace
from functools import partial
from pathlib import Path
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn, Sequence

import numpy as np
import pandas as pd

from explorer.config import (PRESETS, TIME_FIELDS, BatchSpec, RunConfig, Strategy, WindowSpec, apply_delay,
                             load_yaml_config, preset)
from explorer.compare import compare, side_config
from explorer.core import Result, run
from explorer.core.result import Reason
from explorer.export import TARGETS as EXPORT_TARGETS
from explorer.export import ExportSource, export
from explorer.errors import EXIT_STATUS, ExplorerError, InputError, Interrupted, exit_status
from explorer.spark.output import user_stderr
from explorer.metrics import SECOND_KNOBS, FrontierPoint, best_point, curve, format_curve_table, frontier, tune
from explorer.streams import GENERATORS, Stream, batches_for, generate, load_events
from explorer.streams.generators import make_frame
from explorer.streams.loading import MissingColumns, parse_time_units
from explorer.timeutil import MICROS, exact_seconds, format_instant, human_duration, parse_duration

COLUMN_OPTIONS = ("id", "key", "event_time", "arrival_time", "batch", "partition", "offset", "value")


def _generator_options() -> dict[str, inspect.Parameter]:
    options: dict[str, inspect.Parameter] = {}
    for generator in GENERATORS.values():
        for name, param in inspect.signature(generator.make).parameters.items():
            options.setdefault(name, param)
    return options


def _add_source(parser: argparse.ArgumentParser, required_file: bool) -> None:
    if required_file:
        parser.add_argument("events", help="events file: .csv, .jsonl or .parquet")
    else:
        parser.add_argument("events", nargs="?", help="events file: .csv, .jsonl or .parquet")
        parser.add_argument("--synthetic", metavar="NAME", choices=list(GENERATORS),
                            help=f"a built-in stream instead of a file: {', '.join(GENERATORS)}")
        _add_generator_options(parser)
    parser.add_argument("--time-unit", default="auto", metavar="UNIT",
                        help="what numeric times count: auto (default: each column detected; epoch numbers by their "
                             "size), s, ms, us or ns for every time column, or per column: arrival_time=ms,ts=s")
    for column in COLUMN_OPTIONS:
        parser.add_argument(f"--{column.replace('_', '-')}-col", metavar="NAME", help=f"the file's column for {column}")


def _add_generator_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("generator options (see `generate --help`)")
    for name, param in _generator_options().items():
        kind = type(param.default) if param.default is not inspect.Parameter.empty else str
        group.add_argument(f"--{name.replace('_', '-')}", dest=f"gen_{name}", type=kind, default=None, metavar="X")


def _add_config(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("time configuration")
    g.add_argument("--preset", choices=sorted(PRESETS), help="start from an engine's rules (default voltsp)")
    g.add_argument("--config", metavar="FILE.yaml", help="a timeConfig in VoltSP's words")
    g.add_argument("--window", help="tumbling:10 | sliding:20:10 | session:30 (default tumbling:10)")
    g.add_argument("--batches", help="event | count:N | interval:T | column")
    for spec in TIME_FIELDS:
        if spec.option == "delay":  # the knob every engine has, read in the preset's arithmetic
            g.add_argument("--delay", help="the knob every engine has, in the preset's arithmetic "
                                           "(VoltSP: delayWindowClose; textbook and bytewax: the bound L)")
        else:
            g.add_argument(f"--{spec.option.replace('_', '-')}", dest=spec.option, help=spec.help,
                           choices=spec.choices or None)


def _add_engine(parser: argparse.ArgumentParser, streaming: bool = True) -> None:
    g = parser.add_argument_group("engine")
    if streaming:
        g.add_argument("--engine", choices=["local", "spark", "spark-native"], default="local",
                       help="local core (default); spark: these rules as a real Structured Streaming query; "
                            "spark-native: Spark's own withWatermark + window query, what Spark itself does "
                            "(the spark preset's settings only)")
    else:
        g.add_argument("--engine", choices=["local", "spark"], default="local",
                       help="local core (default), or Spark: the sweep's configurations as Spark tasks")
    g.add_argument("--master", default="local[2]", help="Spark master URL (default local[2])")
    g.add_argument("--spark-ui", action="store_true", help="serve Spark's web UI while it runs (off by default)")
    if streaming:
        g.add_argument("--checkpoint", metavar="DIR",
                       help="keep staged input, checkpoint and output here; run again with the same DIR to resume")
        g.add_argument("--arrival-batches-per-micro-batch", metavar="N", type=int, dest="per_micro_batch",
                       help="arrival batches one Spark micro-batch carries (default: planned from the rows; the "
                            "Result is the same, only the time differs)")


class _Parser(argparse.ArgumentParser):
    """argparse, but a mistake on the command line is an InputError: one line, exit 2, like any other bad input
    (argparse's own error prints a usage block first). Subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("python -m explorer").strip()
        raise InputError(f"{command + ': ' if command else ''}{' '.join(message.split())} (see --help)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m explorer", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p_run = sub.add_parser("run", help="evaluate one configuration over a stream")
    _add_source(p_run, required_file=False)
    _add_config(p_run)
    p_run.add_argument("--format", choices=["json", "table"], default="table")
    p_run.add_argument("--out", metavar="DIR",
                       help="write events.csv, assignments.csv, windows.csv, watermarks.csv and metrics.json")
    p_run.add_argument("--force", action="store_true", help="overwrite those files if --out already has them")
    _add_engine(p_run)

    p_curve = sub.add_parser("curve", help="completeness and latency over a sweep of delays")
    _add_source(p_curve, required_file=False)
    _add_config(p_curve)
    p_curve.add_argument("--delays", required=True, help="comma-separated, e.g. 0,2,5,10,20,40")
    p_curve.add_argument("--format", choices=["table", "csv", "json"], default="table")
    _add_engine(p_curve, streaming=False)

    p_log = sub.add_parser("spark-log", help="explain a Structured Streaming job from its progress log; with its "
                                             "events export, side by side with the spark preset's replay")
    p_log.add_argument("log", help="JSON lines of StreamingQueryProgress (query.lastProgress), or Spark's event log")
    _add_source(p_log, required_file=False)
    _add_config(p_log)
    p_log.add_argument("--target", type=float, default=0.99, help="completeness the suggested delay reaches (0.99)")

    p_tune = sub.add_parser("tune", help="the smallest delay that reaches a completeness target (exact, not on a grid)")
    _add_source(p_tune, required_file=False)
    _add_config(p_tune)
    p_tune.add_argument("--target", type=float, required=True, help="completeness to reach, e.g. 0.99 (or 99%%)")
    p_tune.add_argument("--with", dest="second", choices=list(SECOND_KNOBS),
                        help="also a second knob: for values of it from 0 to the delay alone needs, the smallest "
                             "delay beside it and the first emissions' latency (the frontier of the two)")
    p_tune.add_argument("--format", choices=["table", "json"], default="table")

    p_cmp = sub.add_parser("compare", help="several engines' presets over the same stream, and where they disagree")
    _add_source(p_cmp, required_file=False)
    p_cmp.add_argument("--presets", required=True,
                       help="comma-separated presets, each optionally with overrides: voltsp,voltsp:strategy=max,flink")
    p_cmp.add_argument("--window", help="shared window for every preset (default tumbling:10)")
    p_cmp.add_argument("--delay", help="shared delay, read in each preset's own arithmetic")
    p_cmp.add_argument("--batches", help="shared batching (default: each engine's own)")
    p_cmp.add_argument("--format", choices=["table", "json"], default="table")
    p_cmp.add_argument("--limit", type=int, default=3, help="examples listed per kind of disagreement (default 3; "
                                                           "json lists every disagreement as well)")

    p_exp = sub.add_parser("export", help="the configuration as a snippet in an engine's own API")
    _add_source(p_exp, required_file=False)  # optional: the snippet then names the file and its columns
    _add_config(p_exp)
    p_exp.add_argument("--to", required=True, choices=list(EXPORT_TARGETS), help="target engine and language")

    p_val = sub.add_parser("validate", help="check an events file and describe it")
    _add_source(p_val, required_file=True)

    p_gen = sub.add_parser("generate", help="write a built-in synthetic stream to a file")
    p_gen.add_argument("name", choices=list(GENERATORS))
    p_gen.add_argument("--out", metavar="FILE", help="where to write (.csv, .jsonl or .parquet); default data/NAME.csv")
    p_gen.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    _add_generator_options(p_gen)
    return parser


def _generator_kwargs(args: argparse.Namespace, name: str) -> dict[str, Any]:
    accepted = inspect.signature(GENERATORS[name].make).parameters
    given = {k[4:]: v for k, v in vars(args).items() if k.startswith("gen_") and v is not None}
    unknown = [k for k in given if k not in accepted]
    if unknown:
        raise InputError(f"generator {name!r} has no option(s) {', '.join('--' + u.replace('_', '-') for u in unknown)}; "
                         f"it takes {', '.join('--' + a.replace('_', '-') for a in accepted) or 'none'}")
    return given


def load_source(args: argparse.Namespace, event_time_column: str | None = None) -> Stream:
    synthetic = getattr(args, "synthetic", None)
    if synthetic:
        if args.events:
            raise InputError("give either an events file or --synthetic NAME, not both")
        return generate(synthetic, **_generator_kwargs(args, synthetic))
    if not args.events:
        raise InputError("an events file (or --synthetic NAME) is needed")
    columns = {c: getattr(args, f"{c}_col") for c in COLUMN_OPTIONS if getattr(args, f"{c}_col", None)}
    if event_time_column and "event_time" not in columns:  # the YAML's eventTimeExtractor names the column
        columns["event_time"] = event_time_column
        try:
            return load_events(args.events, time_unit=parse_time_units(args.time_unit), columns=columns)
        except MissingColumns as exc:
            if event_time_column in exc.missing:
                raise InputError(f"{exc}; the config's eventTimeExtractor names it (give --event-time-col to use "
                                 "another)") from None
            raise
    return load_events(args.events, time_unit=parse_time_units(args.time_unit), columns=columns or None)


def build_config(args: argparse.Namespace) -> tuple[RunConfig, str | None]:
    """Preset, then YAML, then explicit flags: the later one wins."""
    column = None
    config = preset(args.preset or "voltsp")
    if args.config:
        loaded = load_yaml_config(args.config)
        config, column = loaded.config, loaded.event_time_column
        if args.preset:
            config = replace(config, preset=args.preset, batches=PRESETS[args.preset].batches or config.batches)
    if args.window:
        config = replace(config, window=WindowSpec.parse(args.window))
    if args.batches:
        config = replace(config, batches=BatchSpec.parse(args.batches))
    changes: dict[str, Any] = {}
    for spec in TIME_FIELDS:
        if spec.option != "delay" and getattr(args, spec.option) is not None:
            changes[spec.name] = spec.parse(getattr(args, spec.option))
    config = config.with_time(**changes)
    if getattr(args, "delay", None) is not None:
        config = apply_delay(config, parse_duration(args.delay))
    return config, column


def _print_run_table(result: Result, stream: Stream) -> None:
    m = result.metrics
    unit = result.time_unit
    print(f"{result.stream_name}: {m.events} events, preset {result.config.preset}, window {result.config.window}")
    print(f"  on time {m.on_time}, late-updated {m.late_updated}, side output {m.side_output}, dropped {m.dropped}")
    if len(stream.watermarks) and result.config.time.strategy is not Strategy.SCRIPTED:
        print(f"  the input's {len(stream.watermarks)} scripted watermark row(s) were not used: --strategy scripted "
              "follows them")
    elif len(stream.watermarks) and not stream.has_arrival and str(result.config.batches) != "event":
        print(f"  batches {result.config.batches} cut a file without arrival times by its event times; --batches "
              "event replays it row by row, as a test harness does")
    if m.partly_dropped:
        print(f"  partly dropped {m.partly_dropped}: a window refused them while another kept them; they are in no "
              "side output")
    tombstones = int((result.windows["reason"] == Reason.TOMBSTONE.value).sum())
    print(f"  completeness {m.completeness:.2%}, windows emitted {m.windows_emitted}, updates {m.updates}"
          f"{f', tombstones {tombstones} (sessions a record replaced)' if tombstones else ''}, "
          f"still open at end {m.end_of_stream}, most windows open {m.max_open_windows}")
    if m.latency_event.mean is not None:
        lat = {name: human_duration(getattr(m.latency_event, name) * MICROS["s"]) for name in ("mean", "p50", "p95", "max")}
        print(f"  emit latency (event time) mean {lat['mean']}, p50 {lat['p50']}, p95 {lat['p95']}, max {lat['max']}; "
              f"(processing time) mean {human_duration(m.latency_processing.mean * MICROS['s'])}")
    shown = result.windows.head(20)
    if len(shown):
        width = 23 if result.absolute else 10

        def at(micros: int) -> str:  # date-times for wall-clock streams, the stream's own unit otherwise
            return format_instant(micros, True) if result.absolute else f"{micros / MICROS[unit]:g}"

        print(f"  {'key':>8} {'start':>{width}} {'end':>{width}} {'count':>6} {'batch':>6} {'reason':>14} {'rev':>4}")
        for w in shown.itertuples(index=False):
            print(f"  {w.key or '-':>8} {at(w.start):>{width}} {at(w.end):>{width}} {w.count:>6} "
                  f"{w.emit_batch:>6} {w.reason:>14} {w.revision:>4}")
        if len(result.windows) > len(shown):
            print(f"  … {len(result.windows) - len(shown)} more emissions (use --format json or --out)")


RUN_OUTPUTS = ("events.csv", "assignments.csv", "windows.csv", "watermarks.csv", "metrics.json")


def _check_out_dir(out: Path, force: bool) -> None:
    """Before the run: --out must be a directory we may write, and never silently overwrite a previous run."""
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


def _write_out(result: Result, out: Path) -> None:
    result.events.to_csv(out / "events.csv", index=False)
    result.assignments.to_csv(out / "assignments.csv", index=False)
    _write_windows(result.windows, out / "windows.csv")
    result.watermarks.to_csv(out / "watermarks.csv", index=False)
    (out / "metrics.json").write_text(json.dumps(result.metrics.to_dict(), indent=2))
    print(f"wrote {out}/events.csv, assignments.csv, windows.csv, watermarks.csv, metrics.json (times in µs)")


IDS_PER_WRITE = 1_000_000


def _write_windows(windows: pd.DataFrame, path: Path) -> None:
    """windows.csv, each emission's ids as a JSON list, written a slice at a time: with allowed lateness a
    window re-fired by each of 20,000 late events lists 2·10⁸ ids, text that must not be held at once."""
    listed = np.cumsum(windows["ids"].map(len).to_numpy()) // IDS_PER_WRITE
    bounds = np.flatnonzero(np.diff(listed)) + 1
    with path.open("w", newline="") as handle:
        for i, (a, b) in enumerate(zip(np.r_[0, bounds], np.r_[bounds, len(windows)])):
            part = windows.iloc[a:b].copy()
            part["ids"] = part["ids"].map(lambda ids: json.dumps(list(ids)))
            part.to_csv(handle, index=False, header=i == 0)


def _run_on_spark(stream: Stream, config: RunConfig, args: argparse.Namespace) -> Result:
    """The Spark runner with a progress bar on stderr; Spark's own output goes to a log (``spark.output``)."""
    from tqdm import tqdm

    from explorer.spark import SparkRunError, run_spark, spark_session

    log = _divert_spark_output(args.checkpoint) if args.own_process else None
    spark = partial(spark_session, args.master, ui=args.spark_ui)  # started once the run is known to fit
    with tqdm(total=None, unit="batch", desc="spark", file=user_stderr(), disable=None) as bar:
        def progress(p) -> None:
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


def _run_spark_native(stream: Stream, config: RunConfig, args: argparse.Namespace) -> Result:
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
    log = _divert_spark_output(None) if args.own_process else None
    spark = partial(spark_session, args.master, ui=args.spark_ui)
    with tqdm(total=batches, unit="batch", desc="spark-native", file=user_stderr(), disable=None) as bar:
        def progress(p, _batches) -> None:
            bar.update(min(p.batch_id + 1, batches) - bar.n)
            bar.set_postfix(rows=p.input_rows, ms=p.duration_ms)
        try:
            return run_spark_native(stream, config, spark, progress=progress)
        except ExplorerError as error:
            raise type(error)(f"{error} (Spark's own output: {log})" if log else str(error)) from None


def _divert_spark_output(checkpoint: str | None) -> Path:
    """Spark's banner and the JVM's tracebacks go to a log: in the checkpoint directory when there is one. Only
    when the process is the command's own (``python -m explorer``): the diversion lasts as long as the process."""
    from explorer.spark.output import divert_to

    if checkpoint:
        Path(checkpoint).mkdir(parents=True, exist_ok=True)
        return divert_to(Path(checkpoint) / "spark.log")
    return divert_to(Path(tempfile.gettempdir()) / f"wx-spark-{os.getpid()}.log")


def cmd_run(args: argparse.Namespace) -> None:
    config, column = build_config(args)
    if args.out:
        _check_out_dir(Path(args.out), args.force)
    stream = load_source(args, column)
    runners = {"local": lambda: run(stream, config), "spark": lambda: _run_on_spark(stream, config, args),
               "spark-native": lambda: _run_spark_native(stream, config, args)}
    result = runners[args.engine]()
    if args.out:
        with _writing(Path(args.out)):
            _write_out(result, Path(args.out))
    elif args.format == "json":
        result.write_json(sys.stdout)
    else:
        _print_run_table(result, stream)


def cmd_curve(args: argparse.Namespace) -> None:
    config, column = build_config(args)
    stream = load_source(args, column)
    try:
        delays = [parse_duration(d) for d in args.delays.split(",") if d.strip()]
    except InputError as exc:
        raise InputError(f"--delays: {exc}") from None
    if not delays:
        raise InputError("--delays needs at least one value")
    if args.engine == "spark":
        from explorer.spark import spark_session
        from explorer.spark.sweep import curve_on_spark

        if args.own_process:
            _divert_spark_output(None)
        rows = curve_on_spark(partial(spark_session, args.master, ui=args.spark_ui), stream, [config], delays)
    else:
        rows = curve(stream, config, delays)
    if args.format == "json":
        print(json.dumps([row.to_dict() for row in rows]))
    elif args.format == "csv":
        print(pd.DataFrame([row.to_dict() for row in rows]).to_csv(index=False), end="")
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
    print(format_explanation(explain_job(progress, stream, config, _target(args.target)), stream.absolute))


def _target(value: float) -> float:
    """A completeness target as a fraction: 0.99 and 99 (per cent) alike."""
    return value / 100 if value > 1 else value


def cmd_tune(args: argparse.Namespace) -> None:
    config, column = build_config(args)
    target = _target(args.target)
    if args.second:
        _print_frontier(frontier(load_source(args, column), config, target, args.second), args)
        return
    found = tune(load_source(args, column), config, target)
    if args.format == "json":
        print(json.dumps(found.to_dict()))
        return
    m = found.metrics
    knob = "L (the bound)" if PRESETS.get(config.preset) and PRESETS[config.preset].delay_field == "bound" else "delay"
    if not found.reached:
        print(f"no delay reaches {target:.2%}: at {human_duration(found.delay)} completeness is "
              f"{found.completeness:.4%}, and more delay does not help (an idle timeout or the late policy decides)")
        return
    print(f"smallest {knob} reaching {target:.2%}: {exact_seconds(found.delay)} s ({human_duration(found.delay)})")
    below = "" if found.below is None else f"; 1 µs less gives {found.below:.4%}"
    print(f"  completeness {found.completeness:.4%}{below}")
    mean = m.latency_event.mean
    print(f"  emit latency mean {human_duration(mean * MICROS['s'] if mean is not None else None)}, "
          f"p95 {human_duration(m.latency_event.p95 * MICROS['s'] if m.latency_event.p95 is not None else None)}; "
          f"refused {m.dropped + m.side_output} of {m.events} events ({found.evaluations} evaluations)")


def _print_frontier(points: list[FrontierPoint], args: argparse.Namespace) -> None:
    best = best_point(points)
    if args.format == "json":
        print(json.dumps([{args.second: p.second / MICROS["s"], "best": p is best, **p.tuning.to_dict()}
                          for p in points]))
        return
    print(f"{args.second:>18} | {'smallest delay':>16} | {'completeness':>12} | {'first-emission latency':>22} | revisions")
    print("-" * 90)
    for p in points:
        m = p.tuning.metrics
        delay = human_duration(p.tuning.delay) if p.tuning.reached else "not reached"
        latency = human_duration(round(p.latency * MICROS["s"])) if p.tuning.reached and p.latency is not None else "-"
        mark = "  ← lowest latency" if p is best else ""
        print(f"{human_duration(p.second) if p.second else 'off':>18} | {delay:>16} | {p.tuning.completeness:>11.2%} "
              f"| {latency:>22} | {m.updates:>9}{mark}")


def cmd_compare(args: argparse.Namespace) -> None:
    if args.limit < 0:
        raise InputError(f"compare --limit must be ≥ 0, not {args.limit}")
    window = WindowSpec.parse(args.window) if args.window else None
    delay = parse_duration(args.delay) if args.delay else None
    batches = BatchSpec.parse(args.batches) if args.batches else None
    labels = [label.strip() for label in args.presets.split(",") if label.strip()]
    sides = {label: side_config(label, window, delay, batches) for label in labels}
    comparison = compare(load_source(args), sides)
    unit = MICROS[comparison.results[labels[0]].time_unit]
    groups = comparison.groups
    if args.format == "json":
        print(json.dumps({"metrics": {label: r.metrics.to_dict() for label, r in comparison.results.items()},
                          "groups": [g.to_dict(unit) for g in groups],
                          "disagreements": [d.to_dict(unit) for d in comparison.disagreements]}))
        return
    width = max(len(label) for label in labels)
    print(f"{'preset':<{width}}  completeness  on time  late-upd  side-out  dropped  windows  updates  latency p50")
    for label, r in comparison.results.items():
        m = r.metrics
        p50 = human_duration(None if m.latency_event.p50 is None else m.latency_event.p50 * MICROS["s"])
        print(f"{label:<{width}}  {m.completeness:>11.2%}  {m.on_time:>7}  {m.late_updated:>8}  {m.side_output:>8}  "
              f"{m.dropped:>7}  {m.windows_emitted:>7}  {m.updates:>7}  {p50:>11}")
    print(f"\n{len(comparison.disagreements):,} disagreement(s) of {len(groups)} kind(s)")
    absolute = comparison.results[labels[0]].absolute

    def at(micros: int) -> str:
        return format_instant(micros, absolute)

    for group in groups:
        print(f"\n{group.title}\n  why: {group.why}")
        for d in group.examples[:max(0, args.limit)]:
            what = (f"window {d.key or '-'} [{at(d.start)}, {at(d.end)})" if d.kind == "window"
                    else f"event {d.event_id} (key {d.key or '-'}, t={at(d.start)})")
            print(f"  e.g. {what}")
            for label, seen in d.seen.items():
                print(f"    {label:<{width}}  {seen}")


def cmd_export(args: argparse.Namespace) -> None:
    config, column = build_config(args)
    given = args.events or args.synthetic
    source = ExportSource.of(load_source(args, column)) if given else ExportSource(column or "event_time")
    print(export(config, args.to, source), end="")


def cmd_validate(args: argparse.Namespace) -> None:
    stream = load_source(args)
    ev = stream.events
    print(f"{args.events}: OK, {len(ev)} events, {len(stream.keys)} key(s), {len(stream.partitions)} partition(s)")
    for column, form in stream.time_formats.items():
        print(f"  {column}: {form.describe()}")
    first, last = (format_instant(int(v), stream.absolute) for v in (ev["event_time"].min(), ev["event_time"].max()))
    print(f"  event time {first} … {last}{' (UTC)' if stream.absolute else ''}")
    if stream.has_arrival:
        delay = (ev["arrival_time"] - ev["event_time"]).to_numpy()
        p50, p95 = (human_duration(float(np.percentile(delay, q))) for q in (50, 95))
        print(f"  delay (arrival − event) p50 {p50}, p95 {p95}, max {human_duration(float(delay.max()))}")
    else:
        print("  no arrival_time column: file order is arrival order")
    print(f"  batch column: {'yes' if stream.has_batch else 'no'}")
    if stream.has_offset:
        print(f"  Kafka offsets in {len(stream.partitions)} partition(s): spark-log places the rows in a job's "
              "micro-batches by them")
    marks = stream.watermarks
    if len(marks):
        low, high = (format_instant(int(v), stream.absolute) for v in (marks["watermark"].min(), marks["watermark"].max()))
        print(f"  {len(marks)} scripted watermark row(s), {low} … {high}: --strategy scripted follows them")
    if stream.arrivals_raised:
        print(f"  {stream.arrivals_raised} event(s) in a later batch than events that arrived after them: each is "
              "taken to arrive with the latest arrival before it, so processing time never goes back")


def cmd_generate(args: argparse.Namespace) -> None:
    options = _generator_kwargs(args, args.name)
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


def _write_stream(stream: Stream, out: Path) -> None:
    frame = stream.events.copy()
    for column in ("event_time", "arrival_time"):
        frame[column] = frame[column] / MICROS["s"]
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
            "export": cmd_export, "validate": cmd_validate,
            "generate": cmd_generate}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Without ``argv`` it is the process's own command line (``python -m explorer``, the
    ``watermark-explorer`` script), so Spark's own output may go to a log for the rest of the process; a caller
    that passes ``argv`` and goes on (a test, a notebook) keeps its stderr."""
    try:
        args = build_parser().parse_args(argv)
        args.own_process = argv is None
        COMMANDS[args.command](args)
    except ExplorerError as exc:
        print(f"error: {exc}", file=user_stderr())
        return exit_status(exc)
    except KeyboardInterrupt:
        print("error: interrupted", file=user_stderr())
        return EXIT_STATUS[Interrupted]
    except BrokenPipeError:
        return 0
    return 0
