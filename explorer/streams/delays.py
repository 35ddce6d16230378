"""A stream whose delays follow a named distribution: "what if my delays were log-normal with p99 = 30 s?".

Events are stamped at a steady ``rate`` per key (one every 1/rate s on each of ``keys`` keys), and each arrives after a delay
drawn from ``dist``, scaled so that the delay's 99th percentile is ``p99`` seconds (the figure people know about
their pipeline). Devices may go offline and flush (``offline_prob``, ``mean_offline``), as in ``mobile-bursts``: an
event recorded while its key is offline arrives when the key is back.

The scale from p99, per distribution (``shape`` is the distribution's own second parameter):

- ``uniform``: Uniform(0, high), high = p99 / 0.99;
- ``exponential``: mean = p99 / ln 100 (Exponential(λ) in the rate form: λ = ln 100 / p99);
- ``lognormal``: exp(N(μ, σ)), σ = ``shape`` (default 1), μ = ln p99 − 2.326348 σ;
- ``pareto``: Lomax (Pareto II, starting at 0), α = ``shape`` (default 2), scale = p99 / (100^(1/α) − 1).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from explorer.errors import InputError

DISTRIBUTIONS = ("uniform", "exponential", "lognormal", "pareto")
Z99 = 2.3263478740408408  # the standard normal's 99th percentile


def delay_sample(rng: np.random.Generator, dist: str, p99: float, shape: float, n: int) -> np.ndarray:
    """``n`` delays in seconds from ``dist`` scaled to a 99th percentile of ``p99``."""
    if dist == "uniform":
        return rng.uniform(0, p99 / 0.99, n)
    if dist == "exponential":
        return rng.exponential(p99 / math.log(100), n)
    if dist == "lognormal":
        return rng.lognormal(math.log(p99) - Z99 * shape, shape, n)
    if dist == "pareto":
        scale: float = p99 / (100 ** (1 / shape) - 1)
        return rng.pareto(shape, n) * scale
    raise InputError(f"generator 'delays': --dist is one of {', '.join(DISTRIBUTIONS)}, not {dist!r}")


def delays(seed: int = 13, rate: float = 100.0, duration: float = 600.0, dist: str = "lognormal", p99: float = 30.0,
           shape: float = 1.0, keys: int = 1, offline_prob: float = 0.0, mean_offline: float = 120.0) -> pd.DataFrame:
    """Events at a steady ``rate`` per second on each of ``keys`` keys for ``duration`` s, delays from ``dist`` with
    a 99th percentile of ``p99`` s (the module's docstring gives each scale); rows in arrival order."""
    if dist not in DISTRIBUTIONS:
        raise InputError(f"generator 'delays': --dist is one of {', '.join(DISTRIBUTIONS)}, not {dist!r}")
    if not (math.isfinite(p99) and p99 > 0) or not (math.isfinite(shape) and shape > 0):
        raise InputError("generator 'delays': --p99 and --shape must be positive numbers")
    rng = np.random.default_rng(seed)
    n = int(rate * duration) * keys
    t = np.arange(n) / (rate * keys)
    key = np.arange(n) % keys
    arrival = t + delay_sample(rng, dist, p99, shape, n)
    for went in t[rng.random(n) < offline_prob]:  # a key goes offline: what it records waits till it is back
        k = key[np.searchsorted(t, went)]
        back = went + rng.exponential(mean_offline)
        held = (key == k) & (t >= went) & (t < back)
        arrival[held] = np.maximum(arrival[held], back)
    frame = pd.DataFrame({"key": [f"k{k}" for k in key], "event_time": t, "arrival_time": arrival})
    frame = frame.sort_values("arrival_time", kind="stable").reset_index(drop=True)
    frame.insert(0, "id", [f"e{i}" for i in range(1, len(frame) + 1)])
    frame["event_time"] = frame["event_time"].round(6)
    frame["arrival_time"] = frame["arrival_time"].round(6)
    return frame
