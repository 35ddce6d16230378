"""Dev experiment (not part of `make test`): the `flink` preset against real Flink jobs (PyFlink 2.3.0).

Each random stream is replayed into a Flink job (parallelism 1): keyBy(key) + a tumbling, sliding or session
event-time window + allowedLateness + sideOutputLateData, and into the `flink` preset. Both sides must agree on
every firing (key, window start and end, contents; a late re-firing carries the full contents), on the side
output, and, for sliding windows, on which elements a window dropped silently while another kept them (Flink:
an element in some firings of its key but missing from one of the windows it belongs to, and not in the side
output; the preset: Result.metrics.partly_dropped and the assignments a window refused).

    python3 -m venv /tmp/pyflink && /tmp/pyflink/bin/pip install apache-flink==2.3.0 pandas pyyaml pyarrow numba
    PYTHONPATH=. /tmp/pyflink/bin/python dev/check_pyflink.py --window sliding --allowed 2000 [--cases 4]
        --window tumbling|sliding|session  (sizes: --size 3000 --slide 1000 --gap 2500, in ms)
        --allowed MS                       allowed lateness (default 0)
        --watermarks scripted|punctuated|periodic   (default scripted)
        --operator java|python|both        (default both)
        --seed N --events N --keys N --repeat (run each Flink job twice and check it gives the same output)

Watermarks (--watermarks):
  scripted    (default, deterministic) the source carries the watermarks: rows (id, key, time, is_watermark)
              go through a small Java WatermarkStrategy (compiled here with javac on first use, cached in
              /tmp/wx_flink_check) whose generator emits Watermark(time) in onEvent for each watermark row and
              nothing periodically (pipeline.auto-watermark-interval 0); a Java filter then drops the watermark
              rows before keyBy. The preset replays the same rows with `kind` = watermark and strategy scripted,
              each at Flink's watermark + 1 ms (the preset's watermark is Flink's + 1 ms: Flink fires at
              end − 1 ms and refuses when end − 1 ms + allowedLateness ≤ its watermark).
  punctuated  (deterministic) the same generator without watermark rows: after every element it emits
              max − L − 1 ms, which is forBoundedOutOfOrderness(L) emitted per element; the preset runs
              delay L with --batches event.
  periodic    (timing-dependent, the first version of this script) forBoundedOutOfOrderness(L) emitted every
              5 ms of processing time, elements paced 250 ms apart; sometimes the window operator sees the
              next element before the watermark has caught up, so a difference here is "Flink's watermark was
              late" unless it repeats in the deterministic modes.
  Determinism needs, besides a watermark that does not depend on a clock: parallelism 1, and
  python.fn-execution.bundle.size 1 for the Python operators: a Python operator holds a watermark until its
  bundle is finished, and finishes a bundle of one element synchronously, so each watermark reaches the
  window operator after exactly the elements before it in the source.

Operators (--operator): PyFlink's `.window(...)` runs PyFlink's own Python port of the WindowOperator
(pyflink/fn_execution/datastream/window/window_operator.py), not the Java one; `java` builds the same job
with Flink's Java WindowOperator (keyBy, window, allowedLateness, sideOutputLateData and a
ProcessWindowFunction in the Java helper, called through py4j), which is what the preset's rules cite.

Traps met on the way: Flink starts `python` from the PATH for its workers (set `python.executable`); an
OutputTag needs a type object that no stream has used yet; PyFlink has no Python WatermarkGenerator (only
Java strategies), hence the Java helper; apache-flink 2.3.0 pins pyarrow 16, below the project's >=17, which
explorer.core does not mind. Times on the Flink side are ms; the streams start at 10 s so that no sliding
window starts before 0.

Measured 2026-11-23 (PyFlink 2.3.0, Java 17, 2 cores shared with a test run; 3 s windows, sliding 3 s / 1 s;
streams of 100-300 elements, 2-4 keys; the same figures for --operator java and python):
  scripted     tumbling A=0    seed 1: 3/3 streams identical, firings 369/369, side output equal 3/3 (106)
               tumbling A=2s   seed 2: 3/3, firings 386/386 (36 late re-firings), side output 3/3 (71)
               sliding  A=0    seed 3: 3/3, firings 952/952, side output 3/3 (89), partly dropped 57 = 57
               sliding  A=1.5s seed 4: 3/3, firings 1309/1309 (43 re-firings), side output 3/3 (64), partly 32 = 32
               session gap 2s A=0  seed 5: 3/3, firings 342/342, side output 3/3 (91)
               session gap 3s A=2s seed 6: 3/3, firings 260/260 (7 re-firings, 36 emitted sessions grown and
                                           fired again), side output 3/3 (19)
               every job run twice (--repeat: sliding A=0, sliding A=1.5s, session A=2s): 18/18 identical
  punctuated   L=1s sliding A=1.5s seed 7: 2/2, firings 507/507, side output (23) and partly dropped (18) equal;
               session gap 2.5s A=2s seed 8: 2/2, firings 259/259 (26 grown), side output (29) equal; reruns 4/4
  periodic     (java only, 30 paced elements) tumbling A=0 seed 9: 1/3 identical, firings 46/49; sliding A=1.5s
               seed 10: 0/3, firings 156/171. Every difference goes one way: Flink kept elements the preset
               refused, because its periodic watermark lagged and then jumped (seed 10 case 0: Flink's watermark
               stayed at 11649 ms and then jumped to 18998 ms, so e6 at 10000 ms went into [8000, 11000) and
               [9000, 12000), which the preset, one watermark per element, had closed). Timing, not a rule.
  --preset-batches watermark (2026-11-25; the preset takes the elements between two watermark rows as one
               batch, as between two periodic watermarks, so late elements share a commit): tumbling A=2s seed 21
               3/3, firings 385/385; sliding A=1.5s seed 22 3/3, 834/834, partly dropped 20 = 20; session gap 3s
               A=2s seed 23 3/3, 327/327. With late_fires_per_element=false (one re-firing per commit) the same
               seeds give 384/385 and 323/327: Flink fires a passed window per element.
  No disagreement in the deterministic modes, so no rule difference was found. The comparison does see the
  rules (--cases 1, java): --preset-change refused_when=any-window (sliding A=0, seed 3) keeps all 371
  firings equal but sends the 25 elements Flink dropped silently to the preset's side output;
  session_lateness_on_merge=false (session gap 3s A=2s, seed 6) gives firings 69/71 and 2 elements only in the
  preset's side output; offset=0 (watermark rows at Flink's watermark, not + 1 ms; sliding A=0, seed 3) gives
  firings 370/371 and partly dropped 25 vs 24.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import subprocess
import sys
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
from pyflink.common import Configuration, Time, Types, WatermarkStrategy
from pyflink.datastream import OutputTag, StreamExecutionEnvironment
from pyflink.datastream.data_stream import DataStream
from pyflink.datastream.functions import ProcessWindowFunction
from pyflink.datastream.window import EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows
from pyflink.java_gateway import get_gateway
from pyflink.util.java_utils import load_java_class

from explorer.config import BatchSpec, Strategy, WindowSpec, preset, time_option
from explorer.core import run
from explorer.streams import stream_from_frame

MS = 1000  # µs per ms: the preset's times are µs
BASE = 10_000  # ms: every stream starts here

JAVA = r"""
package wxcheck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.api.common.eventtime.TimestampAssigner;
import org.apache.flink.api.common.eventtime.TimestampAssignerSupplier;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkGeneratorSupplier;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.FilterFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/** Rows are (id, key, time ms, is_watermark). */
public class Check {
    public static class Scripted implements WatermarkStrategy<Tuple4<String, String, Long, Boolean>> {
        private final long bound;
        private final boolean scripted;

