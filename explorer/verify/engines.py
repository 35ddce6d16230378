"""Each engine ``verify`` runs, as one record: the program it exports, where that program runs, which of the
prediction's firings the engine makes, whether it hands refused events to the program, and what it needs of the
configuration before anything starts.

Data, not branches: ``verify`` and its report read these records and nothing else about an engine, so adding an
engine is adding a record (and its program in ``explorer.export``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from explorer.config import RunConfig, Scope, WindowKind, what_if
from explorer.core.result import Reason
from explorer.core.rules import derive
from explorer.errors import InputError
from explorer.export.beam_job import beam_job, per_event
from explorer.export.bytewax_job import bytewax_job
from explorer.export.common import ExportSource, one_event_per_batch
from explorer.export.flink_java_job import flink_java_job
from explorer.export.flink_job import pyflink_job, replays_cadence, whole_ms
from explorer.export.spark_job import Cadence, spark_job

# the engines' venvs (``make engines``): .engines/<name> beside the project, or where WX_ENGINES says
ENGINES_DIR = Path(os.environ.get("WX_ENGINES", Path(__file__).resolve().parents[2] / ".engines"))
VENV_PINS = {"flink": "apache-flink 2.3.0", "beam": "apache-beam 2.77.0", "bytewax": "bytewax 0.21.1"}


def _interpreter(engine: str, venv: str | None) -> list[str]:
    """The Python the engine's program runs on: ours (Spark is one of our dependencies), or the engine's venv."""
    import sys

    if venv is None:
        return [sys.executable]
    python = ENGINES_DIR / venv / "bin" / "python"
    if not python.exists():
        raise InputError(f"verify --engine {engine}: {python} is missing; run `make engines` once (it installs "
                         f"{VENV_PINS[venv]} into {ENGINES_DIR / venv})")
    return [str(python)]


@dataclass(frozen=True)
class EngineJob:
    """One engine as ``verify`` sees it."""

    engine: str
    preset: str  # the preset that claims this engine's semantics: the only one verify holds against it
    program: Callable[[RunConfig, ExportSource], str]  # the whole program's text (``explorer.export``)
    emits: frozenset[str]  # the prediction's emission reasons the engine makes (Reason values)
    venv: str | None = None  # None: our own Python; else .engines/<venv>
    file_name: str = "job.py"
    refuses: bool = False  # the program writes refused.jsonl: the engine hands it the events it refused as late
    per_batch: bool = False  # firings are compared micro-batch by micro-batch, with Spark's drop counts
    panes: bool = False  # the program writes each firing's pane index and timing (Beam's PaneInfo): compared too
    cadence: Callable[[RunConfig], str | None] = lambda config: None  # a reason the job cannot run this cadence
    # a session's end as the engine reports it, from the prediction's (Bytewax's: its last item)
    session_end: Callable[[RunConfig, int], int] = lambda config, end: end
    launcher: Callable[[], list[str]] | None = None  # what runs the program, when not a Python (e.g. java)
    # the configuration whose prediction the engine's run reproduces, and a line saying why, when it is not the one
    # asked for (Beam's Python runner keeps fired sessions, which the beam preset by default does not)
    held: Callable[[RunConfig], tuple[RunConfig, str | None]] = lambda config: (config, None)
    # the (format, compression) pairs the program reads (explorer.streams.files.file_format's names), and in words;
    # None: every file the explorer reads
    reads: tuple[frozenset[tuple[str, str | None]], str] | None = None

    def check(self, config: RunConfig) -> None:
        """Refuse, in one line, a configuration the engine's job would not run as predicted."""
        if config.preset != self.preset:
            raise InputError(f"verify --engine {self.engine} holds the engine against the {self.preset} preset; "
                             f"this run is under {config.preset or 'no preset'} (use --preset {self.preset})")
        extras = what_if(config)
        if extras:
            raise InputError(f"verify --engine {self.engine}: {', '.join(extras)} is a what-if {self.engine} has no "
                             "setting for; the engine cannot run it")
        reason = self.cadence(config)
        if reason:
            raise InputError(f"verify --engine {self.engine}: {reason}")

    def command(self) -> list[str]:
        return self.launcher() if self.launcher else _interpreter(self.engine, self.venv)

    def window_end(self, config: RunConfig, end: int) -> int:
        return self.session_end(config, end) if config.window.kind is WindowKind.SESSION else end


def _python_runner_sessions(config: RunConfig) -> tuple[RunConfig, str | None]:
    """Beam's Python DirectRunner, which runs the exported pipeline, never drops a fired session's state: its
    prediction is the one with --session-state-kept. The beam preset's default is the rule of Beam's Java runners
    and Dataflow (dropped at end + allowed lateness), which no runner here can run."""
    if config.window.kind is not WindowKind.SESSION or config.time.session_state_kept:
        return config, None
    return config.with_time(session_state_kept=True), (
        "held against the prediction with --session-state-kept true: Beam's Python DirectRunner keeps a fired "
        "session's state (Beam's Java runners and Dataflow drop it at end + allowed lateness, the preset's default)")


def _spark_cadence(config: RunConfig) -> str | None:
    if Cadence.of(config).trigger is None:
        return ("the prediction assumes one micro-batch per event, which no Spark trigger does; give the trigger "
                "interval the job will run at (--batches interval:T, e.g. interval:1s)")
    return None


