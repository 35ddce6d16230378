"""The semantic core: window assignment, watermarks, lateness, idle timeouts and emission.

Knows nothing of Spark or widgets. ``run`` is the one entry point every front end calls. Two evaluations
make the same decisions: the reference engine (``engine.py``, a plain loop that is the specification) and
the compiled one (``compiled/``, the same rules over flat arrays, for sliders and sweeps), which ``run``
uses unless asked for the reference.
"""

from explorer.budget import check_run
from explorer.config import RunConfig
from explorer.core.assemble import run_reference
from explorer.core.compiled import evaluate, evaluate_metrics
from explorer.core.result import Metrics, Reason, Result, Stat, Status
from explorer.core.summary import summarize
from explorer.errors import InputError
from explorer.streams import Stream

ENGINES = ("compiled", "reference")


def run(stream: Stream, config: RunConfig | None = None, engine: str = "compiled") -> Result:
    """Evaluate ``config`` over ``stream`` with the local core."""
    config = config or RunConfig()
    if engine not in ENGINES:
        raise InputError(f"unknown local engine {engine!r}; use one of {', '.join(ENGINES)}")
    check_run(len(stream), config)
    check_scripted(stream, config)
    return evaluate(stream, config) if engine == "compiled" else run_reference(stream, config)


def run_metrics(stream: Stream, config: RunConfig) -> Metrics:
    """Just the metrics (for sweeps): no per-event tables, no window contents."""
    check_scripted(stream, config)
    return evaluate_metrics(stream, config)


def check_scripted(stream: Stream, config: RunConfig) -> None:
    """The scripted strategy needs watermark rows to follow: without them nothing would ever close."""
    if config.time.follows_watermark_rows and stream.watermarks.empty:
        raise InputError(f"{stream.name}: strategy scripted follows the input's watermark rows (column kind = "
                         "'watermark'), and it has none")


__all__ = ["Metrics", "Reason", "Result", "Stat", "Status", "run", "run_metrics", "run_reference", "summarize"]
