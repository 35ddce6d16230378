"""What the commands print for a person to read: the run's table, tune's answer and frontier, compare's
disagreements, validate's description of a file. (``--format json`` and ``--out`` are written by the commands
themselves.)

A module of its own because this is wording and layout, about two hundred lines of it, that changes for reasons
of its own; the commands (``explorer.cli``) stay a short list of what each one computes.
"""

from __future__ import annotations

import argparse
import json
from decimal import Decimal
from typing import Any

import numpy as np

from explorer.compare import Comparison
from explorer.config import BatchSpec, RunConfig, Strategy, emission, what_if
from explorer.core import Result
from explorer.core.result import Reason, json_units
from explorer.metrics import FrontierPoint, LiveTuning, Tuning, best_point
from explorer.streams import Stream
from explorer.timeutil import (MICROS, exact_duration, exact_seconds, format_instant,
                               human_duration_marked, rounded_human)

# What ``--delay`` sets, in each engine's own words (tune names it so). Kept here, not on the Preset: wording.
DELAY_WORDS: dict[str, str] = {
    "voltsp": "delayWindowClose",
    "textbook": "L (the bound)",
    "spark": "withWatermark delay (delayThreshold)",
    "flink": "forBoundedOutOfOrderness (L)",
    "beam": "max delay (bound)",
    "kafka-streams": "grace",
    "bytewax": "wait_for_system_duration",
    "storm": "lag",
}
NEGATIVE_LATENCY = ("negative: emitted before the window's end, as emitting on update forwards a window's updates "
                    "as they come (each record's, or each batch's)")


def delay_word(preset_name: str) -> str:
    """What ``--delay`` is called by ``preset_name``'s engine (``delay`` for a preset not listed)."""
    return DELAY_WORDS.get(preset_name, "delay")


def print_run_table(result: Result, stream: Stream) -> None:
    m = result.metrics
    unit = result.time_unit
    config = result.config
    print(f"{result.stream_name}: {m.events} events, preset {config.preset}, window {config.window}")
    print(f"  cadence: {(config.batches or BatchSpec()).describe()} (--batches)")
    print(f"  output: {emission(config)}")
    unreal = what_if(config)
    if unreal:
        print(f"  WHAT IF: {', '.join(unreal)} {'is not a setting' if len(unreal) == 1 else 'are not settings'} "
              f"of {config.preset}; these numbers are not what {config.preset} itself would do")
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
    early = int((result.windows["reason"] == Reason.EARLY.value).sum())
    live = f" ({m.completeness_live:.2%} while the input runs)" if m.end_of_stream else ""
    print(f"  completeness {m.completeness:.2%}{live}, windows emitted {m.windows_emitted}, updates {m.updates}"
          f"{f', tombstones {tombstones} (sessions a record replaced)' if tombstones else ''}"
          f"{f', early panes {early} (before the watermark fired their window)' if early else ''}, "
          f"still open at end {m.end_of_stream}, most windows open {m.max_open_windows}")
    if m.latency_event.mean is not None:
        processing = m.latency_processing.mean
        lat = {name: human_duration_marked(_micros(getattr(m.latency_event, name))) for name in ("mean", "p50", "p95", "max")}
        print(f"  emit latency (event time) mean {lat['mean']}, p50 {lat['p50']}, p95 {lat['p95']}, max {lat['max']}; "
              f"(processing time) mean {human_duration_marked(_micros(processing))}")
        if min(v for v in (m.latency_event.mean, m.latency_event.p50, m.latency_event.max) if v is not None) < 0:
            print(f"  (event-time latency {NEGATIVE_LATENCY})")
        if processing is not None and processing < 0:
            print("  (processing-time latency below 0: windows emitted at an arrival time before their end)")
    shown = result.windows.head(20)
    if len(shown):
        width = 23 if result.absolute else 10

        def at(micros: int) -> str:  # date-times for wall-clock streams, the stream's own unit otherwise
            if result.absolute:
                return format_instant(micros, True)
            text = f"{Decimal(int(micros)) / MICROS[unit]:f}"  # exact: 12.5, not 12.4999999
            return text.rstrip("0").rstrip(".") if "." in text else text

        start, end = ("start", "end") if result.absolute else (f"start ({unit})", f"end ({unit})")
        print(f"  {'key':>8} {start:>{width}} {end:>{width}} {'count':>6} {'batch':>6} {'reason':>14} {'rev':>4}"
              f"{'   (UTC)' if result.absolute else ''}")
        w: Any  # a row: a namedtuple of the windows table's columns
        for w in shown.itertuples(index=False):
            print(f"  {w.key or '-':>8} {at(w.start):>{width}} {at(w.end):>{width}} {w.count:>6} "
                  f"{w.emit_batch:>6} {w.reason:>14} {w.revision:>4}")
        if len(result.windows) > len(shown):
            print(f"  … {len(result.windows) - len(shown)} more emissions (use --format json or --out)")


