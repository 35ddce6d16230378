"""The metric cards above the two clocks: a Result's numbers as a row of labelled boxes.

A module of its own so the explorer's wiring does not hold HTML: what the cards say is decided here, from the
Result's metrics and the config that made them (its cadence, and any setting its engine lacks).
"""

from __future__ import annotations

import html

import pandas as pd

from explorer.config import BatchSpec, RunConfig, emission, what_if
from explorer.core.result import Metrics, Reason
from explorer.core.summary import after_early
from explorer.timeutil import MICROS
from explorer.ui.words import duration

S = MICROS["s"]
NO_LATENCY = "none emitted"  # a latency card when no window was emitted

# why a window can be emitted before its end (a negative emit latency), in words
EARLY = {Reason.UPDATE.value: "update output (--emit on-update, on-batch), which forwards a window's result while it "
                              "is open: each record's, or each batch's or commit's",
         Reason.IDLE_TIMEOUT.value: "closed by the idle timeout before its end",
         Reason.TOMBSTONE.value: "a tombstone, forwarded when an event replaced the session under this span",
         Reason.EARLY.value: "early or periodic firings, which emit a pane before the watermark reaches the window's "
                             "end: a processing-time delay after its first element (Beam's --early-firings) or at "
                             "each interval of event time the watermark passes (Flink's --continuous-event-time) or "
                             "of processing time (Flink's --continuous-processing-time)"}


def early_because(windows: pd.DataFrame | None) -> str:
    """Why first emissions came before their window's end, in words (``EARLY``), or "" when none did."""
    if windows is None or windows.empty:
        return ""
    latency = pd.to_numeric(windows["latency_event"], errors="coerce")
    # a window's first emission after its early panes (Beam's early firings), as the latency cards count it
    revision = after_early(windows, windows["reason"].to_numpy(dtype=object) == Reason.EARLY.value)
    early = windows[(revision == 1) & (latency < 0)]
    reasons = early["reason"].astype(str).value_counts().index
    return "; ".join(EARLY.get(r, f"emitted by {r.lower().replace('_', ' ')} before its end") for r in reasons)


def cards_html(m: Metrics, config: RunConfig | None = None, windows: pd.DataFrame | None = None) -> str:
    """Completeness, drops, updates, latencies and open windows; partly dropped events only when there are any.
    With ``config``: its cadence, and a "what if" card when it uses settings its preset's engine does not have.
    With ``windows`` (the Result's): a latency below 0 says why (on-update output, the idle timeout)."""
    lat = m.latency_event
    why_early = early_because(windows)

    def card(label: str, value: str, note: str = "") -> str:
        below = f"<div class='wx-why' style='font-size:11px;color:#a60;max-width:16em'>{note}</div>" if note else ""
        return (f"<div style='border:1px solid #ddd;border-radius:6px;padding:4px 10px;margin:2px;min-width:7em'>"
                f"<div style='font-size:11px;color:#666'>{label}</div><div style='font-size:18px'>{value}</div>"
                f"{below}</div>")

    def latency_card(label: str, seconds: float | None) -> str:
        if seconds is None or seconds >= 0:
            return card(label, fmt(seconds))
        note = f"emitted {fmt(-seconds)} before the window ended: {html.escape(why_early or 'early output')}"
        return card(label, fmt(seconds), note)

    def fmt(seconds: float | None) -> str:
        return duration(None if seconds is None else seconds * S, NO_LATENCY)

    return "<div style='display:flex;flex-wrap:wrap'>" + "".join([
        card("completeness", f"{m.completeness:.2%}"), card("dropped", f"{m.dropped:,}"),
        card("side output", f"{m.side_output:,}"), card("late, updated", f"{m.late_updated:,}"),
        card("updates", f"{m.updates:,}"), latency_card("latency p50", lat.p50), latency_card("latency p95", lat.p95),
        card("most windows open", f"{m.max_open_windows:,}"), card("still open at end", f"{m.end_of_stream:,}"),
    ] + ([card("partly dropped (no side output)", f"{m.partly_dropped:,}")] if m.partly_dropped else [])
        + _context(config)) + "</div>"


def _context(config: RunConfig | None) -> list[str]:
    """What the numbers assume: the cadence, and the settings the engine itself lacks (said, never silent)."""
    if config is None:
        return []
    style = "font-size:11px;color:#666;padding:2px 10px;flex-basis:100%"
    out = [f"<div style='{style}'>cadence: {html.escape((config.batches or BatchSpec()).describe())}</div>",
           f"<div style='{style}'>output: {html.escape(emission(config))}</div>"]
    unreal = what_if(config)
    if unreal:
        out.append(f"<div class='wx-what-if' style='{style};color:#a00'>what if: {html.escape(', '.join(unreal))} "
                   f"{'is not a setting' if len(unreal) == 1 else 'are not settings'} of {html.escape(config.preset)}; "
                   f"these numbers are not what {html.escape(config.preset)} itself would do</div>")
    return out
