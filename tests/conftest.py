"""Shared helpers: building configs from short dicts (seconds), as the scenario files write them."""

from __future__ import annotations

from typing import Any

import pytest

from explorer.config import (LatePolicy, LatenessRule, RunConfig, Scope, Strategy, TimeSource, WindowSpec,
                             apply_delay, preset)
from explorer.timeutil import parse_duration

ENUMS = {"time": ("time_source", TimeSource), "strategy": ("strategy", Strategy), "late": ("late_policy", LatePolicy),
         "lateness_rule": ("lateness_rule", LatenessRule), "idle_clock": ("idle_clock", TimeSource),
         "scope": ("scope", Scope)}
DURATIONS = ("bound", "allowed_lateness", "idle_timeout", "heartbeat")


def make_config(spec: dict[str, Any]) -> RunConfig:
    """{'preset': 'voltsp', 'strategy': 'max', 'delay': 3, 'window': 'tumbling:10', ...} → RunConfig."""
    spec = dict(spec)
    config = preset(spec.pop("preset", "voltsp"))
    if "window" in spec:
        from dataclasses import replace
        config = replace(config, window=WindowSpec.parse(spec.pop("window")))
    changes = {}
    for name, value in spec.items():
        if name in ENUMS:
            field, kind = ENUMS[name]
            changes[field] = kind(value)
        elif name in DURATIONS:
            changes[name] = parse_duration(value)
        elif name != "delay":
            raise KeyError(name)
    config = config.with_time(**changes)
    if "delay" in spec:
        config = apply_delay(config, parse_duration(spec["delay"]))
    return config


@pytest.fixture
def config_from():
    return make_config


@pytest.fixture(scope="session")
def spark():
    """One real local SparkSession for the whole run (a cold one takes 6–12 s)."""
    from explorer.spark import spark_session

    session = spark_session()
    yield session
    session.stop()