        public Scripted(long bound, boolean scripted) { this.bound = bound; this.scripted = scripted; }

        @Override
        public WatermarkGenerator<Tuple4<String, String, Long, Boolean>> createWatermarkGenerator(
                WatermarkGeneratorSupplier.Context context) {
            final long bound = this.bound;
            final boolean scripted = this.scripted;
            return new WatermarkGenerator<Tuple4<String, String, Long, Boolean>>() {
                private long max = Long.MIN_VALUE;

                @Override
                public void onEvent(Tuple4<String, String, Long, Boolean> row, long ts, WatermarkOutput out) {
                    if (scripted) {
                        if (row.f3) out.emitWatermark(new Watermark(row.f2));
                    } else if (!row.f3) {
                        max = Math.max(max, row.f2);
                        out.emitWatermark(new Watermark(max - bound - 1));
                    }
                }

                @Override
                public void onPeriodicEmit(WatermarkOutput out) {}
            };
        }

        @Override
        public TimestampAssigner<Tuple4<String, String, Long, Boolean>> createTimestampAssigner(
                TimestampAssignerSupplier.Context context) {
            return (row, previous) -> row.f2;
        }
    }

    public static WatermarkStrategy<Tuple4<String, String, Long, Boolean>> scripted(long bound, boolean scripted) {
        return new Scripted(bound, scripted);
    }

