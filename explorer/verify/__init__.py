"""What you tune is what you deploy: export the job, run it with the real engine on the same file, and hold what
the engine emitted against the prediction, firing by firing.

The exported program is run as the user would run it, ``python job.py EVENTS OUTDIR`` (in the engine's own venv
where its pins clash with ours: ``make engines``), in a process of its own, and read back from its output contract
(docs/export.md): ``OUTDIR/emissions.jsonl`` and, where the engine hands refused events to the program,
``OUTDIR/refused.jsonl``. Nothing of the explorer runs inside it, so agreement means the program the user carries
away reproduces the prediction.

Each engine's part (which firings it makes, what it refuses, what it needs of the configuration) is one record in
:mod:`explorer.verify.engines`; this module is the comparison every engine shares.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from explorer.config import RunConfig, WindowKind
from explorer.core import run
from explorer.core.result import Result, Status, pane_columns
from explorer.errors import EngineError, InputError, Interrupted
from explorer.export.common import ExportSource
from explorer.streams import Stream
from explorer.streams.files import file_format
from explorer.streams.times import TimeFormat
from explorer.verify.engines import ENGINE_JOBS, EngineJob
from explorer.verify.jsonl import json_lines
from explorer.verify.spark import predicted_drops, read_drops

__all__ = ["ENGINES", "Firing", "Verdict", "held_against", "predicted_firings", "read_emissions", "report", "verify"]

ENGINES = tuple(ENGINE_JOBS)
JOB_TIMEOUT_SECONDS = 3_600


@dataclass(frozen=True, order=True)
class Firing:
    """One emission as both sides report it: the window, which of its firings this is (1 for the first), the
    events in it, (Spark only, 0 elsewhere) the micro-batch that emitted it, and (Beam only, -1 and "" elsewhere)
    its PaneInfo's index and timing."""

    key: str
    start: int  # µs
    end: int
    revision: int
    ids: tuple[str, ...]
    micro_batch: int = 0
    pane_index: int = -1
    pane_timing: str = ""