def print_tuning(found: Tuning, config: RunConfig, target: float) -> None:
    """``tune``'s answer in words: the smallest delay (or why none), exact so that pasted back it reaches the
    target, in the engine's own word for the knob; its completeness and latency."""
    m = found.metrics
    live = isinstance(found, LiveTuning)
    running = " while the input runs" if live else ""
    if not found.reached:
        if isinstance(found, LiveTuning):
            _print_live_unreached(found, target)
        else:
            print(f"no delay reaches {target:.2%}: at --delay {exact_duration(found.delay)} completeness is "
                  f"{found.completeness:.4%}, and more delay does not help (an idle timeout or the late policy decides)")
        return
    exact = exact_duration(found.delay)
    human, way = rounded_human(found.delay, up=True)
    spelled = "" if exact == f"{exact_seconds(found.delay)}s" else f" = {exact}"
    about = "" if way is None and human.replace(" ", "") == exact else f" ({human}{', rounded up' if way else ''})"
    if live and way is not None:  # not monotone: a delay rounded up may miss the target, so only the exact one
        about = ""
    print(f"smallest delay {'found ' if live else ''}reaching {target:.2%}{running}: {exact_seconds(found.delay)} s"
          f"{spelled}{about}")
    print(f"  as {config.preset}'s {delay_word(config.preset)}: --delay {exact} reaches it{running}")
    below = "" if found.below is None else f"; 1 µs less gives {found.below:.4%}"
    if isinstance(found, LiveTuning):
        print(f"  live completeness {found.completeness:.4%}{below} (completeness {m.completeness:.4%} with the "
              f"{m.end_of_stream} window(s) only the end of input closes)")
        if found.bracket is not None:
            lo, hi = (exact_duration(d) for d in found.bracket)
            print(f"  live completeness is not monotone in the delay (more delay leaves more windows open at the end "
                  f"of input): this is the smallest delay found on a grid of {len(found.grid)} points from 0 to "
                  f"{exact_duration(found.grid[-1])}, refined between {lo} and {hi} on grids of {len(found.grid)} points "
                  "to 1 µs; a smaller one between grid points may reach it too")
    else:
        print(f"  completeness {found.completeness:.4%}{below}")
        if m.end_of_stream:
            print(f"  {m.end_of_stream} window(s) close only at the end of input; while the input runs, completeness "
                  f"is {m.completeness_live:.4%} (tune counts the events in them as complete; --completeness live "
                  "does not)")
    mean, p95 = m.latency_event.mean, m.latency_event.p95
    negative = any(v is not None and v < 0 for v in (mean, p95))
    print(f"  emit latency mean {human_duration_marked(_micros(mean))}, p95 {human_duration_marked(_micros(p95))}"
          f"{f' ({NEGATIVE_LATENCY})' if negative else ''}; "
          f"refused {m.dropped + m.side_output} of {m.events} events ({found.evaluations} evaluation"
          f"{'s' * (found.evaluations != 1)})")


def _print_live_unreached(found: LiveTuning, target: float) -> None:
    m = found.metrics
    print(f"no delay found reaching {target:.2%} while the input runs: the best live completeness found is "
          f"{found.completeness:.4%}, at --delay {exact_duration(found.delay)} (completeness {m.completeness:.4%} with "
          f"the {m.end_of_stream} window(s) only the end of input closes)")
    print(f"  live completeness is not monotone in the delay (more delay leaves more windows open at the end of "
          f"input): searched on a grid of {len(found.grid)} points from 0 to {exact_duration(found.grid[-1])} "
          f"({found.evaluations} evaluations); a delay between them may do better (--grid N for a finer one)")


def _micros(seconds: float | None) -> float | None:
    """A latency in seconds (as Metrics keep them) back in µs, to the ns: 1.1 s is 1,100,000 µs, not
    1,100,000.0000000002, which would print as rounded."""
    return None if seconds is None else round(seconds * MICROS["s"], 3)


