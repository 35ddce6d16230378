"""The semantic core: window assignment, watermarks, lateness, idle timeouts and emission.

Knows nothing of Spark or widgets. ``run`` is the one entry point every front end calls; it picks the
vectorised engine where it applies and the reference engine elsewhere (both give identical Results).
"""

from explorer.config import RunConfig
from explorer.core.assemble import run_reference
from explorer.core.fast import metrics_fast, run_fast, supports
from explorer.core.result import Metrics, Reason, Result, Stat, Status
from explorer.core.summary import summarize
from explorer.errors import InputError
from explorer.streams import Stream

ENGINES = ("auto", "reference", "fast")


def run(stream: Stream, config: RunConfig | None = None, engine: str = "auto") -> Result:
    """Evaluate ``config`` over ``stream`` with the local core."""
    config = config or RunConfig()
    if engine not in ENGINES:
        raise InputError(f"unknown local engine {engine!r}; use one of {', '.join(ENGINES)}")
    if engine == "fast" and not supports(config, stream):
        raise InputError("the vectorised engine covers event time, tumbling/sliding windows and no idle timeout")
    if engine == "fast" or (engine == "auto" and supports(config, stream)):
        return run_fast(stream, config)
    return run_reference(stream, config)


def run_metrics(stream: Stream, config: RunConfig) -> Metrics:
    """Just the metrics, as fast as the configuration allows (for sweeps)."""
    if supports(config, stream):
        return metrics_fast(stream, config)
    return run_reference(stream, config).metrics


__all__ = ["Metrics", "Reason", "Result", "Stat", "Status", "run", "run_metrics", "run_reference", "summarize"]
