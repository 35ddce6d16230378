"""The PyFlink export: a whole job that replays the user's file through the tuned window with Flink's own
``forBoundedOutOfOrderness`` watermarks, emitted once per auto-watermark interval of *arrival* time, and writes
what Flink fired and what it sent to the late side output.

Why a replay with ticks: Flink emits its periodic watermark on a wall-clock timer (``autoWatermarkInterval``, 200 ms
by default), so a job fed a file at full speed would see a few watermarks at random points, and the same file
would give another answer on every run. The program puts a *tick* row in the stream before the first event of each
new interval of arrival time (the preset's ``--batches interval:T``: the events of one interval are one batch, the
watermark moves at its end). A small Java ``WatermarkStrategy`` (PyFlink has no Python ``WatermarkGenerator``;
its source is in the program and compiled with ``javac`` against PyFlink's jars on first run) keeps one of Flink's
own ``forBoundedOutOfOrderness(L)`` generators per Kafka partition (the file's ``partition`` column, if it has
one) and on each tick calls their ``onPeriodicEmit`` and then Flink's own ``WatermarkOutputMultiplexer`` (the min
over the partitions), as a Kafka source merges its splits. The tick rows are dropped before ``keyBy``. So only the
clock that calls Flink's code is replaced; the watermark arithmetic (max − L − 1 ms), the merge and the window
operator are Flink's.

With ``--source-idle-timeout`` each partition's generator is wrapped in Flink's own ``WatermarksWithIdleness``,
its clock the ticks' arrival time, and every interval ticks (the silent ones too: the idleness timer counts
periodic emits); the multiplexer leaves idle partitions out of the min, and takes the highest mark when all are.

Known limits, each a difference verify would show rather than hide: Flink's timestamps are ms, so event times with
a µs part are truncated (a session's bounds then differ from the prediction's by under 1 ms; windows' contents do
not).

Determinism needs parallelism 1 and Python functions that see elements and watermarks in the source's order:
``python.execution-mode`` thread runs them in the task's thread, one element at a time (the default process mode
holds a watermark until its bundle of elements is finished, so elements after it could overtake it; there
``python.fn-execution.bundle.size`` 1 keeps the order, about five times slower). ``.window()`` in PyFlink runs
PyFlink's Python port of Flink's WindowOperator; ``flink_java_job`` is the same job on the Java one.

Output contract (docs/export.md): ``python job.py EVENTS OUTDIR`` (in a venv with apache-flink 2.3.0, pandas and
a JDK on the PATH) writes ``OUTDIR/emissions.jsonl`` (``key``, ``window_start``, ``window_end`` in µs, ``ids``,
``seq``: Flink's firing order) and ``OUTDIR/refused.jsonl`` (``id``, ``key``: the late side output).
"""

from __future__ import annotations

from explorer.config import BatchKind, RunConfig, Scope, WindowKind
from explorer.export.common import MS, ExportSource, unsupported, watermark_lag
from explorer.export.flink_cumulate import PYTHON_CUMULATIVE_ASSIGNER, PYTHON_CUMULATIVE_IMPORTS
from explorer.export.flink_watermarks import HELPER
from explorer.export.replay import program_head, source_settings
from explorer.timeutil import format_duration

FLINK_INTERVAL = 200_000  # µs: Flink's default pipeline.auto-watermark-interval


def replays_cadence(config: RunConfig) -> bool:
    """The prediction's cadence is one a Flink job has: a watermark per interval, or after every N elements."""
    return config.batches is not None and config.batches.kind in (BatchKind.INTERVAL, BatchKind.EVENT, BatchKind.COUNT)


def cadence_settings(config: RunConfig) -> dict[str, object]:
    """How the replay ticks: TICK_EVERY_US (µs of arrival time per auto-watermark interval) or TICK_EVERY_EVENTS
    (a tick after every N events: ``--batches event`` / ``count:N``, the watermark after each element). A cadence
    no Flink job has (the file's batch column) runs at Flink's default interval, with a note."""
    batches = config.batches
    if batches is not None and batches.kind is BatchKind.INTERVAL:
        return {"TICK_EVERY_US": batches.interval, "TICK_EVERY_EVENTS": None}
    if batches is not None and batches.kind in (BatchKind.EVENT, BatchKind.COUNT):
        return {"TICK_EVERY_US": None, "TICK_EVERY_EVENTS": batches.count if batches.kind is BatchKind.COUNT else 1}
    return {"TICK_EVERY_US": FLINK_INTERVAL, "TICK_EVERY_EVENTS": None}


