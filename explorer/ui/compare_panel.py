"""Compare engines: the same stream under 2–5 presets as small multiples, with the kinds of disagreement and
an example of each to ring in every panel.

A panel of its own because it is a figure and a list of its own, computed on the kernel's thread when the
button is pressed (``explorer.compare``), reading the controls' window and delay through ``config()``.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from functools import partial
from typing import Any

import ipywidgets as W
import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.compare import Comparison, Disagreement, compare, side_config
from explorer.config import PRESETS, RunConfig, delay_of
from explorer.streams import Stream
from explorer.timeutil import MICROS, format_instant
from explorer.ui.live_figure import FigureOnDemand, LiveFigure
from explorer.ui.figures import STATUS_COLORS, STATUS_LABELS, STATUSES, plot_time
from explorer.ui.plotly_messages import send
from explorer.ui.words import plural
from explorer.ui.rule_controls import FILL

S = MICROS["s"]
COMPARE_POINTS = 5_000  # events per panel and view; small multiples show a stretch, not every point


class ComparePanel:
    """The same stream under 2–5 presets as small multiples with shared axes, the kinds of disagreement (each
    with its count and reason) and examples of each; picking an example rings it in every panel."""

    INTRO = ("<i>Pick 2 to 5 presets and press <b>compare</b> to draw the stream under each, side by side. Window and "
             "delay come from the controls; each preset reads the delay in its own arithmetic.</i>")

    def __init__(self, stream: Callable[[], Stream], config: Callable[[], RunConfig],
                 figure_made: Callable[[LiveFigure], None] = lambda figure: None):
        self._stream, self._config = stream, config
        self.presets = W.SelectMultiple(options=sorted(PRESETS), value=("flink", "voltsp"), rows=6,
                                        description="presets")
        self.button = W.Button(description="compare", icon="columns")
        self.message = W.HTML(self.INTRO)
        self.groups = W.HTML()
        # the examples by name only ("3. event e812 (t=81.2 s)"): with every side's account in it, a line ran to
        # 2,600 px in a 450–770 px list and the other engines' side was out of sight; the picked one's account
        # is written out under the list, where it wraps
        self.disagreements = W.Select(options=[], rows=8, layout=W.Layout(width=FILL, display="none"))
        self.example = W.HTML()
        self.plot = FigureOnDemand(figure_made)  # made and shown when compare is pressed
        self.comparison: Comparison | None = None
        self.examples: list[Disagreement] = []  # what the list offers, in its order
        self.button.on_click(self.run)
        self.disagreements.observe(self._on_pick, names="value")

    @property
    def figure(self) -> LiveFigure:
        """The panels' figure (made on first use: ``live_figure.FigureOnDemand``)."""
        return self.plot.figure()

    def forget(self) -> None:
        """The stream changed: the panels and the list were the old one's."""
        self.comparison = None
        self.examples = []
        self.disagreements.options = []
        self.disagreements.layout.display = "none"
        self.plot.hide()
        self.groups.value = self.example.value = ""
        self.message.value = self.INTRO

    def run(self, _button: object = None) -> None:
        labels = list(self.presets.value)
        if not 2 <= len(labels) <= 5:
            self.message.value = "<span style='color:#a00'>pick 2 to 5 presets</span>"
            return
        current = self._config()
        sides = {label: side_config(label, window=current.window, delay=delay_of(current)) for label in labels}
        self.comparison = comparison = compare(self._stream(), sides)
        self._draw(labels, comparison)
        groups = comparison.groups
        self.message.value = (f"{plural(len(self.comparison.disagreements), 'disagreement')} of {plural(len(groups), 'kind')} "
                              f"between {', '.join(labels)}; pick an example below to see it in every panel")
        self.groups.value = "<ol>" + "".join(f"<li><b>{html.escape(g.title)}</b><br>{html.escape(g.why)}</li>"
                                             for g in groups) + "</ol>"
        self.examples = [d for g in groups for d in g.examples]
        kind_of = {id(d): n for n, g in enumerate(groups, start=1) for d in g.examples}
        self.disagreements.options = [(f"{kind_of[id(d)]}. {self._name(d)}", i) for i, d in enumerate(self.examples)]
        self.disagreements.layout.display = None
        self.example.value = "<i>pick an example to read what each preset did with it</i>"

    def _name(self, d: Disagreement) -> str:
        """An example in a few words: the window (its key, if any) or the event, and when."""
        at = partial(format_instant, absolute=self._stream().absolute)
        if d.kind == "window":
            return f"window {'key ' + d.key + ' ' if d.key else ''}[{at(d.start)}, {at(d.end)})"
        return f"event {d.event_id} (t={at(d.start)})"

    def _describe(self, d: Disagreement) -> str:
        """The example and what each preset did with it, one preset a line (HTML)."""
        return (f"<b>{html.escape(self._name(d))}</b><ul style='margin:2px 0'>"
                + "".join(f"<li><b>{html.escape(label)}</b>: {html.escape(seen)}</li>" for label, seen in d.seen.items())
                + "</ul>")

    def _draw(self, labels: list[str], comparison: Comparison) -> None:
        at = self._stream().absolute
        fig = make_subplots(rows=1, cols=len(labels), shared_yaxes=True, subplot_titles=labels,
                            horizontal_spacing=0.02)
        for col, label in enumerate(labels, start=1):
            result = comparison.results[label]
            for status in STATUSES:  # one colour per trace: a per-point colour list is slow to redraw
                fig.add_trace(go.Scattergl(x=[], y=[], mode="markers", name=STATUS_LABELS[status], showlegend=False,
                                           marker=dict(size=6, color=STATUS_COLORS[status]), hoverinfo="text+x+y"),
                              row=1, col=col)
            commits = result.watermarks.dropna(subset=["effective"]).drop_duplicates("time", keep="last")
            fig.add_trace(go.Scatter(x=plot_time(commits["time"], at), y=plot_time(commits["effective"].astype(float), at),
                                     mode="lines", line=dict(shape="hv", color="#E45756", dash="dash"),
                                     name="effective watermark", showlegend=False), row=1, col=col)
            fig.add_trace(go.Scatter(x=[], y=[], mode="markers", showlegend=False, name="highlight",
                                     marker=dict(size=18, symbol="circle-open", color="#d00", line=dict(width=3))),
                          row=1, col=col)
        fig.update_layout(height=380, margin=dict(l=50, r=10, t=70, b=40),
                          title=dict(text="each preset on the same stream (x arrival, y event time)", y=0.97,
                                     yanchor="top"))
        fig.update_xaxes(title_text="arrival (UTC)" if at else "arrival (s)", matches="x", type="date" if at else "linear")
        fig.update_yaxes(title_text="event time (UTC)" if at else "event time (s)", col=1, type="date" if at else "linear")
        with self.figure.batch_update():
            self.figure.data = ()
            self.figure.layout = fig.layout
            self.figure.add_traces(list(fig.data))
        arrival = self._stream().events["arrival_time"].to_numpy()
        self.show_range(int(arrival.min()), int(arrival.min()) + 20 * self._window_length(), keep=set())

    def _window_length(self) -> int:
        window = self._config().window
        return max(window.size, window.gap)

    def show_range(self, lo: int, hi: int, keep: set[str]) -> None:
        """Draw every preset's events that arrived in [lo, hi] (µs) and frame all panels on them: the small
        multiples show a stretch the eye can compare. Above COMPARE_POINTS events in the stretch, an even
        sample of them is drawn, and always the events whose ids are in ``keep`` (the one picked)."""
        if self.comparison is None:
            return
        traces = {status: [i for i, t in enumerate(self.figure.data) if t.name == STATUS_LABELS[status]]
                  for status in STATUSES}  # per status, one trace index per panel, in the panels' order
        updates, y_lo, y_hi = {}, None, None
        at = self._stream().absolute
        for panel, result in enumerate(self.comparison.results.values()):
            ev = result.events
            arrival = ev["arrival_time"].to_numpy()
            shown = _sample(ev[(arrival >= lo) & (arrival <= hi)], keep)
            y = plot_time(shown["event_time"].to_numpy(), at)
            status = shown["status"].to_numpy()
            for name, indexes in traces.items():
                part = shown[status == name]
                updates[indexes[panel]] = {"x": plot_time(part["arrival_time"].to_numpy(), at),
                                           "y": plot_time(part["event_time"].to_numpy(), at), "text": part["id"].tolist()}
            if len(y):
                y_lo = y.min() if y_lo is None else min(y_lo, y.min())
                y_hi = y.max() if y_hi is None else max(y_hi, y.max())
        layout = {"xaxis.range": [float(plot_time(lo, at)), float(plot_time(hi, at))]}
        if y_lo is not None:
            pad = (y_hi - y_lo) * 0.05 + float(plot_time(S, at))
            layout["yaxis.range"] = [y_lo - pad, y_hi + pad]
        send(self.figure, updates, layout)

    def _on_pick(self, change: dict[str, Any]) -> None:
        if change["new"] is None or self.comparison is None:
            return
        picked = self.examples[int(change["new"])]
        self.example.value = self._describe(picked)
        self.highlight(picked)

    def highlight(self, d: Disagreement) -> None:
        """Frame every panel on the disagreement and ring its events (or the window's) in each."""
        ev = self._stream().events
        if d.kind == "event":
            picked = ev[ev["id"] == d.event_id]
        else:
            picked = ev[(ev["key"] == d.key) & (ev["event_time"] >= d.start) & (ev["event_time"] < d.end)]
        if len(picked):
            margin = 5 * self._window_length()
            self.show_range(int(picked["arrival_time"].min()) - margin, int(picked["arrival_time"].max()) + margin,
                            keep=set(picked["id"]))
        rings = [i for i, t in enumerate(self.figure.data) if t.name == "highlight"]
        at = self._stream().absolute
        x, y = plot_time(picked["arrival_time"], at).tolist(), plot_time(picked["event_time"], at).tolist()
        send(self.figure, {i: {"x": x, "y": y} for i in rings})

    def box(self) -> W.Widget:
        return W.VBox([W.HBox([self.presets, W.VBox([self.button, self.message], layout=W.Layout(flex="1 1 0",
                                                                                                  min_width="0"))]),
                       self.plot.box, self.groups, self.disagreements, self.example])


def _sample(events: pd.DataFrame, keep: set[str]) -> pd.DataFrame:
    """At most COMPARE_POINTS events, evenly spread, plus every event whose id is in ``keep``."""
    if len(events) <= COMPARE_POINTS:
        return events
    chosen = np.zeros(len(events), dtype=bool)
    chosen[np.linspace(0, len(events) - 1, COMPARE_POINTS).astype(int)] = True
    chosen |= events["id"].isin(keep).to_numpy()
    return events[chosen]