    public static WatermarkStrategy<Tuple4<String, String, Long, Boolean>> periodic(long bound) {
        return WatermarkStrategy.<Tuple4<String, String, Long, Boolean>>forBoundedOutOfOrderness(
                Duration.ofMillis(bound)).withTimestampAssigner((row, previous) -> row.f2);
    }

    public static class Events implements FilterFunction<Tuple4<String, String, Long, Boolean>> {
        @Override
        public boolean filter(Tuple4<String, String, Long, Boolean> row) { return !row.f3; }
    }

    public static class ByKey implements KeySelector<Tuple4<String, String, Long, Boolean>, String> {
        @Override
        public String getKey(Tuple4<String, String, Long, Boolean> row) { return row.f1; }
    }

    public static class Contents
            extends ProcessWindowFunction<Tuple4<String, String, Long, Boolean>, String, String, TimeWindow> {
        @Override
        public void process(String key, Context context, Iterable<Tuple4<String, String, Long, Boolean>> rows,
                            Collector<String> out) {
            List<String> ids = new ArrayList<>();
            for (Tuple4<String, String, Long, Boolean> row : rows) ids.add(row.f0);
            Collections.sort(ids);
            out.collect("W|" + key + "|" + context.window().getStart() + "|" + context.window().getEnd() + "|"
                        + String.join(",", ids) + "|" + context.currentWatermark());
        }
    }

    public static class LateLine implements MapFunction<Tuple4<String, String, Long, Boolean>, String> {
        @Override
        public String map(Tuple4<String, String, Long, Boolean> row) { return "L|" + row.f0; }
    }

    public static DataStream<Tuple4<String, String, Long, Boolean>> events(
            DataStream<Tuple4<String, String, Long, Boolean>> rows) {
        return rows.filter(new Events());
    }