def describe_cadence(config: RunConfig) -> str:
    ticks = cadence_settings(config)
    if ticks["TICK_EVERY_US"]:
        return (f"a watermark per {format_duration(int(str(ticks['TICK_EVERY_US'])))} of arrival time "
                "(autoWatermarkInterval)")
    return f"a watermark after every {ticks['TICK_EVERY_EVENTS']} event(s)"


def whole_ms(config: RunConfig) -> str | None:
    """A reason Flink's millisecond clock cannot run ``config`` as predicted, or None."""
    window, time = config.window, config.time
    spans = {"the window": window.gap if window.kind is WindowKind.SESSION else window.size,
             "the slide": window.slide if window.kind in (WindowKind.SLIDING, WindowKind.CUMULATE) else 0,
             "the window offset": window.offset,
             "the watermark's lag": watermark_lag(config), "the allowed lateness": time.allowed_lateness,
             "the idle timeout": time.source_idle_timeout or 0,
             "the continuous trigger's interval": time.continuous_event_time or 0,
             "the processing-time trigger's interval": time.continuous_processing_time or 0}
    for name, micros in spans.items():
        if micros % MS:
            return f"{name} ({format_duration(micros)}) is not a whole number of ms; Flink's times are ms"
    if config.batches is not None and config.batches.kind is BatchKind.INTERVAL and config.batches.interval % MS:
        return "the auto-watermark interval must be a whole number of ms"
    return None


def flink_settings(config: RunConfig, source: ExportSource) -> dict[str, object]:
    """The constants both Flink programs (PyFlink and Java) start from."""
    window = config.window
    return source_settings(source) | {
        "PARTITION": source.partition if config.time.scope is Scope.PARTITION_MIN else None,
        "BOUND_MS": watermark_lag(config) // MS, "ALLOWED_LATENESS_MS": config.time.allowed_lateness // MS,
        "WINDOW": window.kind.value, "SIZE_MS": window.size // MS, "SLIDE_MS": window.slide // MS,
        "GAP_MS": window.gap // MS, "OFFSET_MS": window.offset // MS,
        "IDLE_MS": -1 if config.time.source_idle_timeout is None else config.time.source_idle_timeout // MS,
        "CONTINUOUS_MS": -1 if config.time.continuous_event_time is None else config.time.continuous_event_time // MS,
        "PROCESSING_MS": -1 if config.time.continuous_processing_time is None
        else config.time.continuous_processing_time // MS,
    } | cadence_settings(config)


def flink_notes(config: RunConfig, target: str) -> list[str]:
    """What the program cannot carry as the config says it, in words (``export.common.unsupported``), and what it
    runs instead: Flink's default cadence, its one watermark per partition merged by min."""
    notes = unsupported(config, target, {"allowed", "side_output", "per_element", "offset", "continuous",
                                         "continuous_processing"})
    if config.time.continuous_processing_time is not None:
        notes.append(f"ContinuousProcessingTimeTrigger fires every "
                     f"{format_duration(config.time.continuous_processing_time)} of the wall clock, and never at the "
                     "watermark: a replay of the file cannot reproduce those firings (verify refuses it)")
    if not replays_cadence(config):
        notes.append(f"the prediction's cadence ({config.batches or 'the file'}'s batches) is no Flink job's; the "
                     f"program emits a watermark per {format_duration(FLINK_INTERVAL)} of arrival time, Flink's "
                     "default")
    if config.time.scope not in (Scope.PARTITION_MIN, Scope.GLOBAL):
        notes.append(f"--scope {config.time.scope.value}: Flink's watermark is one per source split (partition), "
                     "merged by min; the program keeps that")
    return notes


