"""The semantic core: window assignment, watermarks, lateness, idle timeouts and emission.

Knows nothing of Spark or widgets. ``run`` is the one entry point every front end calls.
"""

from explorer.config import RunConfig
from explorer.core.engine import run_reference
from explorer.core.result import Metrics, Reason, Result, Stat, Status
from explorer.streams import Stream


def run(stream: Stream, config: RunConfig | None = None) -> Result:
    """Evaluate ``config`` over ``stream`` with the local core."""
    return run_reference(stream, config or RunConfig())


__all__ = ["Metrics", "Reason", "Result", "Stat", "Status", "run", "run_reference"]
