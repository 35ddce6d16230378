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
bundle only where two events would share a late pane: the panes of 100,000 steps (two an event, the 50k-event
Kafka-like export) in 53 (tumbling, no allowed lateness) to 9,000 (sessions, 30 s allowed lateness).

Times are µs: ``test_runner_api=False``, as the runner API's TestStream payload holds ms and would truncate them.

Early firings (``--early-firings T``): the trigger gets ``early=AfterProcessingTime(T)``, and the TestStream's
processing clock follows the arrival times (``advance_processing_time``): it is moved to an event's arrival before
the event when the event opens a pane (its timer is due T later) or a timer is due by then, the watermark given
first; for sessions to every new arrival (a session's timers live through its merges, which the program does not
follow: slower, one step per arrival, and a bundle per element of a key, since Beam merges a bundle's sessions
before its elements set timers). Two rules of the Python runner shape it. Its processing-time timers are float
seconds, so the clock runs 15,625 µs (1/64 s) per µs of arrival time, where every value is exact and a timer due
when an element arrives fires before it (the runner fires a timer once the clock is at or past it). And
``GeneralTriggerDriver.process_timer`` passes a processing-time timer's timestamp to ``AfterWatermark.should_fire``
as the watermark: a timer due at or after a window's end, in the same numbers, fires its on-time pane instead, timed
LATE, and no ON_TIME pane follows. So every event time (and the watermark) is moved by whole window periods past the
last timer, and the panes are written back in the file's times.

Sessions: Beam's Python DirectRunner never drops a fired session (no garbage-collection timer), so an element merges
into an overlapping one however old and fires it at once: the prediction with ``--session-state-kept``, which
``verify --engine beam`` holds the program against (a NOTE says so without it). Java runners and Dataflow drop it at
end + allowed lateness, the beam preset's default (docs/engines.md).