def print_frontier(points: list[FrontierPoint], args: argparse.Namespace) -> None:
    best = best_point(points)
    if args.format == "json":
        print(json.dumps([{args.second: p.second / MICROS["s"], f"{args.second}_us": p.second, "best": p is best,
                           **p.tuning.to_dict()}
                          for p in points]))
        return
    print(f"{args.second:>18} | {'smallest delay':>16} | {'completeness':>12} | {'first-emission latency':>28} | revisions")
    print("-" * 96)
    for p in points:
        m = p.tuning.metrics
        delay = exact_duration(p.tuning.delay) if p.tuning.reached else "not reached"
        latency = human_duration_marked(_micros(p.latency)) if p.tuning.reached and p.latency is not None else "-"
        mark = "  ← lowest latency" if p is best else ""
        print(f"{exact_duration(p.second) if p.second else 'off':>18} | {delay:>16} | {p.tuning.completeness:>11.2%} "
              f"| {latency:>28} | {m.updates:>9}{mark}")


def print_comparison(comparison: Comparison, labels: list[str], json_format: bool, limit: int) -> None:
    """``compare``'s answer: each side's metrics, then the disagreements by kind, ``limit`` examples each."""
    groups = comparison.groups
    if json_format:  # times in µs whatever the input's format, as run's JSON (unit 1: µs as they are)
        print(json.dumps({"units": json_units(comparison.results[labels[0]].absolute),
                          "metrics": {label: r.metrics.to_dict() for label, r in comparison.results.items()},
                          "groups": [_whole(g.to_dict(1)) for g in groups],
                          "disagreements": [_whole(d.to_dict(1)) for d in comparison.disagreements]}))
        return
    width = max(len(label) for label in labels)
    print(f"{'preset':<{width}}  completeness  on time  late-upd  side-out  dropped  windows  updates  latency p50")
    for label, r in comparison.results.items():
        m = r.metrics
        p50 = human_duration_marked(_micros(m.latency_event.p50))
        print(f"{label:<{width}}  {m.completeness:>11.2%}  {m.on_time:>7}  {m.late_updated:>8}  {m.side_output:>8}  "
              f"{m.dropped:>7}  {m.windows_emitted:>7}  {m.updates:>7}  {p50:>11}")
    if any(r.metrics.latency_event.p50 is not None and r.metrics.latency_event.p50 < 0
           for r in comparison.results.values()):
        print(f"(latency below 0: {NEGATIVE_LATENCY.removeprefix('negative: ')})")
    print(f"\n{len(comparison.disagreements):,} disagreement(s) of {len(groups)} kind(s)")
    absolute = comparison.results[labels[0]].absolute

    def at(micros: int | None) -> str:
        return format_instant(micros, absolute)

    for group in groups:
        print(f"\n{group.title}\n  why: {group.reason}\n  cause: {group.cause}")
        for d in group.examples[:max(0, limit)]:
            key = f"key {d.key}, " if d.key else ""
            what = (f"{key}window [{at(d.start)}, {at(d.end)})" if d.kind == "window"
                    else f"event {d.event_id} ({key}t={at(d.start)})")
            print(f"  e.g. {what}")
            for label, seen in d.seen.items():
                print(f"    {label:<{width}}  {seen}")


def _whole(value: Any) -> Any:
    """A disagreement's record with its µs as integers (``to_dict(1)`` divides them by 1, giving floats)."""
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


def print_validation(stream: Stream, name: str) -> None:
    """``validate``'s description of a file read as a stream (``name``: the file as given)."""
    ev = stream.events
    print(f"{name}: OK, {len(ev)} events, {len(stream.keys)} key(s), {len(stream.partitions)} partition(s)")
    for column, form in stream.time_formats.items():
        print(f"  {column}: {form.describe()}")
    first, last = (format_instant(int(v), stream.absolute) for v in (ev["event_time"].min(), ev["event_time"].max()))
    print(f"  event time {first} … {last}{' (UTC)' if stream.absolute else ''}")
    if stream.has_arrival:
        delay = (ev["arrival_time"] - ev["event_time"]).to_numpy()
        # one partition, in place, for both (the array is this function's own): 0.15 s at 10M events, where a
        # call per quantile copied and partitioned it twice (0.35 s)
        p50, p95 = (human_duration_marked(float(q)) for q in np.percentile(delay, [50, 95], overwrite_input=True))
        print(f"  delay (arrival − event) p50 {p50}, p95 {p95}, max {human_duration_marked(int(delay.max()))}"
              f"{' (negative: arrival before event time, the clocks disagree)' if delay.min() < 0 else ''}")
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
