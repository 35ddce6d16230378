"""The metric cards above the two clocks: a Result's numbers as a row of labelled boxes.

A module of its own so the explorer's wiring does not hold HTML: what the cards say is decided here, from the
Result's metrics alone.
"""

from __future__ import annotations

from explorer.core.result import Metrics
from explorer.timeutil import MICROS, human_duration

S = MICROS["s"]


def cards_html(m: Metrics) -> str:
    """Completeness, drops, updates, latencies and open windows; partly dropped events only when there are any."""
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
    ] + ([card("partly dropped (no side output)", f"{m.partly_dropped:,}")] if m.partly_dropped else [])) + "</div>"
