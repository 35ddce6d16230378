"""The fast evaluation: the reference engine's decisions, compiled with numba, for every configuration.

The reference engine (``core/engine.py``) stays the readable specification; this package makes the same
decisions in the same order over flat arrays, and property tests check that both give the same Result
table for table (``tests/test_compiled.py``). Its named parts:

- ``watermarks``: the generators (per-batch MIN/MAX, bounded, event clock, processing clock) and the
  partition merge with its idleness wrapper;
- ``windows``: the assigners (fixed windows by precomputed id, sessions that merge) and the lateness rule;
- ``firing``: firing by watermark, idle timeout, the event clock's passing time and end of input;
- ``driver``: the run, batch by batch; ``plan`` prepares its arrays, ``tables`` reads them back.

Compiling takes about a minute on this project's 2-core machine, so the machine code is cached on disk, in a
folder named by a hash of this package's sources: numba checks only each function's own file, and a
cached caller would otherwise keep an old copy of a part edited in another file. ``make lab`` and
``make test`` warm it (``python -m explorer.core.compiled``), so no slider step ever waits for the compiler.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numba

from explorer.config import RunConfig
from explorer.core.result import Metrics, Result
from explorer.streams import Stream

SOURCES = Path(__file__).parent


def cache_dir() -> Path:
    """Where the compiled kernel is kept: ``$WX_KERNEL_CACHE`` or the user's cache folder, per source hash."""
    digest = hashlib.sha256(f"{numba.__version__} {sys.version}".encode())
    for source in [*sorted(SOURCES.glob("*.py")), SOURCES.parent / "rules.py"]:  # rules: compiled in here too
        digest.update(source.read_bytes())
    root = os.environ.get("WX_KERNEL_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") \
        / "watermark-explorer" / "kernel"
    return Path(root) / digest.hexdigest()[:16]


def _load_kernel() -> None:
    """Import the kernel's modules with numba's cache pointed at :func:`cache_dir` (read as each function is
    decorated), then put numba's setting back for everyone else."""
    # numba.config sets its options as module globals at runtime, so no type checker sees them
    previous = numba.config.CACHE_DIR  # type: ignore[attr-defined]
    numba.config.CACHE_DIR = str(cache_dir())  # type: ignore[attr-defined]
    try:
        from explorer.core.compiled import driver  # noqa: F401  (decorates every kernel function)
    finally:
        numba.config.CACHE_DIR = previous  # type: ignore[attr-defined]


_load_kernel()


def evaluate(stream: Stream, config: RunConfig) -> Result:
    from explorer.core.compiled import plan, tables

    return tables.result(stream, config, plan.run_kernel(stream, config))


def evaluate_metrics(stream: Stream, config: RunConfig) -> Metrics:
    from explorer.core.compiled import plan, tables

    return tables.metrics(stream, config, plan.run_kernel(stream, config))
