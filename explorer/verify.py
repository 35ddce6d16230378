"""What you tune is what you deploy: export the job, run it with the real engine on the same file, and hold what
the engine emitted against the prediction, window by window.

The exported program (``export.spark_job``) is run as the user would run it, ``python job.py EVENTS OUTDIR``, in
a process of its own, and read back from its output contract (``OUTDIR/emissions.jsonl``). Nothing of the
explorer runs inside it, so agreement means the program the user carries away reproduces the prediction.

Spark's append mode emits a window once, when the watermark passes its end: the prediction's ``WATERMARK``
emissions. Windows still open when the input ends (``END_OF_STREAM``) are not emitted by Spark and are not
compared; the report says how many there are. Drops are compared as Spark reports them, micro-batch by
micro-batch (``numRowsDroppedByWatermark``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from explorer.config import RunConfig
from explorer.core import run
from explorer.core.result import Reason, Result
from explorer.errors import EngineError, InputError
from explorer.export.common import ExportSource
from explorer.export.spark_job import Cadence, spark_job
from explorer.streams import Stream
from explorer.streams.times import TimeFormat

ENGINES = ("spark",)
JOB_TIMEOUT_SECONDS = 3_600


@dataclass(frozen=True, order=True)
class Window:
    """One emitted window as both sides report it: the micro-batch it came in, its span and its events."""

    micro_batch: int
    key: str
    start: int  # µs
    end: int
    ids: tuple[str, ...]


@dataclass
class Verdict:
    """The prediction and the engine's run, side by side."""

    engine: str
    predicted: list[Window]
    engine_emitted: list[Window]
    still_open: int  # windows the prediction leaves open at the end of input (not emitted by the engine)
    # rows dropped by the watermark per micro-batch, as Spark counts them: distinct (key, window) refused
    predicted_drops: dict[int, int] = field(default_factory=dict)
    engine_drops: dict[int, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # export, engine (start and run), compare

    @property
    def only_predicted(self) -> list[Window]:
        theirs = set(self.engine_emitted)
        return [w for w in self.predicted if w not in theirs]

    @property
    def only_engine(self) -> list[Window]:
        ours = set(self.predicted)
        return [w for w in self.engine_emitted if w not in ours]

    @property
    def drops_differ(self) -> list[int]:
        """Micro-batches where the two count different drops."""
        batches = sorted(set(self.predicted_drops) | set(self.engine_drops))
        return [b for b in batches if self.predicted_drops.get(b, 0) != self.engine_drops.get(b, 0)]

    @property
    def identical(self) -> bool:
        return sorted(self.predicted) == sorted(self.engine_emitted) and not self.drops_differ


def predicted_drops(result: Result) -> dict[int, int]:
    """Rows the watermark drops per micro-batch, counted as Spark counts them: after the partial aggregation each
    micro-batch gets, so the distinct (key, window) pairs refused in it (``spark.native_result`` measured it)."""
    refused = result.assignments[~result.assignments["admitted"].astype(bool)]
    rows = refused["event"].to_numpy()  # an assignment names its event by row
    pairs = pd.DataFrame({"batch": result.events["batch"].to_numpy()[rows],
                          "key": result.events["key"].to_numpy()[rows],
                          "start": refused["start"].to_numpy(), "end": refused["end"].to_numpy()})
    counts = pairs.drop_duplicates().groupby("batch").size()
    return {int(batch): int(n) for batch, n in zip(counts.index.tolist(), counts.tolist())}


def read_drops(path: Path) -> dict[int, int]:
    """Spark's ``numRowsDroppedByWatermark`` per micro-batch, from the job's ``progress.jsonl``."""
    out: dict[int, int] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            row = json.loads(line)
            if int(row["dropped_by_watermark"]):
                out[int(row["micro_batch"])] = int(row["dropped_by_watermark"])
        except (ValueError, KeyError, TypeError) as error:
            raise EngineError(f"{path}: line {number} is not a micro-batch's report ({error.__class__.__name__})") from None
    return out


def predicted_windows(result: Result) -> tuple[list[Window], int]:
    """The prediction's watermark emissions, and how many windows it leaves open at the end."""
    windows = result.windows
    closed = windows[windows["reason"] == Reason.WATERMARK.value]
    still_open = int((windows["reason"] == Reason.END_OF_STREAM.value).sum())
    columns = zip(closed["emit_batch"].tolist(), closed["key"].tolist(), closed["start"].tolist(),
                  closed["end"].tolist(), closed["ids"].tolist())
    return [Window(int(batch), str(key), int(start), int(end), tuple(sorted(map(str, ids))))
            for batch, key, start, end, ids in columns], still_open


def read_emissions(path: Path) -> list[Window]:
    """The job's ``emissions.jsonl`` (the output contract), each line checked."""
    out = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            row = json.loads(line)
            out.append(Window(int(row["micro_batch"]), str(row["key"]), int(row["window_start"]),
                              int(row["window_end"]), tuple(sorted(map(str, row["ids"])))))
        except (ValueError, KeyError, TypeError) as error:
            raise EngineError(f"{path}: line {number} is not an emission ({error.__class__.__name__})") from None
    return out


def _events_file(stream: Stream, work: Path) -> tuple[Path, ExportSource]:
    """The file the job reads: the user's own, or, for a built-in stream, its events written as µs numbers."""
    source = ExportSource.of(stream)
    if stream.source and Path(stream.source).is_file():
        return Path(stream.source), replace(source, path=stream.source)
    path = work / "events.csv"
    ev = stream.events
    frame = pd.DataFrame({"id": ev["id"], "key": ev["key"], "event_time": ev["event_time"],
                          "arrival_time": ev["arrival_time"]})
    frame.to_csv(path, index=False)
    micros = TimeFormat("number", "us", given=True)
    return path, ExportSource("event_time", "key" if stream.has_keys else None, micros, str(path), "arrival_time",
                              micros, "id")


def verify(stream: Stream, config: RunConfig, engine: str, work: Path, python: str = sys.executable) -> Verdict:
    """Export ``config`` for ``engine``, run it on ``stream``'s file in a process of its own, and compare."""
    if engine not in ENGINES:
        raise InputError(f"verify: engine {engine!r} does not run here; use one of {', '.join(ENGINES)}")
    if Cadence.of(config).trigger is None:
        raise InputError("verify: the prediction assumes one micro-batch per event, which no Spark trigger does; "
                         "give the trigger interval the job will run at (--batches interval:T, e.g. interval:1s)")
    seconds: dict[str, float] = {}
    work.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    events, source = _events_file(stream, work)
    job = work / "job.py"
    job.write_text(spark_job(config, source))
    seconds["export"] = time.perf_counter() - began
    began = time.perf_counter()
    out = work / "out"
    try:
        ran = subprocess.run([python, str(job), str(events), str(out)], capture_output=True, text=True,
                             timeout=JOB_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        raise EngineError(f"the exported job ran over {JOB_TIMEOUT_SECONDS} s; its files are in {work}") from None
    seconds["engine"] = time.perf_counter() - began
    if ran.returncode != 0:
        lines = [line for line in ran.stderr.splitlines() if line.strip()]
        first = next((line for line in lines if "Error" in line or "Exception" in line), lines[-1] if lines else "")
        raise EngineError(f"the exported job failed (exit {ran.returncode}): {first.strip()}; it is {job}")
    theirs = read_emissions(out / "emissions.jsonl")
    began = time.perf_counter()
    result = run(stream, config)
    ours, still_open = predicted_windows(result)
    seconds["compare"] = time.perf_counter() - began
    return Verdict(engine, ours, theirs, still_open, predicted_drops(result), read_drops(out / "progress.jsonl"),
                   seconds)


def _window(w: Window) -> str:
    key = f"key {w.key!r}, " if w.key else ""
    return f"{key}window [{w.start}, {w.end}) µs, micro-batch {w.micro_batch}, {len(w.ids)} event(s)"


def report(verdict: Verdict, limit: int = 5) -> list[str]:
    """The comparison in words: the verdict first, then what each side has that the other lacks."""
    n = len(verdict.predicted)
    lines = []
    if verdict.identical:
        lines.append(f"{verdict.engine}: identical — {n:,} window(s) emitted by the watermark, the same events in "
                     "each, in the same micro-batches")
    else:
        lines.append(f"{verdict.engine}: DIFFERENT — predicted {n:,} window(s), the engine emitted "
                     f"{len(verdict.engine_emitted):,}")
        for title, windows in (("only predicted", verdict.only_predicted), ("only from the engine", verdict.only_engine)):
            if windows:
                lines.append(f"  {title}: {len(windows):,}")
                lines += [f"    {_window(w)}" for w in windows[:limit]]
    dropped = sum(verdict.engine_drops.values())
    if verdict.drops_differ:
        batch = verdict.drops_differ[0]
        lines.append(f"  drops differ in {len(verdict.drops_differ)} micro-batch(es); first, micro-batch {batch}: "
                     f"predicted {verdict.predicted_drops.get(batch, 0)}, the engine dropped "
                     f"{verdict.engine_drops.get(batch, 0)} (key, window) row(s)")
    else:
        lines.append(f"  {dropped:,} (key, window) row(s) dropped by the watermark, in the same micro-batches")
    lines.append(f"  {verdict.still_open:,} window(s) still open at the end of input (the engine emits none of them)")
    lines.append("  time: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in verdict.seconds.items()))
    return lines