Output contract (docs/export.md): ``python job.py EVENTS OUTDIR`` (in a venv with apache-beam 2.77.0 and pandas)
writes ``OUTDIR/emissions.jsonl`` (``key``, ``window_start``, ``window_end`` in µs, ``ids``, ``seq``: the order the
panes came out, with each window's panes in pane-index order; also ``pane`` and ``timing``). Beam drops late
elements without handing them to the pipeline: there is no ``refused.jsonl``.
"""

from __future__ import annotations

from explorer.config import RunConfig, Scope, WindowKind, WindowSpec
from explorer.export.beam_aligned import EARLY_DUE
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


def trigger_of(early: object, aligned: object = None) -> str:
    """The trigger in Beam Python's words: AfterWatermark with a late pane per late element, and with early firings
    an early pane AfterProcessingTime after a pane's first element (in seconds of the program's processing clock:
    CLOCK_SCALE µs per µs of arrival time), or aligned, the program's own AlignedAfterProcessingTime (Beam Python
    has no alignedTo)."""
    if early is None:
        return "trigger.AfterWatermark(late=trigger.AfterCount(1))"
    if aligned is not None:
        return "trigger.AfterWatermark(early=AlignedAfterProcessingTime(first), late=trigger.AfterCount(1))"
    return ("trigger.AfterWatermark(early=trigger.AfterProcessingTime(EARLY_US * CLOCK_SCALE / 1_000_000), "
            "late=trigger.AfterCount(1))")


def beam_job(config: RunConfig, source: ExportSource) -> str:
    """The program's text (see the module's docstring)."""
    t = config.time
    sessions = config.window.kind is WindowKind.SESSION
    lag = watermark_lag(config)
    settings = source_settings(source) | {
        "PARTITION": None if t.scope is Scope.GLOBAL else source.partition,
        "LAG_US": lag, "ALLOWED_LATENESS_US": t.allowed_lateness, "PANES": t.panes.value,
        "EARLY_US": t.early_firings, "ALIGNED_US": None if sessions else t.early_aligned_to,
        "PERIOD_US": config.window.gap if sessions else config.window.slide}
    notes = unsupported(config, "Beam", {"allowed", "panes", "offset", "early", "state_kept"})
    if sessions and not t.session_state_kept:
        notes.append("this program runs on Beam's Python DirectRunner, which never drops a fired session: an event "
                     "that overlaps one however old merges into it and fires it at once (--session-state-kept true, "
                     "the prediction verify holds it against); the prediction here drops it at end + allowed "
                     "lateness, as Beam's Java runners and Dataflow do")
    if sessions and t.early_aligned_to is not None:
        notes.append("--early-aligned-to with sessions is not modelled (the explorer refuses it); the program's "
                     "early firings are not aligned")
    if t.scope not in (Scope.PARTITION_MIN, Scope.GLOBAL):
        notes.append(f"--scope {t.scope.value}: Beam's watermark is one per source partition, merged by min; the "
                     "program keeps that")
    cadence = per_event(config)
    if cadence:
        notes.append(cadence)
    header = [f"# NOTE: {n}" for n in notes]
    if sessions and t.session_state_kept:
        header.append("# sessions: a fired session is never dropped, as on Beam's Python DirectRunner, which runs this "
                      "program (--session-state-kept); Beam's Java runners and Dataflow drop it at end + allowed "
                      "lateness")
    header.append("# cadence: the watermark after each event (max event time seen − lag per partition, the min over "
                  "partitions), one late pane per late event")
    header.append(f"# watermark lag {format_duration(lag)}; window {config.window}; allowed lateness "
                  f"{format_duration(t.allowed_lateness)}; panes {t.panes.value}"
                  + (f"; early firings {format_duration(t.early_firings)} after a pane's first element (processing "
                     "time: the arrival clock)" if t.early_firings is not None else "")
                  + (f", aligned to {format_duration(t.early_aligned_to)} (Java's alignedTo)"
                     if t.early_aligned_to is not None and not sessions else ""))
    body = (_PROGRAM.replace("{WINDOW_FN}", window_fn(config.window))
            .replace("{SESSIONS}", str(sessions)).replace("{EARLY_DUE}", EARLY_DUE)
            .replace("{TRIGGER}", trigger_of(settings["EARLY_US"], settings["ALIGNED_US"]))
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
DirectRunner keep times in ms. With early firings (EARLY_US), deploy the trigger with the delay in seconds,
AfterProcessingTime(EARLY_US / 1_000_000) (in Java: AfterWatermark.pastEndOfWindow().withEarlyFirings(
AfterProcessingTime.pastFirstElementInPane().plusDelayOf(...)).withLateFirings(AfterPane.elementCountAtLeast(1))),
and drop the shift and CLOCK_SCALE: they serve the replay's test clock only. Aligned (ALIGNED_US), Java's trigger is
AfterProcessingTime.pastFirstElementInPane().alignedTo(EARLY_US, ALIGNED_US); Beam Python has none: keep
AlignedAfterProcessingTime, its timer early_due of the clock's time in µs (first = 0, CLOCK_SCALE = 1).

One rule differs between runners, for sessions: this program reproduces Beam's Python DirectRunner, which never
drops a session that has fired, so a later element whose own session has not expired merges into it and fires it
again at once, however old it is (the explorer's --session-state-kept). Dataflow and the Java runners drop a
window's state once the watermark passes its end + the allowed lateness, so there that element opens a session of
its own (the beam preset's default). With early firings, the Java runners keep only the earliest early timer of the
sessions a merge joins, where this runner keeps each, so a merged session may fire fewer early panes there.
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
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.utils.timestamp import MAX_TIMESTAMP, Duration, Timestamp
from apache_beam.utils.windowed_value import PaneInfoTiming

{SETTINGS}

def us(micros):
    return Duration(micros=micros)


def at(micros):
    return Timestamp(micros=micros)


WINDOW_FN = {WINDOW_FN}
SESSIONS = {SESSIONS}
# early firings: Beam's processing clock runs CLOCK_SCALE µs per µs of arrival time. Its timers are float seconds
# (clock.time() + delay), and a µs is no binary fraction: 15,625 µs is 1/64 s, so every clock value and timer is
# exact and a timer due exactly when an element arrives is due at the very clock value the element comes at.
CLOCK_SCALE = 15_625

{EARLY_DUE}

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
    """The TestStream's steps, ("elements", [event, ...]), ("watermark", W µs) and with early firings ("clock", A µs
    of arrival time), for the events in arrival order and each one's partition: the same panes as one bundle and one
    watermark per event, in far fewer steps (see the module's docstring). ``mark`` is the watermark the events so far
    make, ``given`` the one Beam has; the step to ``mark`` is taken only before an event whose fate differs between
    the two, and before the clock moves (see ``clock_to``)."""
    partitions = len(set(parts))
    highest, mark, given = {}, None, None
    steps, bundle, late_in_bundle, keys_in_bundle = [], [], set(), set()
    sessions = {}  # key -> its sessions (start, end, late), as Beam holds them: never dropped
    timers, clock = {}, None  # early firings: (key, window) -> when its pane's timer is due; the clock (arrival µs)

    def clock_to(arrival):
        """Move Beam's processing clock to ``arrival``, firing the early timers due by then. The watermark is given
        first: a window the watermark has fired on time (in one step per event) fires no early pane."""
        nonlocal given, clock
        flush()
        if mark != given:
            steps.append(("watermark", mark))
            given = mark
        steps.append(("clock", arrival))
        clock = arrival
        for due in [w for w, at in timers.items() if at <= arrival]:
            del timers[due]

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
        if EARLY_US is not None and SESSIONS:
            # a session's timers live through its merges (each merged part keeps its own): the clock moves to
            # every new arrival, so each timer fires before the first element that arrives at or after it
            if clock != event["arrival"]:
                clock_to(event["arrival"])
        elif EARLY_US is not None:
            # a pane's first element is processed at its arrival (its timer is due EARLY_US later), and the timers
            # due by an element's arrival fire before it (the tester's advanceProcessingTime, then the element)
            arrival, early = event["arrival"], [(key, end) for _, end in spans if not reached(mark, end)]
            if any(at <= arrival for at in timers.values()) or (clock != arrival and
                                                                 any(w not in timers for w in early)):
                clock_to(arrival)
            timers.update({w: early_due(arrival) for w in early if w not in timers})
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
            # Beam merges a bundle's sessions before its elements reach the trigger: with early firings a key's
            # second element would find the merged session's timer set and set none of its own, so one a bundle
            if key in late_in_bundle or ((late or EARLY_US is not None) and key in keys_in_bundle):
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
            for fired in [w for w in timers if reached(mark, w[1])]:  # its on-time pane ends the early firings
                del timers[fired]
    flush()
    return steps


def shift_for(events):
    """How far the program moves every event time (and watermark) before Beam sees it, with early firings: a whole
    number of window periods (sessions: of gaps), so the windows are the same ones, moved, and the panes are
    written back in the file's times. Beam's Python runner hands a processing-time timer's own timestamp to
    AfterWatermark.should_fire as if it were the watermark (GeneralTriggerDriver.process_timer), so an early timer
    due at or after a window's end (in the same numbers) fires that window's on-time pane instead, timed LATE, and
    no ON_TIME pane follows. Every event time is moved past the last early timer."""
    if EARLY_US is None or not events:
        return 0
    periods = 1 if ALIGNED_US is None else 2  # an aligned timer is at most two periods after its element
    last_timer = (events[-1]["arrival"] - events[0]["arrival"] + periods * EARLY_US) * CLOCK_SCALE
    lowest = min(event["t"] for event in events)
    shift = max(0, -(-(last_timer - lowest + PERIOD_US) // PERIOD_US) * PERIOD_US)
    if max(event["t"] for event in events) + shift + 2 * PERIOD_US >= MAX_TIMESTAMP.micros:
        sys.exit("the stream's arrivals span too long for the early firings' processing clock in Beam's timestamps")
    return shift


class WritePanes(beam.DoFn):
    """Appends each pane as one JSON line, in the order Beam fires them, its window in the file's times (a DoFn is
    pickled, so it cannot fill a list of main's)."""

    def __init__(self, path, shift):
        self.path = path
        self.shift = shift

    def process(self, element, w=beam.DoFn.WindowParam, pane=beam.DoFn.PaneInfoParam):
        key, ids = element
        with open(self.path, "a") as sink:
            sink.write(json.dumps({"key": key, "window_start": w.start.micros - self.shift,
                                   "window_end": w.end.micros - self.shift,
                                   "ids": sorted(ids), "pane": pane.index,
                                   "timing": PaneInfoTiming.to_string(pane.timing)}) + "\\n")


def main(events_path, outdir):
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    frame = read_events(events_path)
    stream = TestStream()
    events = events_in_arrival_order(frame)
    steps = replay(events, [event["partition"] for event in events])
    shift = shift_for(events)
    first = clock = events[0]["arrival"] if events else 0  # Beam's processing clock starts at 0: the first arrival
    for kind, value in steps:
        if kind == "watermark":
            stream.advance_watermark_to(Timestamp(micros=value + shift))
        elif kind == "clock":
            if value > clock:
                stream.advance_processing_time(Duration(micros=(value - clock) * CLOCK_SCALE))
                clock = value
        else:
            stream.add_elements([window.TimestampedValue((e["key"], e["id"]), Timestamp(micros=e["t"] + shift))
                                 for e in value])
    stream.advance_watermark_to_infinity()  # the input ends: every window not fired yet fires
    if EARLY_US is not None and SESSIONS:
        # the early timers of sessions merged away stay pending, and the DirectRunner busy-waits on them for ever
        # (past some 50 events); moving the clock past them all lets it end. They fire nothing: their windows are gone
        stream.advance_processing_time(Duration(seconds=10**7))
    panes = out / "panes.jsonl"
    panes.write_text("")
    options = PipelineOptions()
    options.view_as(StandardOptions).streaming = True
    pipeline = beam.Pipeline(options=options)
    _ = (pipeline
         | "events" >> stream
         | "windows" >> beam.WindowInto(WINDOW_FN, trigger={TRIGGER},
                                        allowed_lateness=us(ALLOWED_LATENESS_US),
                                        accumulation_mode=(trigger.AccumulationMode.ACCUMULATING
                                                           if PANES == "accumulating"
                                                           else trigger.AccumulationMode.DISCARDING))
         | "group" >> beam.GroupByKey()
         | "panes" >> beam.ParDo(WritePanes(str(panes), shift)))
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