def pyflink_job(config: RunConfig, source: ExportSource) -> str:
    """The program's text (see the module's docstring)."""
    window = config.window
    assigner = {WindowKind.TUMBLING: "TumblingEventTimeWindows.of(Time.milliseconds(SIZE_MS), "
                                      "Time.milliseconds(OFFSET_MS))",
                WindowKind.SLIDING: "SlidingEventTimeWindows.of(Time.milliseconds(SIZE_MS), Time.milliseconds(SLIDE_MS), "
                                    "Time.milliseconds(OFFSET_MS))",
                WindowKind.SESSION: "EventTimeSessionWindows.with_gap(Time.milliseconds(GAP_MS))",
                WindowKind.CUMULATE: "CumulativeEventTimeWindows.of(Time.milliseconds(SIZE_MS), "
                                     "Time.milliseconds(SLIDE_MS), Time.milliseconds(OFFSET_MS))"}[window.kind]
    cumulate = window.kind is WindowKind.CUMULATE
    lag, allowed = watermark_lag(config), config.time.allowed_lateness
    header = [f"# NOTE: {n}" for n in flink_notes(config, "PyFlink")]
    header.append(f"# cadence: {describe_cadence(config)}")
    header.append(f"# watermark: for_bounded_out_of_orderness({format_duration(lag)}); window: {window}; "
                  f"allowed_lateness {format_duration(allowed)}; late events to the side output 'late'")
    trigger = ("\n             .trigger(ContinuousEventTimeTrigger.of(Time.milliseconds(CONTINUOUS_MS)))"
               if config.time.continuous_event_time is not None else
               "\n             .trigger(ContinuousProcessingTimeTrigger.of(Time.milliseconds(PROCESSING_MS)))"
               if config.time.continuous_processing_time is not None else "")
    body = (_PROGRAM.replace("{ASSIGNER}", assigner).replace("{JAVA}", HELPER).replace("{TRIGGER}", trigger)
            .replace("{CUMULATE_IMPORTS}", PYTHON_CUMULATIVE_IMPORTS if cumulate else "")
            .replace("{CUMULATE}", PYTHON_CUMULATIVE_ASSIGNER if cumulate else "")
            .replace("{SETTINGS}", program_head(flink_settings(config, source))))
    return "\n".join(header) + "\n" + body