    /** The whole window job on Flink's Java WindowOperator: firings "W|key|start|end|ids|watermark", late "L|id". */
    public static DataStream<String> windows(DataStream<Tuple4<String, String, Long, Boolean>> rows, String kind,
                                             long a, long b, long allowed) {
        WindowAssigner<Object, TimeWindow> assigner;
        if (kind.equals("tumbling")) assigner = TumblingEventTimeWindows.of(Duration.ofMillis(a));
        else if (kind.equals("sliding")) assigner = SlidingEventTimeWindows.of(Duration.ofMillis(a), Duration.ofMillis(b));
        else assigner = EventTimeSessionWindows.withGap(Duration.ofMillis(a));
        OutputTag<Tuple4<String, String, Long, Boolean>> late = new OutputTag<>("late", rows.getType());
        SingleOutputStreamOperator<String> fired = events(rows).keyBy(new ByKey()).window(assigner)
                .allowedLateness(Duration.ofMillis(allowed)).sideOutputLateData(late).process(new Contents());
        return fired.union(fired.getSideOutput(late).map(new LateLine()));
    }
}
"""


def flink_lib() -> Path:
    import pyflink
    return Path(pyflink.__file__).parent / "lib"


def helper_jar() -> Path:
    """Compile the Java helper once per source text (javac from the JDK on the PATH)."""
    digest = hashlib.sha1(JAVA.encode()).hexdigest()[:12]
    root = Path("/tmp/wx_flink_check")
    jar = root / f"wxcheck-{digest}.jar"
    if jar.exists():
        return jar
    src, classes = root / "src" / "wxcheck", root / f"classes-{digest}"
    src.mkdir(parents=True, exist_ok=True)
    classes.mkdir(parents=True, exist_ok=True)
    (src / "Check.java").write_text(JAVA)
    subprocess.run(["javac", "--release", "17", "-nowarn", "-cp", f"{flink_lib()}/*", "-d", str(classes),
                    str(src / "Check.java")], check=True)
    tmp = jar.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w") as z:
        for path in sorted(classes.rglob("*.class")):
            z.write(path, str(path.relative_to(classes)))
    tmp.rename(jar)
    return jar


# --- streams ------------------------------------------------------------------------------------------


@dataclass
class Case:
    rows: list[tuple[str, str, int, bool]]  # (id, key, time ms, is_watermark) in arrival order; watermark rows
    # carry Flink's watermark
    kind: str
    size: int  # tumbling/sliding size, ms
    slide: int  # sliding slide (= size when tumbling), ms
    gap: int  # session gap, ms
    allowed: int  # ms
    lag: int  # L of punctuated/periodic, ms

    @property
    def events(self) -> list[tuple[str, str, int, bool]]:
        return [r for r in self.rows if not r[3]]


def make_case(rng: random.Random, args, kind: str) -> Case:
    """Out-of-order event times around a processing clock that moves in small steps and in pauses (so sessions
    close), some pinned to window edges, and (scripted) watermark rows after about half the elements: max seen
    minus a lag, or an edge ± 1 ms, sometimes going back (both sides ignore a watermark that does not rise)."""
    n = args.events or rng.randint(100, 300)
    keys = "abcd"[:args.keys or rng.randint(2, 4)]
    size = args.size
    slide = size if kind == "tumbling" else args.slide
    gap = args.gap
    edge = gap if kind == "session" else slide
    clock, max_seen, rows, recent = BASE, None, [], []
    for i in range(n):
        clock += rng.choice([50, 100, 150, 200, 300, 500, 800, 1500, 2500, 4000])
        t = max(BASE, clock - rng.choice([0, 0, 0, 100, 400, 900, 1700, 3000, 5000, 9000]))
        if rng.random() < 0.15:  # on an edge, or 1 ms before it
            t = max(BASE, t // 1000 * 1000 - rng.choice([0, 1]))
        rows.append((f"e{i}", rng.choice(keys), t, False))
        max_seen = t if max_seen is None else max(max_seen, t)
        recent = (recent + [t])[-6:]
        if rng.random() < 0.5:
            roll = rng.random()
            if roll < 0.55:
                w = max_seen - rng.choice([0, 0, 1, 300, 1000, 2500])
            elif roll < 0.85:  # Flink's watermark at a window's maxTimestamp, or one either side
                anchor = rng.choice(recent) + (gap if kind == "session" else 0)
                w = (anchor if kind == "session" else anchor // edge * edge) - 1 + rng.choice([-1, 0, 0, 1])
            else:
                w = max_seen - rng.choice([4000, 8000])  # behind: ignored by both
            rows.append((f"w{i}", "", max(0, w), True))
    return Case(rows, kind, size, slide, gap, args.allowed, args.lag)


# --- Flink ---------------------------------------------------------------------------------------------


class PyContents(ProcessWindowFunction):
    def process(self, key, context, elements):
        w = context.window()
        yield f"W|{key}|{w.start}|{w.end}|{','.join(sorted(e[0] for e in elements))}|{context.current_watermark()}"


def paced(value):
    time.sleep(0.25)
    return value


def row_type():
    """(id, key, time, is_watermark), built afresh each time: a type object some stream has used holds JVM
    handles, and an OutputTag pickling it fails (cannot pickle '_thread.RLock')."""
    return Types.TUPLE([Types.STRING(), Types.STRING(), Types.LONG(), Types.BOOLEAN()])


@dataclass
class Output:
    firings: Counter = field(default_factory=Counter)  # (key, start, end, ids tuple) -> count; ms
    side: set = field(default_factory=set)
    watermark_at: dict = field(default_factory=dict)  # firing -> watermark(s) at firing (diagnostics)
    order: list = field(default_factory=list)  # firings as they came


def flink_run(case: Case, mode: str, operator: str, jar: Path) -> Output:
    config = Configuration()
    config.set_string("python.fn-execution.bundle.size", "1")
    config.set_string("python.fn-execution.bundle.time", "1")
    config.set_string("python.executable", sys.executable)  # Flink's Python workers: this venv
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    env.add_jars(jar.as_uri())
    env.get_config().set_auto_watermark_interval(5 if mode == "periodic" else 0)
    load_java_class("wxcheck.Check")  # fails early if the helper jar is not on the context class loader
    rows = case.rows if mode == "scripted" else case.events
    source = env.from_collection(rows, type_info=row_type())
    if mode == "periodic":
        source = source.map(paced, output_type=row_type())
        strategy = WatermarkStrategy(get_gateway().jvm.wxcheck.Check.periodic(case.lag))
    else:
        strategy = WatermarkStrategy(get_gateway().jvm.wxcheck.Check.scripted(case.lag, mode == "scripted"))
    stamped = source.assign_timestamps_and_watermarks(strategy)
    a, b = (case.gap, 0) if case.kind == "session" else (case.size, case.slide)
    if operator == "java":
        jvm_check = get_gateway().jvm.wxcheck.Check
        out = DataStream(jvm_check.windows(stamped._j_data_stream, case.kind, a, b, case.allowed))
    else:
        assigner = {"tumbling": lambda: TumblingEventTimeWindows.of(Time.milliseconds(case.size)),
                    "sliding": lambda: SlidingEventTimeWindows.of(Time.milliseconds(case.size),
                                                                  Time.milliseconds(case.slide)),
                    "session": lambda: EventTimeSessionWindows.with_gap(Time.milliseconds(case.gap))}[case.kind]()
        late = OutputTag("late", row_type())
        events = DataStream(get_gateway().jvm.wxcheck.Check.events(stamped._j_data_stream))
        fired = (events.key_by(lambda e: e[1], key_type=Types.STRING()).window(assigner)
                 .allowed_lateness(case.allowed).side_output_late_data(late)
                 .process(PyContents(), Types.STRING()))
        out = fired.union(fired.get_side_output(late).map(lambda e: f"L|{e[0]}", Types.STRING()))
    result = Output()
    with out.execute_and_collect() as lines:
        for line in lines:
            kind, *rest = line.split("|")
            if kind == "W":
                firing = (rest[0], int(rest[1]), int(rest[2]), tuple(sorted(filter(None, rest[3].split(",")))))
                result.firings[firing] += 1
                result.order.append(firing)
                result.watermark_at.setdefault(firing, []).append(int(rest[4]))
            else:
                result.side.add(rest[0])
    return result


# --- the preset ----------------------------------------------------------------------------------------


@dataclass
class PresetOutput(Output):
    partly: set = field(default_factory=set)
    partly_metric: int = 0
    late_updated: int = 0


def window_spec(case: Case) -> WindowSpec:
    if case.kind == "session":
        return WindowSpec.parse(f"session:{case.gap}ms")
    if case.kind == "sliding":
        return WindowSpec.parse(f"sliding:{case.size}ms:{case.slide}ms")
    return WindowSpec.parse(f"tumbling:{case.size}ms")


def preset_run(case: Case, mode: str, changes: list[str] = (), batches: str = "event") -> PresetOutput:
    rows = case.rows if mode == "scripted" else case.events
    changes = dict(c.split("=", 1) for c in changes)
    offset = int(changes.pop("offset", 1))
    frame = pd.DataFrame({
        "id": [r[0] for r in rows], "key": [r[1] for r in rows],
        # a watermark row holds the preset's watermark: Flink's + 1 ms
        "event_time": [r[2] + offset if r[3] else r[2] for r in rows],
        "kind": ["watermark" if r[3] else "event" for r in rows],
        "arrival_time": range(len(rows))})
    if batches == "watermark":  # the elements between two watermarks share a batch, closed by the second one
        frame["batch"] = np.cumsum(frame["kind"] == "watermark") - (frame["kind"] == "watermark")
    if mode == "scripted":
        config = preset("flink", delay=0, strategy=Strategy.SCRIPTED, allowed_lateness=case.allowed * MS)
    else:
        config = preset("flink", delay=case.lag * MS, allowed_lateness=case.allowed * MS)
    config = replace(config, window=window_spec(case), batches=BatchSpec.parse("event") if batches == "event" else None)
    config = config.with_time(**dict(time_option(option, value) for option, value in changes.items()))
    result = run(stream_from_frame(frame, time_unit="ms"), config)
    out = PresetOutput()
    for w in result.windows.itertuples():
        firing = (w.key, int(w.start) // MS, int(w.end) // MS, tuple(sorted(w.ids)))
        out.firings[firing] += 1
        out.watermark_at.setdefault(firing, []).append(
            None if pd.isna(w.effective_watermark) else int(w.effective_watermark) // MS - 1)
    status = result.events["status"]
    out.side = set(result.events.loc[status == "side_output", "id"])
    refused_rows = set(result.assignments.loc[~result.assignments["admitted"].astype(bool), "event"])
    kept = status.isin(["on_time", "late_updated"]).to_numpy()
    ids = result.events["id"].to_numpy()
    out.partly = {ids[r] for r in refused_rows if kept[r]}
    out.partly_metric = result.metrics.partly_dropped
    out.late_updated = result.metrics.late_updated
    return out


# --- comparing -----------------------------------------------------------------------------------------


def windows_of(case: Case, t: int) -> list[tuple[int, int]]:
    """The windows (start, end) Flink's assigner puts an element at t in (tumbling/sliding)."""
    last = t - t % case.slide
    return [(s, s + case.size) for s in range(last, t - case.size, -case.slide)]


