"""The Beam export (Python SDK): a whole pipeline that replays the user's file through a ``TestStream`` whose
watermark is the tuned bounded delay, then ``WindowInto`` with the default trigger, the allowed lateness and the
panes, and ``GroupByKey``, on the DirectRunner; it writes every pane Beam fires.

Why a TestStream: a Beam source sets its own watermark (KafkaIO's ``CustomTimestampPolicyWithLimitedDelay``: max
event time seen − max delay per partition, the min over the partitions), and a file read as a bounded source has
none until its end, where every window fires at once. The TestStream gives Beam the preset's watermark at the
preset's cadence: after each event, max − L per partition (the file's partition column, as mapped, if it has one), the
min over the partitions, none until every partition has sent. Beam's window and trigger code is untouched.

Why not one TestStream step per event: the DirectRunner copies a key's whole state for every bundle (and never drops
a window's state), so the time grows faster than the events (3.7k events: 36-65 s, against 8-19 s here). Beam
decides with the watermark in three places: a window fires once the watermark reaches its end (the Python runner's
end: ``watermark >= window.end``), an element is dropped for a window once the watermark is past its end + allowed
lateness, and a window the watermark has passed fires one late pane per bundle that adds to it. The program
therefore advances the TestStream's watermark (to the preset's value, exactly) only before an event for which one of
those would come out otherwise (its own windows, or a session of its key it could merge with), and starts a new
bundle only where two events would share a late pane. The panes are those of one step per event (two steps an event:
100,000 for the 50k-event Kafka-like export), in 53 steps (tumbling, no allowed lateness) to 9,000 (sessions, 30 s
allowed lateness).

Times are µs: the program runs with ``test_runner_api=False``, since the runner API's TestStream payload holds ms
and would truncate them.

Output contract (docs/export.md): ``python job.py EVENTS OUTDIR`` (in a venv with apache-beam 2.77.0 and pandas)
writes ``OUTDIR/emissions.jsonl`` (``key``, ``window_start``, ``window_end`` in µs, ``ids``, ``seq``: the order the
panes came out, with each window's panes in pane-index order; also ``pane`` and ``timing``). Beam drops late
elements without handing them to the pipeline: there is no ``refused.jsonl``.
"""

from __future__ import annotations

from explorer.config import RunConfig, Scope, WindowKind, WindowSpec
from explorer.export.common import ExportSource, one_event_per_batch, unsupported, watermark_lag
from explorer.export.replay import program_head, source_settings
from explorer.timeutil import format_duration



def per_event(config: RunConfig) -> str | None:
    """The beam preset takes one event per batch (a bundle, then the watermark); a prediction with larger batches
    moves the watermark inside them, which a Beam bundle cannot."""
    return one_event_per_batch(config, "the replay gives Beam the watermark after each event, as the beam preset "
                                       "does")


def window_fn(window: WindowSpec) -> str:
    """Beam Python's WindowFn, in µs: ``us`` makes a Duration, ``at`` a Timestamp (an offset is one: Beam's
    ``Timestamp.of`` takes no Duration)."""
    at = f", at({window.offset})" if window.offset else ""
    return {WindowKind.TUMBLING: f"window.FixedWindows(us({window.size}){at})",
            WindowKind.SLIDING: f"window.SlidingWindows(us({window.size}), us({window.slide}){at})",
            WindowKind.SESSION: f"window.Sessions(us({window.gap}))"}[window.kind]


def beam_job(config: RunConfig, source: ExportSource) -> str:
    """The program's text (see the module's docstring)."""
    t = config.time
    lag = watermark_lag(config)
    settings = source_settings(source) | {
        "PARTITION": None if t.scope is Scope.GLOBAL else source.partition,
        "LAG_US": lag, "ALLOWED_LATENESS_US": t.allowed_lateness, "PANES": t.panes.value}
    notes = unsupported(config, "Beam", {"allowed", "panes", "offset"})
    if t.scope not in (Scope.PARTITION_MIN, Scope.GLOBAL):
        notes.append(f"--scope {t.scope.value}: Beam's watermark is one per source partition, merged by min; the "
                     "program keeps that")
    cadence = per_event(config)
    if cadence:
        notes.append(cadence)
    header = [f"# NOTE: {n}" for n in notes]
    header.append("# cadence: the watermark after each event (max event time seen − lag per partition, the min over "
                  "partitions), one late pane per late event")
    header.append(f"# watermark lag {format_duration(lag)}; window {config.window}; allowed lateness "
                  f"{format_duration(t.allowed_lateness)}; panes {t.panes.value}")
    body = (_PROGRAM.replace("{WINDOW_FN}", window_fn(config.window))
            .replace("{SESSIONS}", str(config.window.kind is WindowKind.SESSION))
            .replace("{SETTINGS}", program_head(settings)))
    return "\n".join(header) + "\n" + body


