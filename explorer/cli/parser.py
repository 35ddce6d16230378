"""What the command line says: the parser (``build_parser``), and the stream and the configuration its arguments
name (``load_source``, ``build_config``).

A module of its own because the parser is the CLI's contract: docs/cli.md is generated from it
(``dev/cli_reference.py``) and ``tests/test_docs.py`` holds the two together, so it changes apart from the
commands that use it.
"""

from __future__ import annotations

import argparse
import inspect
from decimal import Decimal, InvalidOperation
from dataclasses import replace
from typing import Any, NoReturn

from explorer.config import (ENGINE_WORDS, PRESETS, TIME_FIELDS, BatchSpec, RunConfig, WindowSpec, apply_delay, load_yaml_config,
                             preset)
from explorer.errors import InputError
from explorer.export import TARGETS as EXPORT_TARGETS
from explorer.verify.engines import ENGINE_JOBS as VERIFY_ENGINES
from explorer.metrics import COUNTS, CURVE_POINTS, SECOND_KNOBS
from explorer.streams import GENERATORS, Stream, generate, load_events
from explorer.streams.loading import MissingColumns, parse_time_units
from explorer.streams.stream import COLUMNS
from explorer.timeutil import parse_duration

DESCRIPTION = "``python -m explorer``: run, curve, validate, generate. Bad input exits 2 with one line, never a traceback."
TARGET_FORMS = "99%, 99 or 0.99 alike (a number above 1 is per cent)"
COLUMN_OPTIONS = COLUMNS  # a --NAME-col option per column of a Stream's events
EVENTS_HELP = ("events file (or a directory of them): .csv, .jsonl or .json (lines or an array), .parquet, .avro; "
               "the text ones also compressed, as .gz, .bz2 or .zst")


def _generator_options() -> dict[str, inspect.Parameter]:
    options: dict[str, inspect.Parameter] = {}
    for generator in GENERATORS.values():
        for name, param in inspect.signature(generator.make).parameters.items():
            options.setdefault(name, param)
    return options


def _add_source(parser: argparse.ArgumentParser, required_file: bool) -> None:
    if required_file:
        parser.add_argument("events", help=EVENTS_HELP)
    else:
        parser.add_argument("events", nargs="?", help=EVENTS_HELP)
        parser.add_argument("--synthetic", metavar="NAME", choices=list(GENERATORS),
                            help=f"a built-in stream instead of a file: {', '.join(GENERATORS)}")
        _add_generator_options(parser)
    parser.add_argument("--time-unit", default="auto", metavar="UNIT",
                        help="what numeric times count: auto (default: each column detected; epoch numbers by their "
                             "size), s, ms, us or ns for every time column, or per column: arrival_time=ms,ts=s")
    parser.add_argument("--timezone", metavar="ZONE",
                        help="the IANA zone naive date-times were written in (Europe/Berlin, America/New_York); "
                             "default UTC. Times with an offset and epoch numbers keep theirs. A local time the "
                             "clocks skipped is refused; one they repeated is taken at its first occurrence")
    for column in COLUMN_OPTIONS:
        parser.add_argument(f"--{column.replace('_', '-')}-col", metavar="NAME",
                            help=f"the file's column for {column} (a dotted path reaches into nested records: "
                                 "payload.after.ts)")


def _add_generator_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("generator options (see `generate --help`)")
    for name, param in _generator_options().items():
        kind = type(param.default) if param.default is not inspect.Parameter.empty else str
        group.add_argument(f"--{name.replace('_', '-')}", dest=f"gen_{name}", type=kind, default=None, metavar="X")


