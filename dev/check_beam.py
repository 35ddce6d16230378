"""Dev experiment (not part of `make test`): the `beam` preset against the real Apache Beam Python DirectRunner.

Run (apache-beam 2.77.0 needs protobuf < 7 and pyarrow < 26, so it has its own venv, .engines/beam, which
`make check-beam` builds before running the tumbling and sliding checks; explorer.core imports fine there, with
beam's pyarrow 25):

    make check-beam        # or, once .engines/beam exists:
    PYTHONPATH=. .engines/beam/bin/python dev/check_beam.py --window tumbling --allowed 0
        --window tumbling|sliding|session   (sizes: --size 3000 --slide 1000 --gap 2500, in ms)
        --allowed MS        allowed lateness (default 0)
        --cases N --seed N  random streams (default 3 from seed 1; case c uses Random(seed * 1000 + c));
                            --events N, --keys N to pin them (default 50-200 elements, 2-4 keys)
        --pin P             share of the watermarks put on a window end or end + A, ± 1 ms (default 0.35);
                            the others trail the largest timestamp by 0-2.5 s (or 5 s)
        --bundle P          put an element into the previous element's add_elements step with probability P
                            (one bundle, several elements); the preset then gets the steps as batches
        --panes MODE        accumulating (default) or discarding, for Beam and the preset alike
        --kept              the preset with --session-state-kept, the Python runner's rule for fired sessions
        --emulate           also run the preset with rule differences 1 and 2 emulated by knobs (see below)
        --fix-purge         diagnosis: the preset on the reference engine, with difference 4 patched in-process
        --probe             the minimal examples below, both sides printed
        -v                  print every pane / refusal that differs (with the watermark at the element's arrival)

Each case is one sequence of TestStream steps: add_elements (one keyed element per step, unless --bundle)
interleaved with advance_watermark_to(W) at random points (strictly increasing, as TestStream wants), ending
with advance_watermark_to_infinity. Timestamps are out of order (up to 9 s behind a moving clock), some on a
window edge or 1 ms before it; for sessions some exactly one gap from an earlier element of the key. Beam runs
TestStream -> WindowInto(FixedWindows | SlidingWindows | Sessions, trigger=AfterWatermark(late=AfterCount(1)),
allowed_lateness=A, ACCUMULATING) -> GroupByKey -> a DoFn that writes (key, window, sorted ids, pane timing,
pane index) to a file (a DoFn is pickled, so a list in __main__ would not see its output), on the streaming
DirectRunner (BundleBasedDirectRunner); 2-9 s a run. The preset replays the same steps with scripted watermarks:
each advance_watermark_to(W) is a watermark row at W + 1 µs, each element an event row, one batch per step
(BatchKind.EVENT; the `batch` column with --bundle); run() with its default (compiled) engine.

What is compared, per stream:
  panes       the multiset of (key, window start, end, sorted ids) over all of Beam's panes vs all of the
              preset's emissions (accumulating: a late pane carries the whole window, so does LATE_UPDATE). The
              matched ones are counted by (Beam pane timing[#index 0 if LATE], preset reason).
  refusals    fixed windows: the (element, window) pairs Beam dropped (the element is in no pane of that window
              of its key) vs the pairs the preset refused (Result.assignments, admitted false); sessions: the
              elements in no pane vs the elements in no emission.
  end         advance_watermark_to_infinity fires every window not fired yet as an ON_TIME pane (all
              end-of-window timers come due); late panes need an element, so nothing else fires. The preset's
              END_OF_STREAM emissions (what is still open when the input ends) are exactly that, and are compared
              as Beam's final firing. Checked on every stream ("eos=+inf"): the preset with one more watermark row
              far past every window emits the same (key, window, ids) set, as WATERMARK instead.
  model       a 60-line model of the Python runner's rules as stated below (beam_model), checked against Beam's
              panes on every stream; with --emulate also: the emulated preset vs the same model with a window's
              state dropped once W > end + A (which Beam's Python runner never does).

Facts about the runner (apache_beam 2.77.0 source, checked with --probe):
  * Times are whole milliseconds. The pipeline goes through its runner-API proto before running and the
    TestStream payload holds ms: element timestamps are truncated to ms, a watermark that is not a whole ms
    fails an assertion. So the streams are on a ms grid, and W can never be a window's maxTimestamp (end − 1 µs).
  * A window fires when the watermark reaches its END, not its maxTimestamp: the end-of-window timer is set at
    window.end and fires once timestamp <= input watermark (AfterWatermark.on_element / should_fire
    `watermark >= window.end`, InMemoryUnmergedState.get_timers). Without the round trip
    (Pipeline.run(test_runner_api=False), µs watermarks) advance_watermark_to(end − 1 µs) does not fire it, so
    at µs resolution the preset's row should be W, not W + 1 µs (--probe, last example). The Python runner is
    one µs behind Java (maxTimestamp firing, drop once maxTimestamp + A < W) on both rules, so this script
    replays the Python runner's W as the row W (offset 0); Java's W would be the row W + 1 µs, as for Flink.
  * An element is dropped for a window when input watermark > window.end + A (GeneralTriggerDriver.
    process_elements, strict), judged on the element's own window, before any session merge.
  * Late panes fire per bundle: AfterCount(1) is evaluated after the whole bundle is added, so all elements of
    one add_elements step that land in one window fire ONE late pane. One element per step gives one pane per
    late element, as the preset's one batch per row; with --bundle the preset gets the steps as batches and
    re-emits once per batch: the same again (measured below). A watermark step is its own bundle, and the timers
    it makes due fire before the next step's elements are processed.
  * The first pane of a window the watermark had passed before its first element (within A) is LATE with index
    0, never ON_TIME; the preset fires it as LATE_UPDATE at revision 1 at that batch (same contents, same step;
    before commit a5af915 it said WATERMARK).
  * Sessions.merge joins windows only when they overlap (end > next start): [10, 20) and [20, 30) stay two.
    (Java's IntervalWindow.isDisjoint also counts touching windows as disjoint. Python's
    IntervalWindow.intersects, `other.start < self.end or self.start < other.end`, is wrong but unused.)
  * The Python trigger driver never drops a window's state (no garbage-collection timer; `TODO(robertwb):
    allowed lateness` in _output). A session that merges into one that has already fired fires at once with the
    merged contents (labelled EARLY index 0 when the merged end is past the watermark, LATE index 0 otherwise:
    merging resets the pane index), and never fires again at its new end. When the merged end is past the
    watermark, its watermark hold is never released: the GroupByKey's output watermark stays there, so later
    late panes of ANY key are labelled EARLY too, and at the end the monitor reports "pipeline stall" and raises
    it as a tuple (a bug): the run ends in "TypeError: exceptions must derive from BaseException". Every pane,
    the +inf firings included, is written by then (the model agrees on all of them); the script reports the run
    as "stalled" and compares it. Labels are therefore not compared, contents are.

AFTER THE FIXES (session 9, the same day): the beam preset now keeps a late element at W = end + A
(late_kept_at_horizon, difference 1), the purge bug (difference 4) is fixed in both engines, and the preset's
rows are the Python runner's W (offset 0, see above). Seed 1, 3 streams each:
  tumbling A = 0: 3/3 identical, panes 260/260, refusals 3/3     A = 1.5 s: 3/3, 279/279, 3/3
  sliding  A = 0: 3/3 identical, panes 767/767, refusals 3/3     A = 1.5 s: 3/3, 828/828, 3/3
  session  A = 0: 0/3 identical, panes 182/215, refusals 3/3     A = 1.5 s: 0/3, 181/224, 3/3
Sessions still differ by difference 2 (Beam merges only overlapping sessions; the preset, as Spark, touching
ones too) and 3 (the Python runner never drops a fired session). The table further down was measured before
the fixes, with rows at W + 1 µs.

WITH --kept (2026-11-26): the preset with --session-state-kept (a fired session is never dropped, difference
3 below as a rule of both engines) against the same runner, sessions:
  A = 0:     seeds 1-3, pin 0.35: 9/9 identical, panes 572/572, refusals 9/9 (Beam stalled in 8)
  A = 1.5 s: seeds 1-3, pin 0.35: 9/9 identical, panes 637/637, refusals 9/9
  A = 1.5 s, seed 11, bundle 0.3: 3/3, 175/175 (accumulating and discarding alike)
  A = 0, seed 7, pin 0, discarding: 3/3, 194/194
Matched labels: a merge into a fired session is Beam's EARLY (or LATE) pane at index 0 where the preset has a
LATE_UPDATE at the next revision; its pane_index (result.pane_columns) is 0 too, and `verify --engine beam` compares
each pane's index and timing (this script counts the labels only).

Rule differences (the preset as it was before the fixes vs the Python runner); --probe prints each example:
  1. Drop boundary. Beam drops an element for a window once W > end + A; the preset refuses it once its watermark
     W + 1 µs reaches end + A, i.e. at W = end + A on the ms grid. At exactly W = end + A Beam keeps it (a late
     pane), even with A = 0: tumbling 10 s, A = 0, a@1, advance_watermark_to(10 s), b@5 ->
       Beam:   [0,10) {a} ON_TIME, [0,10) {a,b} LATE        preset: [0,10) {a} WATERMARK, b refused
     (one ms later, W = 10.001 s, both drop b). Beam Java drops when maxTimestamp + A < W, i.e. W >= end + A
     (LateDataDroppingDoFnRunner, source read, not run): there the preset's boundary is Java's. This is the only
     difference for tumbling and sliding windows. --emulate: allowed lateness A + 2 µs (the preset then admits
     while end + A + 2 µs > W + 1 µs, i.e. W <= end + A).
  2. Touching sessions are not merged. gap 10 s, a@10, b@20, advance to 100 s ->
       Beam:   [10,20) {a} and [20,30) {b}, both ON_TIME    preset: [10,30) {a,b} WATERMARK
     Beam Java too (IntervalWindow.isDisjoint, source read). --emulate: gap − 1 µs (the preset then merges
     t2 <= t1 + gap − 1 µs, Beam's t2 < t1 + gap; its windows end 1 µs early, put back when comparing; the
     firing step is the same on the ms grid) and allowed lateness A + 3 µs (rule 1 for the shorter window).
  3. Fired sessions are never discarded (Python runner only; Java's ReduceFnRunner has a cleanup timer at
     maxTimestamp + A: source read, not run). The preset discards a fired session once W reaches end + A; Beam
     keeps it, so an element whose own session has not expired merges into it however old it is.
     gap 10 s, A = 0, a@10, advance to 20 s, b@15 ->
       Beam:   [10,20) {a} ON_TIME, [10,25) {a,b} EARLY (at once; then the stall)
       preset: [10,20) {a} WATERMARK, [15,25) {b} WATERMARK (at the next watermark)
     Same with A = 3 s and W = 24 s before b. With A = 3 s and W = 20 s both merge: [10,25) {a,b} at once (the
     preset as LATE_UPDATE). Not emulable by a knob; --emulate compares with the model with state dropped instead.
  4. A preset bug, not a Beam rule: a fired session that grew is discarded at its OLD end + A. The purge heap
     keeps the entry pushed when the session first fired; WindowStore.purge pops it without checking that the
     window still ends there (WindowStore.ready does check, for the fire heap), so the grown session goes early,
     against the preset's own rule (dropped once the watermark passes its end + allowed lateness) and against a
     Java cleanup timer at the merged window's maxTimestamp + A. Both engines (compiled and reference).
     gap 10 s, A = 5 s, a@100, advance to 110 s, b@108 (-> [100,118) {a,b}), advance to 116 s, c@112 ->
       Beam:   [100,110) {a}, [100,118) {a,b}, [100,122) {a,b,c}
       preset: [100,110) {a}, [100,118) {a,b} LATE_UPDATE, [112,122) {c} END_OF_STREAM
     ([100,118) + 5 s = 123 > 116: the session should still be there). The flink preset, with
     session_lateness_on_merge, gives [100,122) {a,b,c}. --fix-purge patches WindowStore.purge in-process (the
     reference engine) to skip such stale entries: the emulated preset then equals the model with state dropped
     on every stream.
  Agreeing rules: firing at W >= end (on the ms grid); the late pane per late element (per bundle) carrying the
  whole window; the first pane of a window already behind the watermark; a session's lateness judged on the
  element's own window (a@20, advance to 29 s, b@11: b's own [11,21) has expired, both drop it although [20,30)
  is open); END_OF_STREAM as the +inf firing. The min over partitions is not exercised (TestStream has one
  watermark).

MEASURED 2026-11-23 (apache-beam 2.77.0, Python 3.11, 2 cores; size 3 s, slide 1 s, gap 2.5 s; A = 0 or 1.5 s;
3 streams per seed; "panes" = Beam's panes matched by the preset / Beam's panes, "refusals" = streams whose
drops are equal; every stream: eos=+inf yes, model of Beam's rules exact):
  window    A      streams                 identical  panes        refusals  emulated (identical, panes)
  tumbling  0      seeds 1-3, pin 0.35     3/9        623/665      3/9       9/9, 665/665
  tumbling  1.5 s  seeds 1-3, pin 0.35     2/9        699/727      2/9       9/9, 727/727
  tumbling  0      seed 7, pin 0           1/3        220/224      1/3       3/3, 224/224
  tumbling  1.5 s  seed 7, pin 0           2/3        247/249      2/3       3/3, 249/249
  tumbling  1.5 s  seed 11, bundle 0.3     1/3        190/194      1/3       3/3, 194/194
  sliding   0      seeds 1-3, pin 0.35     1/9        1874/1936    1/9       9/9, 1936/1936
  sliding   1.5 s  seeds 1-3, pin 0.35     1/9        2095/2139    1/9       9/9, 2139/2139
  sliding   0      seed 7, pin 0           1/3        670/674      1/3       3/3, 674/674
  sliding   1.5 s  seed 7, pin 0           1/3        753/758      1/3       3/3, 758/758
  sliding   1.5 s  seed 11, bundle 0.3     1/3        577/585      1/3       3/3, 585/585
  session   0      seeds 1-3, pin 0.35     0/9        452/572      4/9       1/9, 522/572 (= model w/ drop 9/9)
  session   1.5 s  seeds 1-3, pin 0.35     0/9        486/637      6/9       0/9, 576/637 (= model w/ drop 6/9)
  session   0      seed 7, pin 0           0/3        150/194      1/3       1/3, 177/194 (= model w/ drop 3/3)
  session   1.5 s  seed 7, pin 0           0/3        166/204      3/3       2/3, 198/204 (= model w/ drop 2/3)
  session   1.5 s  seed 11, bundle 0.3     0/3        147/175      2/3       2/3, 168/175 (= model w/ drop 3/3)
  The preset never emitted a pane Beam lacks for fixed windows (preset panes = matched panes): every difference
  there is a late pane Beam fired for an element that arrived at W = end + A exactly (difference 1), and with
  it emulated all 54 fixed-window streams are identical. Sessions: Beam stalled in 24 of 27 streams (difference
  3 occurs in nearly every stream); the emulated preset equals the model with state dropped in 23/27 streams,
  and in all of them with --fix-purge (the 4 others are difference 4; session A = 1.5 s seed 2, run end to end
  with --emulate --fix-purge: 3/3). Matched pane labels: ON_TIME/WATERMARK, ON_TIME/END_OF_STREAM (+inf),
  LATE/LATE_UPDATE, LATE#0/WATERMARK (first pane already late; LATE#0/LATE_UPDATE since a5af915), and for sessions
  EARLY/LATE_UPDATE and EARLY/WATERMARK (merges into fired sessions, and late panes after a leaked hold).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field, replace

import pandas as pd

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_stream import TestStream
from apache_beam.transforms import trigger as tr
from apache_beam.transforms import window as bw
from apache_beam.utils.timestamp import Duration, Timestamp
from apache_beam.utils.windowed_value import PaneInfoTiming

from explorer.config import BatchKind, BatchSpec, Panes, Strategy, WindowSpec, preset
from explorer.core import run
from explorer.streams import stream_from_frame

MS = 1000  # µs per ms: Beam's and the preset's times are µs, the streams' are ms
BASE = 10_000  # ms: every stream starts here (no sliding window before 0)
INF = None  # the last step: advance_watermark_to_infinity


# --- streams ---------------------------------------------------------------------------------------------


@dataclass
class Case:
    """steps: ("e", [(id, key, t ms), ...]) one add_elements, or ("w", W ms) one advance_watermark_to."""

    steps: list
    kind: str
    size: int
    slide: int
    gap: int
    allowed: int  # ms

    @property
    def events(self) -> list[tuple[str, str, int]]:
        return [e for kind, x in self.steps if kind == "e" for e in x]

    def watermark_at_arrival(self) -> dict[str, int | None]:
        """The last advance_watermark_to before each element (None: before the first)."""
        out, w = {}, None
        for kind, x in self.steps:
            if kind == "w":
                w = x
            else:
                for i, _, _ in x:
                    out[i] = w
        return out


def make_case(rng: random.Random, args, kind: str) -> Case:
    n = args.events or rng.randint(50, 200)
    keys = "abcd"[:args.keys or rng.randint(2, 4)]
    slide = args.size if kind == "tumbling" else args.slide
    allowed = args.allowed
    clock, max_seen, last_w = BASE, None, None
    steps: list = []
    recent: list[tuple[str, int]] = []
    for i in range(n):
        clock += rng.choice([50, 100, 150, 200, 300, 500, 800, 1500, 2500, 4000])
        t = max(BASE, clock - rng.choice([0, 0, 0, 100, 400, 900, 1700, 3000, 5000, 9000]))
        key = rng.choice(keys)
        roll = rng.random()
        if roll < 0.12:  # on a window edge, or 1 ms before it
            t = max(BASE, t // 1000 * 1000 - rng.choice([0, 1]))
        elif kind == "session" and roll < 0.24:  # exactly a gap from an element of its key: touching sessions
            same = [u for k, u in recent if k == key]
            if same:
                t = max(BASE, rng.choice(same) + rng.choice([-1, 1]) * args.gap)
        element = (f"e{i}", key, t)
        if steps and steps[-1][0] == "e" and rng.random() < args.bundle:
            steps[-1][1].append(element)
        else:
            steps.append(("e", [element]))
        max_seen = t if max_seen is None else max(max_seen, t)
        recent = (recent + [(key, t)])[-8:]
        if rng.random() < 0.45:
            roll = rng.random()
            if roll < 0.85 - args.pin:
                w = max_seen - rng.choice([0, 0, 300, 1000, 2500])
            elif roll < 0.85:  # a window end (or end + allowed lateness) of a recent element, ± 1 ms
                _, u = rng.choice(recent)
                end = u + args.gap if kind == "session" else u // slide * slide + args.size
                w = end + rng.choice([0, allowed]) + rng.choice([-1, 0, 0, 1])
            else:
                w = max_seen - 5000
            if last_w is None or w > last_w:  # TestStream wants strictly increasing watermarks
                steps.append(("w", w))
                last_w = w
    return Case(steps, kind, args.size, slide, args.gap, allowed)


# --- Beam --------------------------------------------------------------------------------------------------


class Record(beam.DoFn):
    """Appends each pane as a JSON line: a DoFn is pickled, so it cannot fill a list of the caller's."""

    def __init__(self, path: str):
        self.path = path

    def process(self, kv, w=beam.DoFn.WindowParam, pane=beam.DoFn.PaneInfoParam):
        key, ids = kv
        with open(self.path, "a") as f:
            f.write(json.dumps([key, w.start.micros, w.end.micros, sorted(ids),
                                PaneInfoTiming.to_string(pane.timing), pane.index]) + "\n")