_PROGRAM = '''"""A Beam pipeline (Python SDK) exported by the Watermark Explorer.

    python job.py EVENTS OUTDIR

replays EVENTS in arrival order through a TestStream that gives Beam the watermark below (after each event: max
event time seen − LAG_US per partition, the min over the partitions), then WindowInto(WINDOW_FN) with the default
trigger (a late pane per late element), the allowed lateness and the panes, and GroupByKey, on the DirectRunner in
streaming mode. Every pane goes to OUTDIR/emissions.jsonl (key, window_start, window_end in µs, ids, seq, pane,
timing). Beam drops late elements silently: they are in no pane.

To deploy: keep WindowInto and what follows; replace the TestStream with your source, whose watermark must be
max event time − LAG_US per partition: in Java, KafkaIO.read().withTimestampPolicyFactory((tp, previous) ->
new CustomTimestampPolicyWithLimitedDelay<>(record -> <event time>, Duration.millis(LAG_US / 1000), previous));
in Python, a source (a splittable DoFn) with a ManualWatermarkEstimator set to max − LAG_US. Runners other than the
DirectRunner keep times in ms. One rule differs between runners: the DirectRunner (Python) never drops a session
that has fired, so a later element that overlaps it merges into it and fires it again, however late; Dataflow and
the Java runners drop a window's state once the watermark passes its end + the allowed lateness.
"""

import json
import sys
from pathlib import Path

import apache_beam as beam
import numpy as np
import pandas as pd
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_stream import TestStream
from apache_beam.transforms import trigger, window
from apache_beam.utils.timestamp import Duration, Timestamp
from apache_beam.utils.windowed_value import PaneInfoTiming

{SETTINGS}

def us(micros):
    return Duration(micros=micros)


def at(micros):
    return Timestamp(micros=micros)


WINDOW_FN = {WINDOW_FN}
SESSIONS = {SESSIONS}


def reached(mark, end):
    """Beam fires a window once its input watermark reaches the window's end (None: no watermark yet)."""
    return mark is not None and mark >= end


def dropped(mark, end):
    """Beam drops an element for a window once the watermark is past the window's end + the allowed lateness."""
    return mark is not None and mark > end + ALLOWED_LATENESS_US


def merge_session(spans, start, end, mark):
    """Put the session [start, end) into its key's ``spans`` (start, end, late) as Beam's Sessions merge it (only
    overlapping sessions join) and say whether the merged session fires at once: a session is late once the
    watermark has reached its end, and stays late through every merge (AfterWatermark's is_late state, combined
    with any), and a late session fires a pane for each bundle that adds to it, whatever its new end."""
    joined = [s for s in spans if s[0] < end and start < s[1]]
    merged = (min([start] + [s[0] for s in joined]), max([end] + [s[1] for s in joined]))
    late = reached(mark, merged[1]) or any(s[2] or reached(mark, s[1]) for s in joined)
    spans[:] = [s for s in spans if s not in joined] + [(*merged, late)]
    return late


def replay(events, parts):
    """The TestStream's steps, ("elements", [event, ...]) and ("watermark", W µs), for the events in arrival order
    and each one's partition: the same panes as one bundle and one watermark per event, in far fewer steps (see the
    module's docstring). ``mark`` is the watermark the events so far make, ``given`` the one Beam has; the step to
    ``mark`` is taken only before an event whose fate differs between the two."""
    partitions = len(set(parts))
    highest, mark, given = {}, None, None
    steps, bundle, late_in_bundle, keys_in_bundle = [], [], set(), set()
    sessions = {}  # key -> its sessions (start, end, late), as Beam holds them: never dropped

    def flush():
        if bundle:
            steps.append(("elements", list(bundle)))
        bundle.clear()
        late_in_bundle.clear()
        keys_in_bundle.clear()

    def differs(end):
        return reached(mark, end) != reached(given, end) or dropped(mark, end) != dropped(given, end)

    for event, part in zip(events, parts):
        key, t = event["key"], event["t"]
        spans = [(w.start.micros, w.end.micros) for w in WINDOW_FN.assign(window.WindowFn.AssignContext(
            Timestamp(micros=t)))]
        own = sessions.setdefault(key, []) if SESSIONS else []
        if mark != given and (any(differs(end) for _, end in spans) or any(reached(mark, end) != reached(given, end)
                                                                             for _, end, _ in own)):
            flush()
            steps.append(("watermark", mark))
            given = mark
        late = set()
        if SESSIONS:
            start, end = spans[0]
            if not dropped(given, end) and merge_session(own, start, end, given):
                late.add(key)
            if key in late_in_bundle or (late and key in keys_in_bundle):
                flush()
        else:
            late = {(key, start) for start, end in spans if reached(given, end) and not dropped(given, end)}
            if late & late_in_bundle:
                flush()
        bundle.append(event)
        late_in_bundle.update(late)
        keys_in_bundle.add(key)
        highest[part] = max(highest.get(part, t), t)
        if len(highest) == partitions:
            mark = min(highest.values()) - LAG_US  # never moves back: each partition's max only grows
    flush()
    return steps


class WritePanes(beam.DoFn):
    """Appends each pane as one JSON line, in the order Beam fires them (a DoFn is pickled, so it cannot fill a
    list of main's)."""

    def __init__(self, path):
        self.path = path

    def process(self, element, w=beam.DoFn.WindowParam, pane=beam.DoFn.PaneInfoParam):
        key, ids = element
        with open(self.path, "a") as sink:
            sink.write(json.dumps({"key": key, "window_start": w.start.micros, "window_end": w.end.micros,
                                   "ids": sorted(ids), "pane": pane.index,
                                   "timing": PaneInfoTiming.to_string(pane.timing)}) + "\\n")


def main(events_path, outdir):
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    frame = read_events(events_path)
    stream = TestStream()
    events = events_in_arrival_order(frame)
    steps = replay(events, [event["partition"] for event in events])
    for kind, value in steps:
        if kind == "watermark":
            stream.advance_watermark_to(Timestamp(micros=value))
        else:
            stream.add_elements([window.TimestampedValue((e["key"], e["id"]), Timestamp(micros=e["t"]))
                                 for e in value])
    stream.advance_watermark_to_infinity()  # the input ends: every window not fired yet fires
    panes = out / "panes.jsonl"
    panes.write_text("")
    options = PipelineOptions()
    options.view_as(StandardOptions).streaming = True
    pipeline = beam.Pipeline(options=options)
    _ = (pipeline
         | "events" >> stream
         | "windows" >> beam.WindowInto(WINDOW_FN, trigger=trigger.AfterWatermark(late=trigger.AfterCount(1)),
                                        allowed_lateness=us(ALLOWED_LATENESS_US),
                                        accumulation_mode=(trigger.AccumulationMode.ACCUMULATING
                                                           if PANES == "accumulating"
                                                           else trigger.AccumulationMode.DISCARDING))
         | "group" >> beam.GroupByKey()
         | "panes" >> beam.ParDo(WritePanes(str(panes))))
    try:
        pipeline.run(test_runner_api=False).wait_until_finish()  # µs times: the runner API's payload holds ms
    except TypeError as error:
        # Beam's Python runner never releases the watermark hold of a session merged into one it had fired; at
        # the end its monitor reports a "pipeline stall", raised as a tuple (a TypeError). Every pane is written
        # by then.
        if "must derive from BaseException" not in str(error):
            raise
        print("note: the DirectRunner reported a pipeline stall after the last pane (a session merged into a fired "
              "one holds the watermark)")
    rows = [json.loads(line) for line in panes.read_text().splitlines() if line.strip()]
    # seq: the order the panes came out, each window's panes put in pane-index order on the places they took
    places = {}
    for n, row in enumerate(rows):
        places.setdefault((row["key"], row["window_start"], row["window_end"]), []).append(n)
    ordered = [None] * len(rows)
    for spots in places.values():
        for spot, n in zip(spots, sorted(spots, key=lambda n: rows[n]["pane"])):
            ordered[spot] = rows[n]
    with (out / "emissions.jsonl").open("w") as sink:
        for seq, row in enumerate(ordered, 1):
            sink.write(json.dumps({**row, "seq": seq}) + "\\n")
    print(f"{len(rows)} panes from {len(steps)} TestStream steps; written to {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python job.py EVENTS OUTDIR")
    main(sys.argv[1], sys.argv[2])
'''