def _add_config(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("time configuration")
    g.add_argument("--preset", choices=sorted(PRESETS), help="start from an engine's rules (default voltsp)")
    g.add_argument("--config", metavar="FILE.yaml", help="a timeConfig in VoltSP's words")
    g.add_argument("--window", help="tumbling:10 | sliding:20:10 | session:30 | cumulate:1h:15m (Flink SQL's CUMULATE: "
                                    "size, then step) | kstreams-sliding:5m (Kafka Streams' SlidingWindows: the time "
                                    "difference, whole ms; default tumbling:10); an offset after +: tumbling:1d+1h "
                                    "starts the windows at 01:00")
    g.add_argument("--batches", help="event | count:N | interval:T | column")
    for spec in TIME_FIELDS:
        if spec.option == "delay":  # the knob every engine has, read in the preset's arithmetic
            g.add_argument("--delay", help="the knob every engine has, in the preset's arithmetic "
                                           "(VoltSP: delayWindowClose; textbook and bytewax: the bound L)")
        else:
            g.add_argument(f"--{spec.option.replace('_', '-')}", dest=spec.option, help=spec.help,
                           choices=spec.choices or None)
    for words in ENGINE_WORDS.values():
        g.add_argument(f"--{words.option.replace('_', '-')}", dest=words.option, help=words.help,
                       choices=list(words.words))


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
    parser = _Parser(prog="python -m explorer", description=DESCRIPTION)
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
    p_curve.add_argument("--delays", help="comma-separated durations, e.g. 0,2,5,10,20,40 or 0,30s,1m30s (default: "
                                           f"{CURVE_POINTS} from 0 to the p99.9 of arrival − event time, rounded up)")
    p_curve.add_argument("--format", choices=["table", "csv", "json"], default="table",
                         help="table (delays and latencies in seconds), or csv and json (columns named by their "
                              "unit: delay_us, avg_emit_latency_us …)")
    _add_engine(p_curve, streaming=False)

    p_log = sub.add_parser("spark-log", help="explain a Structured Streaming job from its progress log; with its "
                                             "events export, side by side with the spark preset's replay")
    p_log.add_argument("log", help="JSON lines of StreamingQueryProgress (query.lastProgress), or Spark's event log")
    _add_source(p_log, required_file=False)
    _add_config(p_log)
    p_log.add_argument("--target", default="99%",
                       help=f"completeness the suggested delay reaches (99%%): {TARGET_FORMS.replace('%', '%%')}")

    p_tune = sub.add_parser("tune", help="the smallest delay that reaches a completeness target (exact, not on a "
                                         "grid; for live completeness, which is not monotone, the smallest found on "
                                         "a grid refined to 1 µs)")
    _add_source(p_tune, required_file=False)
    _add_config(p_tune)
    p_tune.add_argument("--target", required=True, help=f"completeness to reach: {TARGET_FORMS.replace('%', '%%')}")
    p_tune.add_argument("--with", dest="second", choices=list(SECOND_KNOBS),
                        help="also a second knob: for values of it from 0 to the delay alone needs, the smallest "
                             "delay beside it and the first emissions' latency (the frontier of the two)")
    p_tune.add_argument("--completeness", choices=list(COUNTS), default="final",
                        help="which completeness the target is for: final (default; the events in windows only "
                             "the end of input closes count as complete; searched exactly) or live (they do not, as "
                             "in a job whose input never ends: the curve's 'while running'; not monotone in the "
                             "delay, so the smallest delay found on a grid, refined to 1 µs)")
    p_tune.add_argument("--grid", type=int, metavar="N",
                        help=f"--completeness live: points of the grid and of each refinement (default {CURVE_POINTS})")
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

    p_ver = sub.add_parser("verify", help="export the job, run it on the real engine over the same file, and hold "
                                          "what the engine emitted against the prediction (exit 1 when they differ)")
    _add_source(p_ver, required_file=False)
    _add_config(p_ver)
    p_ver.add_argument("--engine", required=True, choices=list(VERIFY_ENGINES),
                       help="the engine to run the exported job on (all but spark need `make engines` once)")
    p_ver.add_argument("--work", metavar="DIR", help="keep the job, its input and its output here (default: a "
                                                     "temporary folder, removed afterwards)")

    p_val = sub.add_parser("validate", help="check an events file and describe it")
    _add_source(p_val, required_file=True)

    p_gen = sub.add_parser("generate", help="write a built-in synthetic stream to a file")
    p_gen.add_argument("name", choices=list(GENERATORS))
    p_gen.add_argument("--out", metavar="FILE", help="where to write (.csv, .jsonl or .parquet); default data/NAME.csv")
    p_gen.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    _add_generator_options(p_gen)
    return parser


def parse_target(text: str) -> float:
    """A completeness target as a fraction: ``99%``, ``99`` (a number above 1 and up to 100 is per cent) and
    ``0.99`` alike. Anything else (0, above 100 %, NaN, not a number) is one line."""
    raw = str(text).strip()
    percent = raw.endswith("%")
    try:
        value = Decimal(raw.removesuffix("%").strip())
    except InvalidOperation:
        value = Decimal("NaN")
    if value.is_finite() and not percent and 1 < value <= 100:
        percent = True
    fraction = value / 100 if percent else value
    if not value.is_finite() or not 0 < fraction <= 1:
        raise InputError(f"--target {raw[:40]!r}: give a completeness in (0, 100 %]: {TARGET_FORMS}")
    return float(fraction)


def generator_kwargs(args: argparse.Namespace, name: str) -> dict[str, Any]:
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
        return generate(synthetic, **generator_kwargs(args, synthetic))
    if not args.events:
        raise InputError("an events file (or --synthetic NAME) is needed")
    columns = {c: getattr(args, f"{c}_col") for c in COLUMN_OPTIONS if getattr(args, f"{c}_col", None)}
    if event_time_column and "event_time" not in columns:  # the YAML's eventTimeExtractor names the column
        columns["event_time"] = event_time_column
        try:
            return load_events(args.events, time_unit=parse_time_units(args.time_unit), columns=columns,
                               timezone=args.timezone)
        except MissingColumns as exc:
            if event_time_column in exc.missing:
                raise InputError(f"{exc}; the config's eventTimeExtractor names it (give --event-time-col to use "
                                 "another)") from None
            raise
    return load_events(args.events, time_unit=parse_time_units(args.time_unit), columns=columns or None,
                       timezone=args.timezone)


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
    for words in ENGINE_WORDS.values():
        given = getattr(args, words.option, None)
        if given is None:
            continue
        value = words.parse(given)
        if changes.get(words.field, value) != value:
            raise InputError(f"--{words.option.replace('_', '-')} {given} and --{words.field.replace('_', '-')} "
                             f"{getattr(args, words.field)} say different things; give one")
        changes[words.field] = value
    config = config.with_time(**changes)
    if getattr(args, "delay", None) is not None:
        config = apply_delay(config, parse_duration(args.delay))
    return config, column
