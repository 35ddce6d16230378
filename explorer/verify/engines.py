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

from explorer.config import BatchKind, RunConfig, WindowKind, what_if
from explorer.core.result import Reason
from explorer.errors import InputError
from explorer.export.bytewax_job import bytewax_job
from explorer.export.common import ExportSource
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
    cadence: Callable[[RunConfig], str | None] = lambda config: None  # a reason the job cannot run this cadence
    # the window's end as the engine reports it, from the prediction's (start, end) (e.g. Bytewax's sessions)
    session_end: Callable[[RunConfig, int], int] = lambda config, end: end

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
        return _interpreter(self.engine, self.venv)

    def window_end(self, config: RunConfig, start: int, end: int) -> int:
        return self.session_end(config, end) if config.window.kind is WindowKind.SESSION else end


def _spark_cadence(config: RunConfig) -> str | None:
    if Cadence.of(config).trigger is None:
        return ("the prediction assumes one micro-batch per event, which no Spark trigger does; give the trigger "
                "interval the job will run at (--batches interval:T, e.g. interval:1s)")
    return None


def _per_item(config: RunConfig) -> str | None:
    if config.batches is not None and config.batches.kind is not BatchKind.EVENT:
        return "Bytewax takes its items one at a time; the prediction must too (--batches event)"
    return None


ENGINE_JOBS: dict[str, EngineJob] = {
    "spark": EngineJob("spark", "spark", spark_job, frozenset({Reason.WATERMARK.value}), per_batch=True,
                       cadence=_spark_cadence),
    "bytewax": EngineJob("bytewax", "bytewax", bytewax_job,
                         frozenset({Reason.WATERMARK.value, Reason.END_OF_STREAM.value}), venv="bytewax",
                         refuses=True, cadence=_per_item,
                         # Bytewax's session ends at its last item; the explorer's, strictly closed, 1 µs after
                         # last + gap
                         session_end=lambda config, end: end - config.window.gap - 1),
}