def flink_partly(case: Case, out: Output) -> tuple[set, set]:
    """(partly dropped, lost): elements not in the side output that some of their windows fired without,
    while another fired with them; and elements in no firing and not in the side output."""
    contents: dict[tuple, set] = {}
    for key, start, end, ids in out.firings:
        contents.setdefault((key, start, end), set()).update(ids)
    seen = set().union(*contents.values()) if contents else set()
    partly, lost = set(), set()
    for i, key, t, _ in case.events:
        if i in out.side:
            continue
        if i not in seen:
            lost.add(i)
        elif case.kind != "session" and any(i not in contents.get((key, s, e), ()) for s, e in windows_of(case, t)):
            partly.add(i)
    return partly, lost


def coverage(out: Output) -> tuple[int, int]:
    """(re-firings of a window that had fired, firings of a window that grew over one already fired: a session
    an element extended after it was emitted) in the order Flink fired them."""
    fired: dict[str, list] = {}
    refired = grown = 0
    for key, start, end, _ in out.order:
        before = fired.setdefault(key, [])
        if (start, end) in before:
            refired += 1
        elif any(start <= s and e <= end for s, e in before):
            grown += 1
        before.append((start, end))
    return refired, grown


def describe(f: tuple) -> str:
    key, start, end, ids = f
    return f"{key} [{start},{end}) {{{','.join(ids)}}}"


