"""Watermark Explorer: see which window each event lands in and when that window is emitted.

The package is split so that the semantics never depend on a runner or a UI:
``config`` (the words users know), ``streams`` (events in, batches out), ``core`` (the one semantic model),
``metrics`` (completeness and latency), ``cli``. Runners return the same :class:`explorer.core.Result`.
"""

from explorer.config import RunConfig, TimeConfig, WindowSpec, BatchSpec, preset
from explorer.core import Result, run
from explorer.errors import InputError
from explorer.streams import Stream, load_events, generate

__all__ = [
    "BatchSpec",
    "InputError",
    "Result",
    "RunConfig",
    "Stream",
    "TimeConfig",
    "WindowSpec",
    "generate",
    "load_events",
    "preset",
    "run",
]