@dataclass
class Verdict:
    """The prediction and the engine's run, side by side."""

    engine: str
    predicted: list[Firing]
    engine_emitted: list[Firing]
    still_open: int  # windows the prediction leaves open at the end of input that this engine never emits
    # the ids of the events refused as late, where the engine hands them to the program (None: it does not)
    predicted_refused: frozenset[str] | None = None
    engine_refused: frozenset[str] | None = None
    # rows dropped by the watermark per micro-batch, as Spark counts them: distinct (key, window) refused
    predicted_drops: dict[int, int] = field(default_factory=dict)
    engine_drops: dict[int, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # export, engine (start and run), compare
    note: str | None = None  # why the prediction held is not the configuration asked for (EngineJob.held)

    @property
    def only_predicted(self) -> list[Firing]:
        theirs = set(self.engine_emitted)
        return [w for w in self.predicted if w not in theirs]

    @property
    def only_engine(self) -> list[Firing]:
        ours = set(self.predicted)
        return [w for w in self.engine_emitted if w not in ours]

    @property
    def drops_differ(self) -> list[int]:
        """Micro-batches where the two count different drops."""
        batches = sorted(set(self.predicted_drops) | set(self.engine_drops))
        return [b for b in batches if self.predicted_drops.get(b, 0) != self.engine_drops.get(b, 0)]

    @property
    def refused_differ(self) -> bool:
        return self.engine_refused is not None and self.engine_refused != self.predicted_refused

    @property
    def identical(self) -> bool:
        return (sorted(self.predicted) == sorted(self.engine_emitted) and not self.drops_differ
                and not self.refused_differ)


def predicted_firings(result: Result, job: EngineJob) -> tuple[list[Firing], int]:
    """The prediction's firings that ``job``'s engine makes, numbered per window in the order they happen, and how
    many windows it leaves open at the end of input that the engine never emits."""
    windows = result.windows
    emitted = windows["reason"].isin(job.emits).to_numpy()
    fired = windows[emitted]
    panes = (pane_columns(windows)[emitted] if job.panes
             else pd.DataFrame({"pane_index": -1, "pane_timing": ""}, index=fired.index))
    revisions: dict[tuple[str, int, int], int] = defaultdict(int)
    out = []
    columns = zip(fired["emit_batch"].tolist(), fired["key"].tolist(), fired["start"].tolist(),
                  fired["end"].tolist(), fired["ids"].tolist(), panes["pane_index"].tolist(),
                  panes["pane_timing"].tolist())
    for batch, key, start, end, ids, index, timing in columns:
        span = (str(key), int(start), job.window_end(result.config, int(end)))
        revisions[span] += 1
        out.append(Firing(*span, revisions[span], tuple(sorted(map(str, ids))), int(batch) if job.per_batch else 0,
                          int(index), timing))
    still_open = int((~windows["reason"].isin(job.emits) & (windows["reason"] == "END_OF_STREAM")).sum())
    return out, still_open


def predicted_refused(result: Result) -> frozenset[str]:
    """The events the prediction refuses as late (to a side output, or dropped), by id."""
    status = result.events["status"]
    refused = status.isin([Status.SIDE_OUTPUT.value, Status.DROPPED.value])
    return frozenset(map(str, result.events.loc[refused, "id"].tolist()))


def read_emissions(path: Path, per_batch: bool = False, panes: bool = False) -> list[Firing]:
    """The job's ``emissions.jsonl`` (the output contract), each line checked, numbered per window by ``seq``;
    with ``panes``, each line's ``pane`` and ``timing`` too (Beam's PaneInfo)."""
    rows = []
    for number, row in json_lines(path, "an emission"):
        try:
            rows.append((int(row["seq"]), str(row["key"]), int(row["window_start"]), int(row["window_end"]),
                         tuple(sorted(map(str, row["ids"]))), int(row["micro_batch"]) if per_batch else 0,
                         int(row["pane"]) if panes else -1, str(row["timing"]) if panes else ""))
        except (ValueError, KeyError, TypeError) as error:
            raise EngineError(f"{path}: line {number} is not an emission ({error.__class__.__name__})") from None
    revisions: dict[tuple[str, int, int], int] = defaultdict(int)
    out = []
    for _seq, key, start, end, ids, batch, index, timing in sorted(rows):
        revisions[key, start, end] += 1
        out.append(Firing(key, start, end, revisions[key, start, end], ids, batch, index, timing))
    return out


def read_refused(path: Path) -> frozenset[str]:
    out = set()
    for number, row in json_lines(path, "a refused event"):
        try:
            out.add(str(row["id"]))
        except (KeyError, TypeError) as error:
            raise EngineError(f"{path}: line {number} is not a refused event ({error.__class__.__name__})") from None
    return frozenset(out)


def read_timing(path: Path, total: float) -> dict[str, float]:
    """Where the job's time went, as it reports it (``timing.json``: reading the file, starting the engine,
    running), and the rest of its process (the interpreter, imports, writing); all of it as "engine" when the
    job does not say."""
    try:
        parts = {name: float(value) for name, value in json.loads(path.read_text()).items()}
        job = {"read": parts["read_s"], "engine start": parts["engine_start_s"], "run": parts["run_s"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {"engine": total}
    return job | {"process": max(total - sum(job.values()), 0.0)}


def _events_file(stream: Stream, work: Path, job: EngineJob) -> tuple[Path, ExportSource, str | None]:
    """The file the job reads: the user's own, or, for a built-in stream or a format the job cannot read (Flink
    Java's jars have no Parquet or Avro reader), its events written as µs numbers, with a line saying so."""
    source = ExportSource.of(stream)
    if stream.source and Path(stream.source).is_file():
        fmt, codec = file_format(Path(stream.source))
        if job.reads is None or (fmt, codec) in job.reads[0]:
            return Path(stream.source), replace(source, path=stream.source), None
        path, written = _events_csv(stream, work)
        given = f"{fmt} ({codec})" if codec else fmt
        return path, written, (f"the job read the events written as CSV (times in µs): {job.engine} reads "
                               f"{job.reads[1]}, not {given}; deployed, it needs the file as one of those")
    return (*_events_csv(stream, work), None)


def _events_csv(stream: Stream, work: Path) -> tuple[Path, ExportSource]:
    """The stream's events as a CSV of µs numbers in ``work``, and how the job is to read it."""
    path = work / "events.csv"
    ev = stream.events
    frame = pd.DataFrame({"id": ev["id"], "key": ev["key"], "event_time": ev["event_time"],
                          "arrival_time": ev["arrival_time"]})
    partitioned = len(stream.partitions) > 1
    if partitioned:  # the engines that keep a watermark per partition read it (Flink, Beam)
        frame["partition"] = ev["partition"]
    frame.to_csv(path, index=False)
    micros = TimeFormat("number", "us", given=True)
    return path, ExportSource("event_time", "key" if stream.has_keys else None, micros, str(path), "arrival_time",
                              micros, "id", partition="partition" if partitioned else None)


def _run_job(command: list[str], job: Path, work: Path, cancel: threading.Event | None,
             waiting: Callable[[float], None] | None) -> float:
    """Run the job in a process group of its own, polling so that ``cancel`` stops it (the whole group: an engine
    starts its own JVM or workers) and ``waiting`` hears how long it has run."""
    began = time.perf_counter()
    with tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, text=True, start_new_session=True)
        try:
            while process.poll() is None:
                elapsed = time.perf_counter() - began
                if cancel is not None and cancel.is_set():
                    raise Interrupted(f"stopped the exported job after {elapsed:.0f} s; its files are in {work}")
                if elapsed > JOB_TIMEOUT_SECONDS:
                    raise EngineError(f"the exported job ran over {JOB_TIMEOUT_SECONDS} s; its files are in {work}")
                if waiting is not None:
                    waiting(elapsed)
                time.sleep(0.2)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        errors.seek(0)
        lines = [line for line in errors.read().splitlines() if line.strip()]
    if process.returncode != 0:
        first = next((line for line in lines if "Error" in line or "Exception" in line), lines[-1] if lines else "")
        raise EngineError(f"the exported job failed (exit {process.returncode}): {first.strip()}; it is {job}")
    return time.perf_counter() - began


def verify(stream: Stream, config: RunConfig, engine: str, work: Path, cancel: threading.Event | None = None,
           waiting: Callable[[float], None] | None = None) -> Verdict:
    """Export ``config`` for ``engine``, run it on ``stream``'s file in a process of its own, and compare.
    ``cancel`` stops the job (raises :class:`Interrupted`); ``waiting`` hears the seconds it has run, about five
    times a second (the explorer's "Run on <engine>" shows them)."""
    if engine not in ENGINE_JOBS:
        raise InputError(f"verify: engine {engine!r} does not run here; use one of {', '.join(ENGINES)}")
    job = ENGINE_JOBS[engine]
    job.check(config)  # before anything is written or started
    config, note = job.held(config)
    command = job.command()
    seconds: dict[str, float] = {}
    work.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    events, source, rewritten = _events_file(stream, work, job)
    program = work / job.file_name
    program.write_text(job.program(config, source))
    seconds["export"] = time.perf_counter() - began
    out = work / "out"
    seconds["engine"] = _run_job([*command, str(program), str(events), str(out)], program, work, cancel, waiting)
    seconds |= read_timing(out / "timing.json", seconds.pop("engine"))
    ran = Verdict(engine, [], read_emissions(out / "emissions.jsonl", job.per_batch, job.panes), 0,
                  engine_refused=read_refused(out / "refused.jsonl") if job.refuses else None,
                  engine_drops=read_drops(out / "progress.jsonl") if job.per_batch else {})
    began = time.perf_counter()
    verdict = held_against(ran, run(stream, config))
    seconds["compare"] = time.perf_counter() - began
    verdict.seconds, verdict.note = seconds, "; ".join(n for n in (note, rewritten) if n) or None
    return verdict


def held_against(ran: Verdict, result: Result) -> Verdict:
    """The engine's side of ``ran`` held against the prediction ``result``: how ``verify`` judges a run (and how
    one run is held against another configuration's prediction)."""
    job = ENGINE_JOBS[ran.engine]
    ours, still_open = predicted_firings(result, job)
    theirs = ran.engine_emitted
    if job.panes and result.config.window.kind is WindowKind.SESSION:
        ours, theirs = _merged_timings(ours), _merged_timings(theirs)
    return Verdict(ran.engine, ours, theirs, still_open,
                   predicted_refused(result) if job.refuses else None, ran.engine_refused,
                   predicted_drops(result) if job.per_batch else {}, ran.engine_drops)


def _merged_timings(firings: list[Firing]) -> list[Firing]:
    """Sessions' panes with EARLY and LATE as one timing: Beam's Python runner times a pane fired by an element
    EARLY while its *output* watermark is before the window's end, and never releases the hold of a session merged
    into one it had fired (the stall its run ends in), so from then on its late panes of later sessions are EARLY
    where the input watermark the prediction has makes them LATE. ON_TIME and the pane index are compared as they
    are."""
    return [replace(w, pane_timing="EARLY or LATE") if w.pane_timing in ("EARLY", "LATE") else w for w in firings]


def _firing(w: Firing) -> str:
    key = f"key {w.key!r}, " if w.key else ""
    batch = f", micro-batch {w.micro_batch}" if w.micro_batch else ""
    nth = f", firing {w.revision}" if w.revision > 1 else ""
    pane = f", pane {w.pane_index} {w.pane_timing}" if w.pane_timing else ""
    return f"{key}window [{w.start}, {w.end}) µs{nth}{batch}{pane}, {len(w.ids)} event(s)"


def report(verdict: Verdict, limit: int = 5) -> list[str]:
    """The comparison in words: the verdict first, then what each side has that the other lacks."""
    n = len(verdict.predicted)
    job = ENGINE_JOBS.get(verdict.engine)
    lines = []
    windows = len({(w.key, w.start, w.end) for w in verdict.predicted})
    if verdict.identical:
        where = "in the same micro-batches" if job and job.per_batch else "in the same order per window"
        where += ", each pane's index and timing the same" if job and job.panes else ""
        lines.append(f"{verdict.engine}: identical — {n:,} firing(s) of {windows:,} window(s), the same events in "
                     f"each, {where}")
    else:
        lines.append(f"{verdict.engine}: DIFFERENT — predicted {n:,} firing(s), the engine made "
                     f"{len(verdict.engine_emitted):,}")
        for title, firings in (("only predicted", verdict.only_predicted), ("only from the engine", verdict.only_engine)):
            if firings:
                lines.append(f"  {title}: {len(firings):,}")
                lines += [f"    {_firing(w)}" for w in firings[:limit]]
    if verdict.note:
        lines.append(f"  {verdict.note}")
    if verdict.engine_refused is not None:
        if verdict.refused_differ:
            ours, theirs = verdict.predicted_refused or frozenset(), verdict.engine_refused
            lines.append(f"  refused as late: predicted {len(ours):,}, the engine {len(theirs):,}; only predicted: "
                         f"{', '.join(sorted(ours - theirs)[:limit]) or '-'}; only from the engine: "
                         f"{', '.join(sorted(theirs - ours)[:limit]) or '-'}")
        else:
            lines.append(f"  {len(verdict.engine_refused):,} event(s) refused as late, the same ones")
    if job and job.per_batch:
        dropped = sum(verdict.engine_drops.values())
        if verdict.drops_differ:
            batch = verdict.drops_differ[0]
            lines.append(f"  drops differ in {len(verdict.drops_differ)} micro-batch(es); first, micro-batch {batch}: "
                         f"predicted {verdict.predicted_drops.get(batch, 0)}, the engine dropped "
                         f"{verdict.engine_drops.get(batch, 0)} (key, window) row(s)")
        else:
            lines.append(f"  {dropped:,} (key, window) row(s) dropped by the watermark, in the same micro-batches")
    if verdict.still_open:
        lines.append(f"  {verdict.still_open:,} window(s) still open at the end of input (the engine emits none of "
                     "them)")
    lines.append("  time: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in verdict.seconds.items()))
    return lines