def compare(case: Case, ours: PresetOutput, theirs: Output, verbose: bool) -> dict:
    agree = sum((ours.firings & theirs.firings).values())
    total_f, total_p = sum(theirs.firings.values()), sum(ours.firings.values())
    partly_f, lost_f = flink_partly(case, theirs)
    report = {"refired_grown": coverage(theirs), "late_updated": ours.late_updated,
              "agree": agree, "flink": total_f, "preset": total_p, "side_equal": ours.side == theirs.side,
              "side": len(theirs.side), "partly_f": partly_f, "partly_p": ours.partly,
              "partly_metric": ours.partly_metric, "lost_f": lost_f}
    report["same"] = (ours.firings == theirs.firings and report["side_equal"] and partly_f == ours.partly
                      and ours.partly_metric == len(ours.partly))
    if verbose and not report["same"]:
        only_f, only_p = theirs.firings - ours.firings, ours.firings - theirs.firings
        for f in sorted(only_f):
            print(f"    only Flink : {describe(f)} at Flink watermark {theirs.watermark_at.get(f)}")
        for f in sorted(only_p):
            print(f"    only preset: {describe(f)} at (preset watermark − 1 ms) {ours.watermark_at.get(f)}")
        if not report["side_equal"]:
            print(f"    side output only Flink {sorted(theirs.side - ours.side)}, only preset "
                  f"{sorted(ours.side - theirs.side)}")
        if partly_f != ours.partly:
            print(f"    partly dropped only Flink {sorted(partly_f - ours.partly)}, only preset "
                  f"{sorted(ours.partly - partly_f)}")
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", choices=["tumbling", "sliding", "session"], default="tumbling")
    parser.add_argument("--size", type=int, default=3000, help="tumbling/sliding size, ms")
    parser.add_argument("--slide", type=int, default=1000, help="sliding slide, ms")
    parser.add_argument("--gap", type=int, default=2500, help="session gap, ms")
    parser.add_argument("--allowed", type=int, default=0, help="allowed lateness, ms")
    parser.add_argument("--lag", type=int, default=1000, help="L of --watermarks punctuated/periodic, ms")
    parser.add_argument("--watermarks", choices=["scripted", "punctuated", "periodic"], default="scripted")
    parser.add_argument("--operator", choices=["java", "python", "both"], default="both")
    parser.add_argument("--cases", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--events", type=int, default=0, help="elements per stream (default: 100-300)")
    parser.add_argument("--keys", type=int, default=0, help="keys per stream (default: 2-4)")
    parser.add_argument("--preset-batches", choices=["event", "watermark"], default="event",
                        help="the preset's batches: one per row, or (scripted) the rows up to each watermark row, as "
                             "the elements between two periodic watermarks")
    parser.add_argument("--repeat", action="store_true", help="run each Flink job twice; report if they differ")
    parser.add_argument("--preset-change", action="append", default=[], metavar="OPTION=VALUE",
                        help="change the preset (negative control), e.g. refused_when=any-window, "
                             "session_lateness_on_merge=false; or offset=0 (watermark rows at Flink's watermark)")
    parser.add_argument("--dump", help="write each case's rows to this directory (CSV, the preset's format)")
    args = parser.parse_args()
    if args.watermarks == "periodic" and not args.events:
        args.events = 30  # paced 250 ms apart
    jar = helper_jar()
    operators = ["java", "python"] if args.operator == "both" else [args.operator]
    totals = {op: Counter() for op in operators}
    for c in range(args.cases):
        rng = random.Random(args.seed * 1000 + c)
        case = make_case(rng, args, args.window)
        ours = preset_run(case, args.watermarks, args.preset_change, args.preset_batches)
        n = len(case.events)
        marks = f"{len(case.rows) - n} watermark rows" if args.watermarks == "scripted" else f"L {args.lag} ms"
        if args.dump:
            Path(args.dump).mkdir(parents=True, exist_ok=True)
            pd.DataFrame({"id": [r[0] for r in case.rows], "key": [r[1] for r in case.rows],
                          "event_time": [r[2] + r[3] for r in case.rows],
                          "kind": ["watermark" if r[3] else "event" for r in case.rows],
                          "arrival_time": range(len(case.rows))}).to_csv(
                Path(args.dump) / f"{args.window}-a{args.allowed}-s{args.seed}-c{c}.csv", index=False)
        for op in operators:
            started = time.monotonic()
            theirs = flink_run(case, args.watermarks, op, jar)
            again = flink_run(case, args.watermarks, op, jar) if args.repeat else None
            r = compare(case, ours, theirs, verbose=True)
            t = totals[op]
            t["cases"] += 1
            t["same"] += r["same"]
            t["agree"] += r["agree"]
            t["flink"] += r["flink"]
            t["preset"] += r["preset"]
            t["side_equal"] += r["side_equal"]
            t["partly_f"] += len(r["partly_f"])
            t["partly_p"] += len(r["partly_p"])
            t["lost"] += len(r["lost_f"])
            t["refired"] += r["refired_grown"][0]
            t["grown"] += r["refired_grown"][1]
            t["late_updated"] += r["late_updated"]
            t["side"] += r["side"]
            repeat = ""
            if again is not None:
                stable = again.firings == theirs.firings and again.side == theirs.side
                t["repeat_same"] += stable
                repeat = ", rerun identical" if stable else ", RERUN DIFFERS"
            print(f"case {c} [{op}] {args.window} allowed {args.allowed} ms, {n} events, {marks}, "
                  f"{len(set(r[1] for r in case.events))} keys: firings {r['agree']}/{r['flink']} "
                  f"(preset {r['preset']}), side output {'equal' if r['side_equal'] else 'DIFFERENT'} "
                  f"({r['side']}), partly dropped Flink {len(r['partly_f'])} / preset {len(r['partly_p'])} "
                  f"(metric {r['partly_metric']}), lost {len(r['lost_f'])}; re-fired {r['refired_grown'][0]}, grown "
                  f"{r['refired_grown'][1]}, late_updated {r['late_updated']}: {'same' if r['same'] else 'DIFFERENT'}"
                  f"{repeat} [{time.monotonic() - started:.0f} s]", flush=True)
    for op, t in totals.items():
        print(f"[{op}] {args.window} allowed {args.allowed} ms, {args.watermarks}: {t['same']}/{t['cases']} streams "
              f"identical; firings {t['agree']}/{t['flink']} agree (preset {t['preset']}); side output equal in "
              f"{t['side_equal']}/{t['cases']} ({t['side']} elements); partly dropped Flink {t['partly_f']} / preset "
              f"{t['partly_p']}; covered: {t['refired']} re-firings, {t['grown']} grown sessions, {t['late_updated']} "
              "late_updated"
              + (f"; reruns identical {t['repeat_same']}/{t['cases']}" if args.repeat else ""))


if __name__ == "__main__":
    main()