_PROGRAM = '''"""A PyFlink job exported by the Watermark Explorer.

    python job.py EVENTS OUTDIR

replays EVENTS in arrival order (parallelism 1) through keyBy(key), the window below, allowed_lateness and
side_output_late_data, with forBoundedOutOfOrderness(BOUND_MS) watermarks emitted once per auto-watermark interval
of arrival time (a tick row before the first event of each interval; TICK_EVERY_EVENTS: after every N events),
and writes every firing to OUTDIR/emissions.jsonl (key, window_start, window_end in µs, ids, seq), every event
Flink sent to the late side output to OUTDIR/refused.jsonl (id, key), and where its time went to
OUTDIR/timing.json (read_s, engine_start_s: the JVM and the job graph, run_s). Needs apache-flink, pandas and a JDK (javac
compiles the watermark helper below on first run, into ~/.cache/watermark-explorer).
To deploy: read your Kafka topic with env.from_source(KafkaSource..., WatermarkStrategy
.for_bounded_out_of_orderness(Duration.of_millis(BOUND_MS)).with_timestamp_assigner(...), "events") (a Kafka
source keeps a watermark per partition and merges them by min, as the helper does; add .with_idleness(...) when
IDLE_MS ≥ 0), set
env.get_config().set_auto_watermark_interval(the interval above, in ms), and keep key_by, the window,
allowed_lateness and side_output_late_data; drop the tick rows and the helper.
"""

import hashlib
import json
import os
import site
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyflink
from pyflink.common import Configuration, Time, Types, WatermarkStrategy
from pyflink.datastream import OutputTag, StreamExecutionEnvironment
from pyflink.datastream.data_stream import DataStream
from pyflink.datastream.functions import ProcessWindowFunction
from pyflink.datastream.window import (ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger, EventTimeSessionWindows,
                                      SlidingEventTimeWindows, TumblingEventTimeWindows)
{CUMULATE_IMPORTS}from pyflink.java_gateway import get_gateway

{SETTINGS}
JAVA = r"""{JAVA}"""


def helper_jar():
    """The watermark helper, compiled once per source text with javac against PyFlink's own jars."""
    digest = hashlib.sha1(JAVA.encode()).hexdigest()[:12]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "watermark-explorer"
    jar = cache / f"flink-replay-{digest}.jar"
    if jar.exists():
        return jar
    cache.mkdir(parents=True, exist_ok=True)
    lib = Path(pyflink.__file__).parent / "lib"
    with tempfile.TemporaryDirectory(dir=cache) as work:
        src, classes = Path(work, "Replay.java"), Path(work, "classes")
        src.write_text(JAVA)
        subprocess.run(["javac", "--release", "17", "-nowarn", "-cp", f"{lib}/*", "-d", str(classes), str(src)],
                       check=True)
        tmp = Path(work, "helper.jar")
        with zipfile.ZipFile(tmp, "w") as z:
            for path in sorted(classes.rglob("*.class")):
                z.write(path, str(path.relative_to(classes)))
        os.replace(tmp, jar)  # atomic: a job started at the same time finds a whole jar or none
    return jar


def replay_rows(frame):
    """(id, key, event time ms, partition, is_tick) in arrival order, a tick before the first event of each new
    auto-watermark interval of arrival time (or after every TICK_EVERY_EVENTS events): there the watermark moves,
    from the events before the tick."""
    rows, last, parts = [], None, set()
    for n, event in enumerate(events_in_arrival_order(frame)):
        part = event["partition"]
        parts.add(part)
        interval = event["arrival"] // TICK_EVERY_US if TICK_EVERY_US else n // TICK_EVERY_EVENTS
        if last is not None and interval != last:
            # withIdleness counts periodic emits: then every interval ticks, the silent ones too
            ticks = range(last + 1, interval + 1) if IDLE_MS >= 0 and TICK_EVERY_US else [interval]
            rows.extend(("", "", k * (TICK_EVERY_US or 0) // 1000, "", True) for k in ticks)
        last = interval
        rows.append((event["id"], event["key"], event["t"] // 1000, str(part), False))
    return rows, len(parts)


def row_type():
    """Built afresh for each use: a type object a stream has used holds JVM handles an OutputTag cannot pickle."""
    return Types.TUPLE([Types.STRING(), Types.STRING(), Types.LONG(), Types.STRING(), Types.BOOLEAN()])
{CUMULATE}

class Contents(ProcessWindowFunction):
    """A firing: the window and the ids in it (a late re-firing carries the whole window)."""

    def process(self, key, context, elements):
        w = context.window()
        yield json.dumps({"key": key, "window_start": w.start * 1000, "window_end": w.end * 1000,
                          "ids": sorted(e[0] for e in elements)})


def main(events, outdir):
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    rows, partitions = replay_rows(read_events(events))
    read = time.perf_counter()
    jar = helper_jar()
    # the embedded interpreter does not find a venv's site-packages from sys.executable: the JVM, started below,
    # hands it these
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [*site.getsitepackages(), os.environ.get("PYTHONPATH")]))
    config = Configuration()
    # Python functions run in the task's own thread (PEMJA): each element and each watermark reaches the window
    # operator in the order the source sent them, and ~5x faster than the default process mode, whose bundles
    # hold a watermark until the bundle ends (there, bundle.size 1 keeps the order; kept for a switch back)
    config.set_string("python.execution-mode", "thread")
    config.set_string("python.fn-execution.bundle.size", "1")
    config.set_string("python.fn-execution.bundle.time", "1")
    config.set_string("python.executable", sys.executable)  # Flink's Python: this interpreter
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    env.add_jars(jar.as_uri())
    env.get_config().set_auto_watermark_interval(0)  # the ticks emit the watermarks, not the wall clock
    replay = get_gateway().jvm.wxreplay.Replay
    stamped = (env.from_collection(rows, type_info=row_type())
               .assign_timestamps_and_watermarks(WatermarkStrategy(replay.watermarks(BOUND_MS, partitions, IDLE_MS))))
    late = OutputTag("late", row_type())
    fired = (DataStream(replay.events(stamped._j_data_stream))
             .key_by(lambda e: e[1], key_type=Types.STRING())
             .window({ASSIGNER}){TRIGGER}
             .allowed_lateness(ALLOWED_LATENESS_MS)
             .side_output_late_data(late)
             .process(Contents(), Types.STRING()))
    lines = fired.union(fired.get_side_output(late).map(lambda e: json.dumps({"id": e[0], "key": e[1]}),
                                                        Types.STRING()))
    seq = refused = 0
    started = time.perf_counter()
    with (out / "emissions.jsonl").open("w") as emissions, (out / "refused.jsonl").open("w") as late_sink:
        with lines.execute_and_collect() as results:
            for line in results:
                row = json.loads(line)
                if "window_start" in row:
                    seq += 1
                    row["seq"] = seq
                    emissions.write(json.dumps(row) + "\\n")
                else:
                    refused += 1
                    late_sink.write(line + "\\n")
    (out / "timing.json").write_text(json.dumps({"read_s": read - began, "engine_start_s": started - read,
                                                 "run_s": time.perf_counter() - started}))
    print(f"{seq} firings, {refused} events to the late side output; written to {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python job.py EVENTS OUTDIR")
    main(sys.argv[1], sys.argv[2])
'''