def _bytewax_cadence(config: RunConfig) -> str | None:
    """Bytewax takes one item at a time; and its job wakes every key before each (the clock driven by hand), so a
    live dataflow's wake-ups on the system clock cannot be run by it: tests/test_bytewax_live_clock.py checks them
    on the real clock instead."""
    if derive(config).live_wakeups:
        return ("--bytewax-live-wakeups models a live dataflow on the system clock; the exported job drives Bytewax's "
                "clock by hand and wakes every key before each item, so it cannot run those wake-ups")
    return one_event_per_batch(config, "Bytewax takes its items one at a time")


def _flink_cadence(config: RunConfig) -> str | None:
    """What the Flink programs cannot replay as predicted: a cadence without ticks, times finer than Flink's ms,
    a watermark that is not one per partition merged by min (or one in all), the wall clock of withIdleness."""
    if config.time.continuous_processing_time is not None:
        return ("--continuous-processing-time: Flink's ContinuousProcessingTimeTrigger fires on the wall clock, which "
                "a replay of the file's arrival times cannot reproduce")
    if not replays_cadence(config):
        return ("a Flink job emits its watermark per auto-watermark interval: give --batches interval:T (the flink "
                "preset's 200ms), event or count:N, not the file's batch column")
    if config.time.scope not in (Scope.PARTITION_MIN, Scope.GLOBAL):
        return f"--scope {config.time.scope.value} is not a Flink watermark (one per partition, merged by min)"
    if config.time.source_idle_timeout is not None and (config.batches is None or not config.batches.interval):
        return ("--source-idle-timeout: Flink's withIdleness counts auto-watermark intervals (it decides idleness at "
                "the periodic emit, every interval of processing time, the silent ones too), which a watermark after "
                "every N events does not have; give --batches interval:T")
    return whole_ms(config)


def _java_on_flink_jars() -> list[str]:
    """Java's single-file launcher, against the jars PyFlink ships (``make engines``): no build step, no Maven."""
    import shutil

    libs = sorted((ENGINES_DIR / "flink").glob("lib/python3*/site-packages/pyflink/lib"))
    if not libs:
        raise InputError(f"verify --engine flink-java: Flink's jars are missing; run `make engines` once (it installs "
                         f"{VENV_PINS['flink']}, whose jars the Java job runs on, into {ENGINES_DIR / 'flink'})")
    java = shutil.which("java")
    if java is None:
        raise InputError("verify --engine flink-java: no `java` on the PATH; the job needs a JDK 17 or newer")
    return [java, "-cp", f"{libs[-1]}/*"]


ENGINE_JOBS: dict[str, EngineJob] = {
    # append mode writes a window when the watermark passes it; update mode (--emit on-batch) each micro-batch's
    # updated windows, which the prediction's coalesced UPDATE rows are
    "spark": EngineJob("spark", "spark", spark_job, frozenset({Reason.WATERMARK.value, Reason.UPDATE.value}),
                       per_batch=True, cadence=_spark_cadence),
    "bytewax": EngineJob("bytewax", "bytewax", bytewax_job,
                         frozenset({Reason.WATERMARK.value, Reason.END_OF_STREAM.value}), venv="bytewax",
                         refuses=True,
                         cadence=_bytewax_cadence,
                         # Bytewax's session ends at its last item; the explorer's, strictly closed, 1 µs after
                         # last + gap
                         session_end=lambda config, end: end - config.window.gap - 1),
    # Flink fires a window when the watermark passes it, again for each late element it keeps, and the rest when
    # the bounded input ends (the max watermark)
    "flink": EngineJob("flink", "flink", pyflink_job, frozenset({Reason.EARLY.value, Reason.WATERMARK.value,
                                                                 Reason.LATE_UPDATE.value, Reason.END_OF_STREAM.value}),
                       venv="flink", refuses=True, cadence=_flink_cadence),
    # the same job on Flink's Java WindowOperator (PyFlink's .window() runs a Python port of it)
    "flink-java": EngineJob("flink-java", "flink", flink_java_job, frozenset({Reason.EARLY.value, Reason.WATERMARK.value,
                                                                              Reason.LATE_UPDATE.value,
                                                                              Reason.END_OF_STREAM.value}),
                            file_name="Job.java", refuses=True, cadence=_flink_cadence, launcher=_java_on_flink_jars,
                            # no Parquet, Avro, bzip2 or Zstandard reader among the jars PyFlink ships
                            reads=(frozenset((fmt, codec) for fmt in ("csv", "json") for codec in (None, "gzip")),
                                   "CSV or JSON, plain or gzip")),
    # Beam fires a window when the watermark reaches its end, a late pane for each late element it keeps, and the
    # rest when the TestStream's watermark goes to infinity, with --early-firings an early pane when a pane's timer
    # is due first; it drops late elements without a word
    "beam": EngineJob("beam", "beam", beam_job, frozenset({Reason.EARLY.value, Reason.WATERMARK.value,
                                                           Reason.LATE_UPDATE.value, Reason.END_OF_STREAM.value}),
                      venv="beam", cadence=per_event, held=_python_runner_sessions, panes=True),
}
