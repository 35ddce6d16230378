"""The delay histogram beside the two clocks: arrival − event time, the distribution the delay has to cover,
with its quantiles and a red line at the delay the controls set.

A part of its own because it changes at two moments only: a new stream redraws the bars (``show``, the
kernel's thread), and the controls coming to rest move the line (``mark_delay``, the settle timer's thread,
under the two clocks' lock, which ``ClocksView.forget`` takes before a new stream is shown).
"""

from __future__ import annotations

from typing import Any


from explorer.config import RunConfig, delay_of
from explorer.streams import Stream
from explorer.timeutil import MICROS
from explorer.ui.live_figure import LiveFigure
from explorer.ui.figures import delay_histogram, quantile_labels

S = MICROS["s"]


class DelayHistogram:
    """The histogram as a FigureWidget (``figure``), as wide as its box in the page (``fit_width``)."""

    def __init__(self) -> None:
        fig = LiveFigure()
        fig.add_bar(name="events", marker_color="#4C78A8", hovertemplate="delay %{x:.2f} s: %{y}<extra></extra>")
        # a log count axis: the tail the delay must cover is a few events per bin beside thousands at the head
        fig.update_layout(height=280, margin=dict(l=50, r=10, t=84, b=40),
                          title=dict(text="delay = arrival − event time", y=0.98, yanchor="top"),
                          xaxis_title="delay, s", yaxis=dict(type="log", title="events"), bargap=0, showlegend=False)
        self.figure = fig

    def show(self, stream: Stream) -> float:
        """Draw ``stream``'s delays, with a dotted line per quantile; returns its p99 (seconds)."""
        hist = delay_histogram(stream)
        with self.figure.batch_update():
            bars = self.figure.data[0]
            bars.x, bars.y, bars.width = hist.centers, hist.counts, hist.width
            self.figure.layout.shapes = [_vline(v, "#888", "dot") for v in hist.quantiles.values()] + [
                _vline(0.0, "#E45756", "solid")]
            self.figure.layout.annotations = [
                # each group a line higher than the last: labels as long as "p95 4 min 48 s" never touch
                dict(x=label.x, y=1, yref="paper", yshift=12 * i, text=label.text, showarrow=False,
                     yanchor="bottom", xanchor=label.anchor, align=label.anchor, font=dict(size=10))
                for i, label in enumerate(quantile_labels(hist))]
        return hist.quantiles["p99"]

    def mark_delay(self, config: RunConfig) -> None:
        """Move the red line to ``config``'s delay."""
        shapes = list(self.figure.layout.shapes)
        if shapes:
            shapes[-1] = _vline(delay_of(config) / S, "#E45756", "solid")
            self.figure.layout.shapes = shapes


def _vline(x: float, color: str, dash: str) -> dict[str, Any]:
    return dict(type="line", x0=x, x1=x, y0=0, y1=1, yref="paper", line=dict(color=color, dash=dash, width=2))
