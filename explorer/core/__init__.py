"""The semantic core: window assignment, watermarks, lateness, idle timeouts and emission.

Knows nothing of Spark or widgets. ``run`` is the one entry point every front end calls. Two evaluations
make the same decisions: the reference engine (``engine.py``, a plain loop that is the specification) and
the compiled one (``compiled/``, the same rules over flat arrays, for sliders and sweeps), which ``run``
uses unless asked for the reference.
"""

from explorer.budget import check_run
from explorer.config import RunConfig, Scope, TimeSource
from explorer.core import kstreams_sliding
from explorer.core.assemble import run_reference
from explorer.core.emitted import shape_emissions, shaped
from explorer.core.result import Metrics, Reason, Result, Stat, Status
from explorer.core.summary import summarize
from explorer.core.triggers import refusal
from explorer.errors import InputError
from explorer.streams import Stream

ENGINES = ("compiled", "reference")


def run(stream: Stream, config: RunConfig | None = None, engine: str = "compiled") -> Result:
    """Evaluate ``config`` over ``stream`` with the local core."""
    config = config or RunConfig()
    if engine not in ENGINES:
        raise InputError(f"unknown local engine {engine!r}; use one of {', '.join(ENGINES)}")
    check_run(len(stream), config, kstreams_sliding.joins(stream, config))
    check_inputs(stream, config)
    # on-batch: the kernel runs on-update, and its table is coalesced here (the reference does it in run_reference)
    if engine == "reference":
        return run_reference(stream, config)
    from explorer.core.compiled import evaluate  # (numba and the kernel load at the first run: validate needs neither)

    return shape_emissions(evaluate(stream, config))


def run_metrics(stream: Stream, config: RunConfig) -> Metrics:
    """Just the metrics (for sweeps): no per-event tables, no window contents."""
    check_inputs(stream, config)
    from explorer.core.compiled import evaluate, evaluate_metrics  # (loaded at the first run, as in run)

    if shaped(config):  # the emitted table is made after the run, from its tables
        return shape_emissions(evaluate(stream, config)).metrics
    return evaluate_metrics(stream, config)


def check_inputs(stream: Stream, config: RunConfig) -> None:
    """What a configuration needs of the stream, refused in one line before anything runs.

    The scripted strategy needs watermark rows to follow: without them nothing would ever close. A watermark
    per partition closes a key's windows by its partition's, so a key must stay in one partition (Kafka's
    partitioner keeps it there; a key in two would be two aggregates in Kafka Streams, one window here)."""
    if config.time.follows_watermark_rows and stream.watermarks.empty:
        raise InputError(f"{stream.name}: strategy scripted follows the input's watermark rows (column kind = "
                         "'watermark'), and it has none")
    why = kstreams_sliding.refusal(config) or refusal(config)
    if why:
        raise InputError(why)
    time = config.time
    if time.scope is Scope.PARTITION and time.time_source is TimeSource.EVENT and not time.follows_watermark_rows:
        key = stream.cached("a key in two partitions", lambda: _key_in_two_partitions(stream))
        if key is not None:
            found = sorted(stream.events.loc[stream.events["key"] == key, "partition"].unique())
            raise InputError(f"{stream.name}: scope partition closes a key's windows by its partition's watermark, "
                             f"but key {key!r} is in partitions {', '.join(map(str, found[:4]))}; a key stays in one "
                             "partition (repartition by key first), or use scope partition-min")


def _key_in_two_partitions(stream: Stream) -> str | None:
    spread = stream.events.groupby("key")["partition"].nunique()
    return str(spread.index[spread > 1][0]) if (spread > 1).any() else None


__all__ = ["Metrics", "Reason", "Result", "Stat", "Status", "run", "run_metrics", "run_reference", "summarize"]