def window_fn(case: Case):
    if case.kind == "tumbling":
        return bw.FixedWindows(Duration(micros=case.size * MS))
    if case.kind == "sliding":
        return bw.SlidingWindows(Duration(micros=case.size * MS), Duration(micros=case.slide * MS))
    return bw.Sessions(Duration(micros=case.gap * MS))


@dataclass
class Output:
    firings: Counter = field(default_factory=Counter)  # (key, start µs, end µs, ids) -> count
    labels: dict = field(default_factory=dict)  # firing -> [label, ...]
    stalled: bool = False
    error: str = ""


def beam_run(case: Case, exact_micros: bool = False) -> Output:
    """exact_micros: skip the runner-API round trip (Pipeline.run(test_runner_api=False)), which truncates the
    TestStream's times to ms; only --probe uses it."""
    fd, path = tempfile.mkstemp(prefix="beam_panes_", suffix=".jsonl", dir="/tmp")
    os.close(fd)
    stream = TestStream()
    for kind, x in case.steps:
        if kind == "e":
            stream.add_elements([beam.window.TimestampedValue((k, i), Timestamp(micros=t * MS if not exact_micros
                                                                                 else t)) for i, k, t in x])
        else:
            stream.advance_watermark_to(Timestamp(micros=x * MS if not exact_micros else x))
    stream.advance_watermark_to_infinity()
    options = PipelineOptions()
    options.view_as(StandardOptions).streaming = True
    p = beam.Pipeline(options=options)
    _ = (p | stream
         | beam.WindowInto(window_fn(case) if not exact_micros else case.window_fn,
                           trigger=tr.AfterWatermark(late=tr.AfterCount(1)),
                           allowed_lateness=Duration(micros=case.allowed * (MS if not exact_micros else 1)),
                           accumulation_mode=(tr.AccumulationMode.DISCARDING if PANES == "discarding"
                                              else tr.AccumulationMode.ACCUMULATING))
         | beam.GroupByKey()
         | beam.ParDo(Record(path)))
    out = Output()
    try:
        p.run(test_runner_api=not exact_micros).wait_until_finish()
    except TypeError as exc:  # the monitor's "pipeline stall", raised as a tuple
        if "must derive from BaseException" not in str(exc):
            raise
        out.stalled = True
    with open(path) as f:
        for line in f:
            key, start, end, ids, timing, index = json.loads(line)
            firing = (key, start, end, tuple(ids))
            out.firings[firing] += 1
            out.labels.setdefault(firing, []).append(f"{timing}#{index}")
    os.unlink(path)
    return out


