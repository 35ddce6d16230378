"""What is emitted, once any runner (the reference engine, the compiled kernel, the Spark runner) has made its
table: the steps that cut or add panes without changing a decision, in one order for every runner. Spark's
update mode and Kafka Streams' cache (``coalesce``), Beam's early firings (``early``), Flink's continuous
event-time and processing-time triggers (``continuous``, ``continuous_processing``)."""

from __future__ import annotations

from explorer.config import RunConfig
from explorer.core.coalesce import coalesce, coalesced
from explorer.core.continuous import add_continuous_panes
from explorer.core.continuous_processing import add_processing_panes
from explorer.core.early import add_early_panes
from explorer.core.result import Result
from explorer.core.triggers import TRIGGERS, refusal
from explorer.errors import InputError


def shaped(config: RunConfig) -> bool:
    """Whether a run under ``config`` has its table changed after the runner (so its metrics need the tables)."""
    return coalesced(config) or any(getattr(config.time, trigger.field) is not None for trigger in TRIGGERS)


def shape_emissions(result: Result) -> Result:
    """``result``'s table as the configuration emits it: coalesced, then early and periodic panes added (a trigger
    refused where it is not modelled)."""
    why = refusal(result.config)
    if why:
        raise InputError(why)
    return add_processing_panes(add_continuous_panes(add_early_panes(coalesce(result))))
