"""The metric cards above the two clocks: a Result's numbers as a row of labelled boxes.

A module of its own so the explorer's wiring does not hold HTML: what the cards say is decided here, from the
Result's metrics and the config that made them (its cadence, and any setting its engine lacks).
"""

from __future__ import annotations

import html

from explorer.config import BatchSpec, RunConfig, what_if
from explorer.core.result import Metrics
from explorer.timeutil import MICROS, human_duration

S = MICROS["s"]


def cards_html(m: Metrics, config: RunConfig | None = None) -> str:
    """Completeness, drops, updates, latencies and open windows; partly dropped events only when there are any.
    With ``config``: its cadence, and a "what if" card when it uses settings its preset's engine does not have."""
    lat = m.latency_event

    def card(label: str, value: str) -> str:
        return (f"<div style='border:1px solid #ddd;border-radius:6px;padding:4px 10px;margin:2px;min-width:7em'>"
                f"<div style='font-size:11px;color:#666'>{label}</div><div style='font-size:18px'>{value}</div></div>")

    def fmt(seconds: float | None) -> str:
        return human_duration(None if seconds is None else seconds * S)

    return "<div style='display:flex;flex-wrap:wrap'>" + "".join([
        card("completeness", f"{m.completeness:.2%}"), card("dropped", f"{m.dropped:,}"),
        card("side output", f"{m.side_output:,}"), card("late, updated", f"{m.late_updated:,}"),
        card("updates", f"{m.updates:,}"), card("latency p50", fmt(lat.p50)), card("latency p95", fmt(lat.p95)),
        card("most windows open", f"{m.max_open_windows:,}"), card("still open at end", f"{m.end_of_stream:,}"),
    ] + ([card("partly dropped (no side output)", f"{m.partly_dropped:,}")] if m.partly_dropped else [])
        + _context(config)) + "</div>"


def _context(config: RunConfig | None) -> list[str]:
    """What the numbers assume: the cadence, and the settings the engine itself lacks (said, never silent)."""
    if config is None:
        return []
    style = "font-size:11px;color:#666;padding:2px 10px;flex-basis:100%"
    out = [f"<div style='{style}'>cadence: {html.escape((config.batches or BatchSpec()).describe())}</div>"]
    unreal = what_if(config)
    if unreal:
        out.append(f"<div class='wx-what-if' style='{style};color:#a00'>what if: {html.escape(', '.join(unreal))} "
                   f"{'is not a setting' if len(unreal) == 1 else 'are not settings'} of {html.escape(config.preset)}; "
                   f"these numbers are not what {html.escape(config.preset)} itself would do</div>")
    return out