# --- the preset --------------------------------------------------------------------------------------------


@dataclass
class PresetOutput(Output):
    refused_pairs: set = field(default_factory=set)  # (id, start µs, end µs), fixed windows
    unplaced: set = field(default_factory=set)  # ids in no emission
    eos_same: bool = True


def fix_stale_purge() -> None:
    """Diagnosis only (--fix-purge), in this process, the reference engine: WindowStore.purge skips a purge
    entry whose window has grown since it was pushed (end + allowed lateness no longer its horizon), as
    WindowStore.ready already does for the fire heap. Without it a session that grew after firing is discarded
    at its old end + A (difference 4)."""
    import heapq
    from explorer.core.windows import WindowStore

    def purge(self, group: str, eff: int) -> None:
        heap = self.purge_heap.get(group)
        while heap:
            horizon, _, w = heap[0]
            current = w.alive and w.fired and w.end + self.allowed == horizon
            if current and horizon > eff:
                break
            heapq.heappop(heap)
            if current:
                self.remove(w)

    WindowStore.purge = purge


ENGINE = "compiled"
PANES = "accumulating"  # --panes: Beam's accumulation mode, and the preset's
KEPT = False  # --kept: the preset with --session-state-kept, the Python runner's rule for fired sessions


def preset_run(case: Case, emulate: bool = False, offset: int = 0, final_row: bool = False,
               unit: int = MS) -> PresetOutput:
    """offset: µs added to each watermark row (0: the Python runner's W; Java's W would be + 1 µs). emulate: Beam's Python
    drop rule (allowed + 2 µs, sessions + 3 µs) and strict session merge (gap − 1 µs, end put back)."""
    rows, batch = [], 0
    for kind, x in case.steps:
        batch += 1
        if kind == "e":
            rows += [(i, k, t * unit, "event", batch) for i, k, t in x]
        else:
            rows.append((f"w{batch}", "", x * unit + offset, "watermark", batch))
    if final_row:  # the +inf firing as a watermark row far past every window
        last = max(t for _, _, t, _, _ in rows)
        rows.append(("winf", "", last + 100 * (case.size + case.gap + case.allowed) * unit, "watermark", batch + 1))
    frame = pd.DataFrame(rows, columns=["id", "key", "event_time", "kind", "batch"])
    bundled = any(len(x) > 1 for kind, x in case.steps if kind == "e")
    if not bundled:
        frame = frame.drop(columns="batch")
    allowed = case.allowed * unit
    if case.kind == "session":  # (overlap-only merging is the preset's own rule now: nothing to emulate)
        spec = WindowSpec.parse(f"session:{case.gap * unit}us")
        allowed += 3 if emulate else 0
    else:
        spec = WindowSpec.parse(f"sliding:{case.size * unit}us:{case.slide * unit}us" if case.kind == "sliding"
                                else f"tumbling:{case.size * unit}us")
        allowed += 2 if emulate else 0
    config = preset("beam", delay=0, allowed_lateness=allowed, strategy=Strategy.SCRIPTED, panes=Panes(PANES),
                    session_state_kept=KEPT)
    config = replace(config, window=spec, batches=BatchSpec(BatchKind.COLUMN if bundled else BatchKind.EVENT))
    result = run(stream_from_frame(frame, name="beam-check", time_unit="us"), config, engine=ENGINE)
    out = PresetOutput()
    for w in result.windows.itertuples():
        firing = (w.key, int(w.start), int(w.end), tuple(sorted(w.ids)))
        out.firings[firing] += 1
        out.labels.setdefault(firing, []).append(f"{w.reason}@{int(w.emit_batch)}")
    events, a = result.events, result.assignments
    ids = events["id"].to_numpy()
    for r in a.loc[~a["admitted"].astype(bool)].itertuples():
        out.refused_pairs.add((ids[r.event], int(r.start), int(r.end)))
    placed = {i for f in out.firings for i in f[3]}
    out.unplaced = {i for i in ids if i not in placed}
    if not final_row:
        ref = preset_run(case, emulate, offset, final_row=True, unit=unit)
        out.eos_same = ref.firings == out.firings
    return out


