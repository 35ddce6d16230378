"""What a Spark run's working directory was made for, so that a checkpoint cannot mix two runs.

A checkpoint holds the engine state of the micro-batches that ran and the decisions they wrote. Resumed with
another delay, another window or another input, Spark would carry on from the old state and the Result would
pair new ids with old decisions, with exit 0. So the directory records a fingerprint of the configuration, the
input (a content hash and its size) and the micro-batch plan, and a run that does not match it is refused with
one line saying what differs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from explorer.config import TIME_FIELDS, RunConfig
from explorer.errors import InputError
from explorer.spark.staging import MicroBatchPlan
from explorer.streams import Stream

FILE = "fingerprint.json"


@dataclass(frozen=True)
class Fingerprint:
    """The settings in the words the CLI uses, the input's size and hash, and the plan's hash."""

    settings: dict[str, str]
    rows: int
    content: str  # sha256 of the events as the run reads them
    plan: str  # sha256 of the micro-batch bounds (the staged files are cut by them)

    @staticmethod
    def of(stream: Stream, config: RunConfig, plan: MicroBatchPlan) -> "Fingerprint":
        return Fingerprint(settings=_settings(config), rows=len(stream), content=_content_hash(stream),
                           plan=hashlib.sha256(np.asarray(plan.bounds, dtype=np.int64).tobytes()).hexdigest())


def claim(folder: Path, fingerprint: Fingerprint) -> None:
    """Record the fingerprint in a new working directory, or check that an existing one was made for the same
    run. Raises an InputError naming what differs."""
    path = folder / FILE
    if not path.exists():
        if (folder / "checkpoint").exists() or (folder / "input").exists():
            raise InputError(f"--checkpoint {folder}: this directory holds a Spark run without a fingerprint "
                             f"({FILE}), so it cannot be checked against this run; use a new directory")
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(fingerprint), indent=1))
        return
    try:
        theirs = Fingerprint(**json.loads(path.read_text()))
    except (ValueError, TypeError) as error:
        raise InputError(f"--checkpoint {folder}: {FILE} is unreadable ({error}); use a new directory") from None
    differences = _differences(theirs, fingerprint)
    if differences:
        raise InputError(f"--checkpoint {folder} was made for another run ({'; '.join(differences)}); "
                         "resume it with the same input and settings, or use a new directory")


def _differences(theirs: Fingerprint, ours: Fingerprint) -> list[str]:
    out = [f"{name} {theirs.settings.get(name, '?')} there, {value} here"
           for name, value in ours.settings.items() if theirs.settings.get(name) != value]
    if theirs.rows != ours.rows or theirs.content != ours.content:
        out.append(f"input {theirs.rows:,} rows sha256 {theirs.content[:12]} there, "
                   f"{ours.rows:,} rows sha256 {ours.content[:12]} here")
    if theirs.plan != ours.plan and not out:
        out.append("arrival batches per micro-batch differ (--arrival-batches-per-micro-batch)")
    return out


def _settings(config: RunConfig) -> dict[str, str]:
    """Every setting that changes a decision, as text a user recognises (``delay 2s``)."""
    out = {"preset": config.preset, "window": str(config.window),
           "batches": str(config.batches) if config.batches else "default"}
    for field in TIME_FIELDS:
        out[field.option] = field.to_text(getattr(config.time, field.name))
    return out


def _content_hash(stream: Stream) -> str:
    """Hash of every column the run reads, with the text columns' lengths so that no two inputs collide by
    moving a separator."""
    digest = hashlib.sha256()
    ev = stream.events
    for column in ("event_time", "arrival_time", "batch"):
        digest.update(ev[column].to_numpy(dtype=np.int64).tobytes())
    for column in ("id", "key", "partition"):
        values = [str(v) for v in ev[column].tolist()]
        digest.update(np.array([len(v) for v in values], dtype=np.int64).tobytes())
        digest.update("".join(values).encode())
    return digest.hexdigest()