# --- a model of the Python runner's rules (a control on the rules this docstring states) ---------------------


def beam_model(case: Case, gc: bool = False) -> Counter:
    """Beam's panes as the rules in this docstring predict them: a window fires when W >= end (or, when the
    watermark is already there, as soon as it has an element), a late window fires per bundle that adds to it,
    an element is dropped for its window when W > end + A (sessions: its own window, before merging); sessions
    merge only when they overlap, a merge with a fired session is late at once, and no state is ever dropped.
    gc: drop a window's state once W > end + A (what a runner with a garbage-collection timer does, and what the
    preset does), so a later session cannot merge into it."""
    allowed = case.allowed * MS
    out: Counter = Counter()
    state: dict[str, list[dict]] = {}  # key -> windows {start, end, ids, late}
    w_now = None

    def fire(key: str, w: dict) -> None:
        out[(key, w["start"], w["end"], tuple(sorted(w["ids"])))] += 1

    for kind, x in case.steps + [("w", INF)]:
        if kind == "w":
            w_now = x * MS if x is not INF else float("inf")
            for key, windows in state.items():
                for w in windows:
                    if not w["late"] and w["end"] <= w_now:
                        fire(key, w)
                        w["late"] = True
                if gc:
                    windows[:] = [w for w in windows if not w_now > w["end"] + allowed]
            continue
        by_key: dict[str, list] = {}
        for i, key, t in x:
            by_key.setdefault(key, []).append((i, t * MS))
        for key, elements in by_key.items():
            windows = state.setdefault(key, [])
            added = []
            for i, t in elements:
                spans = ([(t, t + case.gap * MS)] if case.kind == "session"
                         else fixed_windows_of(case, t // MS))
                for start, end in spans:
                    if w_now is not None and w_now > end + allowed:
                        continue  # dropped for this window
                    if case.kind == "session":
                        w = {"start": start, "end": end, "ids": [i], "late": False}
                        windows.append(w)
                    else:
                        w = next((v for v in windows if v["start"] == start), None)
                        if w is None:
                            w = {"start": start, "end": end, "ids": [], "late": False}
                            windows.append(w)
                        w["ids"].append(i)
                    added.append(w)
            if case.kind == "session" and added:  # Sessions.merge: sorted by start, joined while end > start
                merged, touched = [], set()
                for w in sorted(windows, key=lambda v: v["start"]):
                    if merged and merged[-1]["end"] > w["start"]:
                        m = merged[-1]
                        m["end"] = max(m["end"], w["end"])
                        m["ids"] += w["ids"]
                        m["late"] = m["late"] or w["late"]
                        if any(w is a for a in added) or id(w) in touched:
                            touched.add(id(m))
                    else:
                        merged.append({**w, "ids": list(w["ids"])})
                        if any(w is a for a in added):
                            touched.add(id(merged[-1]))
                windows[:] = merged
                added = [m for m in merged if id(m) in touched]
            seen = set()
            for w in added:
                if id(w) in seen:
                    continue
                seen.add(id(w))
                if w["late"]:
                    fire(key, w)
                elif w_now is not None and w_now >= w["end"]:
                    fire(key, w)
                    w["late"] = True
    return out


# --- comparing ---------------------------------------------------------------------------------------------


def fixed_windows_of(case: Case, t: int) -> list[tuple[int, int]]:
    """Beam's FixedWindows/SlidingWindows assignment (µs) of an element at t ms."""
    last = t - t % case.slide
    return [(s * MS, (s + case.size) * MS) for s in range(last, t - case.size, -case.slide)]


def beam_refusals(case: Case, out: Output) -> tuple[set, set]:
    """(dropped (id, start, end) pairs for fixed windows, ids in no pane)."""
    contents: dict = {}
    for key, start, end, ids in out.firings:
        contents.setdefault((key, start, end), set()).update(ids)
    placed = set().union(*contents.values()) if contents else set()
    pairs = set()
    if case.kind != "session":
        for i, key, t in case.events:
            for s, e in fixed_windows_of(case, t):
                if i not in contents.get((key, s, e), ()):
                    pairs.add((i, s, e))
    return pairs, {i for i, _, _ in case.events if i not in placed}


def fmt(f: tuple) -> str:
    key, start, end, ids = f
    return f"{key} [{start / 1e6:g},{end / 1e6:g}) {{{','.join(ids)}}}"


def explain_pair(case: Case, pair: tuple, w_at: dict, times: dict) -> str:
    i, s, e = pair
    w = w_at.get(i)
    edge = e // MS + case.allowed
    note = ""
    if w is not None and w == edge:
        note = "  <- W == end + A: Beam keeps (drops only when W > end + A), the preset refuses"
    return f"{i}@{times[i] / 1000:g}s window [{s / 1e6:g},{e / 1e6:g}) W at arrival {w} ms, end+A {edge} ms{note}"


def compare(case: Case, ours: PresetOutput, theirs: Output, verbose: bool) -> dict:
    agree = ours.firings & theirs.firings
    crosstab = Counter()
    for f, n in agree.items():
        for b, p in list(zip(sorted(theirs.labels[f], key=lambda s: int(s.split("#")[1])),
                             sorted(ours.labels[f], key=lambda s: int(s.split("@")[1]))))[:n]:
            crosstab[(b.split("#")[0] + ("#0" if b.split("#")[0] == "LATE" and b.endswith("#0") else ""),
                      p.split("@")[0])] += 1
    pairs_b, unplaced_b = beam_refusals(case, theirs)
    if case.kind == "session":
        refused_same = unplaced_b == ours.unplaced
        n_ref_b, n_ref_p = len(unplaced_b), len(ours.unplaced)
    else:
        refused_same = pairs_b == ours.refused_pairs
        n_ref_b, n_ref_p = len(pairs_b), len(ours.refused_pairs)
    r = {"agree": sum(agree.values()), "beam": sum(theirs.firings.values()), "preset": sum(ours.firings.values()),
         "refused_same": refused_same, "ref_b": n_ref_b, "ref_p": n_ref_p, "crosstab": crosstab,
         "stalled": theirs.stalled, "eos_same": ours.eos_same}
    r["same"] = ours.firings == theirs.firings and refused_same
    if verbose and not r["same"]:
        w_at = case.watermark_at_arrival()
        times = {i: t for i, _, t in case.events}
        for f in sorted(theirs.firings - ours.firings):
            print(f"    only Beam  : {fmt(f)} {theirs.labels[f]}")
        for f in sorted(ours.firings - theirs.firings):
            print(f"    only preset: {fmt(f)} {ours.labels[f]}")
        if case.kind == "session":
            for i in sorted(unplaced_b ^ ours.unplaced):
                side = "Beam dropped, preset kept" if i in unplaced_b else "preset refused, Beam kept"
                print(f"    {side}: {i}@{times[i] / 1000:g}s, W at arrival {w_at.get(i)} ms")
        else:
            for pair in sorted(pairs_b - ours.refused_pairs):
                print(f"    Beam dropped, preset kept: {explain_pair(case, pair, w_at, times)}")
            for pair in sorted(ours.refused_pairs - pairs_b):
                print(f"    preset refused, Beam kept: {explain_pair(case, pair, w_at, times)}")
    return r


# --- the minimal examples ------------------------------------------------------------------------------------


def probe() -> None:
    """The rule differences (and agreements) on hand-made streams, both sides printed."""
    S = 1000  # ms per s
    examples = [
        ("1. drop boundary, A = 0: a@1, W=10s, b@5 (W == end)", "tumbling", 10 * S, 0, 0,
         [("e", [("a", "k", 1 * S)]), ("w", 10 * S), ("e", [("b", "k", 5 * S)])]),
        ("1'. one ms later: a@1, W=10.001s, b@5 (W > end)", "tumbling", 10 * S, 0, 0,
         [("e", [("a", "k", 1 * S)]), ("w", 10 * S + 1), ("e", [("b", "k", 5 * S)])]),
        ("1''. A = 2s: a@1, W=12s, b@5 (W == end + A)", "tumbling", 10 * S, 0, 2 * S,
         [("e", [("a", "k", 1 * S)]), ("w", 12 * S), ("e", [("b", "k", 5 * S)])]),
        ("fires at W >= end: a@1, W=9.999s, b@5, W=10s", "tumbling", 10 * S, 0, 0,
         [("e", [("a", "k", 1 * S)]), ("w", 10 * S - 1), ("e", [("b", "k", 5 * S)]), ("w", 10 * S)]),
        ("late into a never-fired window, A = 5s: a@11, W=13s, b@5, c@6", "tumbling", 10 * S, 0, 5 * S,
         [("e", [("a", "k", 11 * S)]), ("w", 13 * S), ("e", [("b", "k", 5 * S)]), ("e", [("c", "k", 6 * S)])]),
        ("bundling, A = 5s: a@1, W=13s, then b@5 and c@6 in ONE add_elements", "tumbling", 10 * S, 0, 5 * S,
         [("e", [("a", "k", 1 * S)]), ("w", 13 * S), ("e", [("b", "k", 5 * S), ("c", "k", 6 * S)])]),
        ("2. touching sessions, gap 10s: a@10, b@20, W=100s", "session", 0, 10 * S, 0,
         [("e", [("a", "k", 10 * S)]), ("e", [("b", "k", 20 * S)]), ("w", 100 * S)]),
        ("   overlapping: a@10s, b@19.999s, W=100s", "session", 0, 10 * S, 0,
         [("e", [("a", "k", 10 * S)]), ("e", [("b", "k", 20 * S - 1)]), ("w", 100 * S)]),
        ("3. session into a fired session, A = 0: a@10, W=20s, b@15, W=100s", "session", 0, 10 * S, 0,
         [("e", [("a", "k", 10 * S)]), ("w", 20 * S), ("e", [("b", "k", 15 * S)]), ("w", 100 * S)]),
        ("3'. the same with A = 3s", "session", 0, 10 * S, 3 * S,
         [("e", [("a", "k", 10 * S)]), ("w", 20 * S), ("e", [("b", "k", 15 * S)]), ("w", 100 * S)]),
        ("3''. A = 3s, the fired session past end + A: a@10, W=24s, b@15 (own [15,25) open)", "session", 0,
         10 * S, 3 * S,
         [("e", [("a", "k", 10 * S)]), ("w", 24 * S), ("e", [("b", "k", 15 * S)]), ("w", 100 * S)]),
        ("4. a fired session that grew, A = 5s: a@100, W=110s, b@108 (-> [100,118)), W=116s, c@112", "session",
         0, 10 * S, 5 * S,
         [("e", [("a", "k", 100 * S)]), ("w", 110 * S), ("e", [("b", "k", 108 * S)]), ("w", 116 * S),
          ("e", [("c", "k", 112 * S)])]),
        ("session lateness on own window: a@20, W=29s, b@11 (own [11,21) expired, [20,30) open)", "session",
         0, 10 * S, 0,
         [("e", [("a", "k", 20 * S)]), ("w", 29 * S), ("e", [("b", "k", 11 * S)]), ("w", 100 * S)]),
    ]
    for title, kind, size, gap, allowed, steps in examples:
        case = Case(steps, kind, size, size, gap, allowed)
        theirs, ours = beam_run(case), preset_run(case)
        print(f"== {title}" + ("   [Beam run stalled at the end]" if theirs.stalled else ""))
        for f in sorted(theirs.firings, key=lambda f: (f[1], f[2], len(f[3]))):
            print(f"   Beam  : {fmt(f)} {theirs.labels[f]}")
        for f in sorted(ours.firings, key=lambda f: (f[1], f[2], len(f[3]))):
            print(f"   preset: {fmt(f)} {ours.labels[f]}")
        refused = sorted(ours.refused_pairs) if kind != "session" else sorted(ours.unplaced)
        print(f"   preset refused: {refused}")
    # µs semantics, without the proto round trip (Pipeline.run(test_runner_api=False)); times here are µs
    case = Case([("e", [("a", "k", 1_000_000)]), ("w", 10_000_000 - 1), ("e", [("b", "k", 5_000_000)]),
                 ("w", 10_000_000), ("e", [("c", "k", 6_000_000)]), ("w", 10_000_001), ("e", [("d", "k", 7_000_000)])],
                "tumbling", 10_000_000, 10_000_000, 0, 0)
    case.window_fn = bw.FixedWindows(10)
    theirs = beam_run(case, exact_micros=True)
    print("== µs, no proto round trip, A = 0: a@1, W=9.999999s, b@5, W=10s, c@6, W=10.000001s, d@7")
    for f in sorted(theirs.firings, key=lambda f: len(f[3])):
        print(f"   Beam  : {fmt(f)} {theirs.labels[f]}")
    for offset in (1, 0):
        ours = preset_run(case, offset=offset, unit=1)
        for f in sorted(ours.firings, key=lambda f: len(f[3])):
            print(f"   preset (watermark rows at W + {offset} µs): {fmt(f)} {ours.labels[f]}")
        print(f"   preset (watermark rows at W + {offset} µs) refused: {sorted(ours.refused_pairs)}")


# --- main ----------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", choices=["tumbling", "sliding", "session"], default="tumbling")
    parser.add_argument("--size", type=int, default=3000, help="tumbling/sliding size, ms")
    parser.add_argument("--slide", type=int, default=1000, help="sliding slide, ms")
    parser.add_argument("--gap", type=int, default=2500, help="session gap, ms")
    parser.add_argument("--allowed", type=int, default=0, help="allowed lateness, ms")
    parser.add_argument("--cases", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--events", type=int, default=0, help="elements per stream (default: 50-200)")
    parser.add_argument("--keys", type=int, default=0, help="keys per stream (default: 2-4)")
    parser.add_argument("--bundle", type=float, default=0.0, help="probability an element joins the previous "
                        "element's add_elements step")
    parser.add_argument("--pin", type=float, default=0.35, help="share of the watermarks put on a window end "
                        "or end + allowed lateness (± 1 ms); the rest trail the largest timestamp (default 0.35)")
    parser.add_argument("--emulate", action="store_true", help="also run the preset with Beam's Python drop rule "
                        "and strict session merge emulated")
    parser.add_argument("--fix-purge", action="store_true", help="diagnosis: the preset on the reference engine "
                        "with stale session purges skipped (an in-process patch, see fix_stale_purge)")
    parser.add_argument("--probe", action="store_true", help="the minimal examples, both sides")
    parser.add_argument("--panes", choices=["accumulating", "discarding"], default="accumulating",
                        help="Beam's accumulation mode and the preset's panes (the model knows accumulating only)")
    parser.add_argument("--kept", action="store_true", help="the preset with --session-state-kept (a fired session "
                        "is never dropped, as on the Python runner)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    global PANES, KEPT
    PANES, KEPT = args.panes, args.kept
    if args.fix_purge:
        global ENGINE
        ENGINE = "reference"
        fix_stale_purge()
    if args.probe:
        probe()
        return
    totals = Counter()
    emu_totals = Counter()
    crosstab = Counter()
    for c in range(args.cases):
        rng = random.Random(args.seed * 1000 + c)
        case = make_case(rng, args, args.window)
        started = time.monotonic()
        theirs = beam_run(case)
        ours = preset_run(case)
        r = compare(case, ours, theirs, args.verbose)
        crosstab += r["crosstab"]
        for k in ("agree", "beam", "preset", "ref_b", "ref_p"):
            totals[k] += r[k]
        totals["cases"] += 1
        totals["same"] += r["same"]
        totals["refused_same"] += r["refused_same"]
        totals["stalled"] += r["stalled"]
        totals["eos_same"] += r["eos_same"]
        line = ""
        if args.emulate:
            if args.verbose:
                print("  emulated:")
            emulated = preset_run(case, emulate=True)
            e = compare(case, emulated, theirs, args.verbose)
            gc_same = emulated.firings == beam_model(case, gc=True)
            emu_totals["gc_same"] += gc_same
            for k in ("agree", "beam", "same"):
                emu_totals[k] += e[k]
            line = (f"; emulated: {e['agree']}/{e['beam']} {'same' if e['same'] else 'DIFFERENT'} (= the model with "
                    f"state dropped at end + A: {'yes' if gc_same else 'NO'})")
        model_same = PANES == "accumulating" and beam_model(case) == theirs.firings
        java_same = PANES == "accumulating" and ours.firings == beam_model(case, gc=True)
        totals["java_same"] += java_same
        totals["model_same"] += model_same
        if args.verbose and not model_same:
            m = beam_model(case)
            for f in sorted(theirs.firings - m):
                print(f"    model misses: {fmt(f)} {theirs.labels[f]}")
            for f in sorted(m - theirs.firings):
                print(f"    model extra : {fmt(f)}")
        line += f"; model of Beam's rules {'exact' if model_same else 'DIFFERENT' if PANES == 'accumulating' else 'n/a'}"
        line += f"; preset = the model with state dropped at end + A: {'yes' if java_same else 'NO'}"
        n_e = len(case.events)
        n_w = sum(kind == "w" for kind, _ in case.steps)
        n_steps = sum(k == "e" for k, _ in case.steps)
        print(f"case {c} {args.window} A={args.allowed} ms: {n_e} elements in {n_steps}"
              f" steps, {n_w} watermarks, {len({k for _, k, _ in case.events})} keys: panes {r['agree']}/{r['beam']} "
              f"match (preset {r['preset']}), refused Beam {r['ref_b']} / preset {r['ref_p']} "
              f"{'equal' if r['refused_same'] else 'DIFFERENT'}, eos=+inf {'yes' if r['eos_same'] else 'NO'}"
              f"{', Beam stalled' if r['stalled'] else ''}: {'same' if r['same'] else 'DIFFERENT'}{line} "
              f"[{time.monotonic() - started:.1f} s]", flush=True)
    t = totals
    print(f"TOTAL {args.window} A={args.allowed} ms seed {args.seed} pin {args.pin} bundle {args.bundle}: "
          f"{t['same']}/{t['cases']} "
          f"streams identical; panes {t['agree']}/{t['beam']} match (preset {t['preset']}); refusals equal in "
          f"{t['refused_same']}/{t['cases']} (Beam {t['ref_b']}, preset {t['ref_p']}); eos=+inf in "
          f"{t['eos_same']}/{t['cases']}; Beam stalled {t['stalled']}; model of Beam's rules exact in "
          + (f"{t['model_same']}/{t['cases']}; preset = the model with state dropped at end + A (Java's "
             f"cleanup timer) in {t['java_same']}/{t['cases']}" if PANES == "accumulating" else "n/a (discarding)")
          + (f"; emulated: {emu_totals['same']}/{t['cases']} identical, panes {emu_totals['agree']}/"
             f"{emu_totals['beam']}, = the model with state dropped at end + A in {emu_totals['gc_same']}/"
             f"{t['cases']}" if args.emulate else ""))
    print("matched panes by (Beam timing, preset reason): "
          + ", ".join(f"{b}/{p} {n}" for (b, p), n in sorted(crosstab.items())))


if __name__ == "__main__":
    main()
