"""A production Spark job explained in the explorer: its progress log drawn on a timeline, and, when the stream
shown is the job's events export, the ``spark`` preset's replay beside it (``explorer.spark``'s ``explain_job``,
the same as ``python -m explorer spark-log``).

The timeline's x axis is the wall clock the job ran on (each micro-batch's trigger time). Three rows share it:
Spark's watermark (with the max event time it had seen, and the replay's watermark where there is one), each
micro-batch's duration, and ``numRowsDroppedByWatermark`` (with the replay's late (key, window) groups, which
is what that count counts).
"""

from __future__ import annotations

import html
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.config import RunConfig, delay_of, preset
from explorer.errors import InputError
from explorer.streams import Stream
from explorer.ui.live_figure import FigureOnDemand, LiveFigure
from explorer.ui.figures import plot_time
from explorer.ui.words import plural

if TYPE_CHECKING:  # the Spark package is imported when a log is read, not with the explorer
    from explorer.spark import BatchProgress, JobExplanation

SPARK_COLOR, REPLAY_COLOR = "#E45756", "#4C78A8"


def job_timeline(progress: list[BatchProgress], explanation: JobExplanation | None = None,
                 absolute: bool = True) -> go.Figure:
    """The log's micro-batches over the wall clock: watermark, duration, rows dropped; the replay beside them
    when ``explanation`` (a JobExplanation) is given. ``absolute``: the data's times are wall-clock (date axis)."""
    started = plot_time([p.started for p in progress], True)
    figure = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06, row_heights=[0.5, 0.25, 0.25],
                           subplot_titles=("watermark (event time)", "micro-batch duration, s",
                                           "rows dropped by the watermark"))
    batch_ids = [p.batch_id for p in progress]

    def event_time(values: list[int | None]) -> np.ndarray:
        return np.array([np.nan if v is None else float(plot_time(v, absolute)) for v in values])

    figure.add_scatter(x=started, y=event_time([p.watermark for p in progress]), name="Spark's watermark",
                       mode="lines+markers", line=dict(shape="hv", color=SPARK_COLOR), customdata=batch_ids,
                       hovertemplate="micro-batch %{customdata}<extra>Spark's watermark</extra>", row=1, col=1)
    figure.add_scatter(x=started, y=event_time([p.event_time_max for p in progress]), name="max event time seen",
                       mode="lines", line=dict(shape="hv", color="#999", dash="dot"), customdata=batch_ids,
                       hovertemplate="micro-batch %{customdata}<extra>max event time</extra>", row=1, col=1)
    figure.add_bar(x=started, y=[p.duration_ms / 1000 for p in progress], name="duration", marker_color="#999",
                   customdata=[[p.batch_id, p.input_rows] for p in progress], showlegend=False,
                   hovertemplate="micro-batch %{customdata[0]}: %{customdata[1]} rows in %{y:.3f} s<extra></extra>",
                   row=2, col=1)
    figure.add_bar(x=started, y=[p.dropped for p in progress], name="dropped (Spark)", marker_color=SPARK_COLOR,
                   customdata=batch_ids, hovertemplate="micro-batch %{customdata}: %{y} rows<extra>Spark</extra>",
                   row=3, col=1)
    if explanation is not None:
        replayed = [b for b in explanation.batches if b.replayed]
        at = plot_time([b.progress.started for b in replayed], True)
        figure.add_scatter(x=at, y=event_time([b.watermark or 0 for b in replayed]), name="replay's watermark",
                           mode="markers", marker=dict(symbol="circle-open", size=9, color=REPLAY_COLOR,
                                                       line=dict(width=2)),
                           customdata=[b.progress.batch_id for b in replayed],
                           hovertemplate="micro-batch %{customdata}<extra>the spark preset's replay</extra>",
                           row=1, col=1)
        figure.add_scatter(x=at, y=[b.dropped_groups for b in replayed], name="late (key, window) in the replay",
                           mode="markers", marker=dict(symbol="diamond-open", size=10, color=REPLAY_COLOR,
                                                       line=dict(width=2)),
                           text=[", ".join(b.dropped_ids[:8]) + (" …" if len(b.dropped_ids) > 8 else "")
                                 for b in replayed],
                           hovertemplate="%{y} groups: %{text}<extra>the replay's late events</extra>", row=3, col=1)
    figure.update_layout(height=560, margin=dict(l=60, r=10, t=80, b=40), legend=dict(orientation="h", y=-0.12),
                         bargap=0.1, title=dict(text="the job's micro-batches, from its progress log", y=0.98,
                                                yanchor="top"))
    figure.update_xaxes(type="date", row=3, col=1, title_text="when the micro-batch started (UTC)")
    figure.update_yaxes(type="date" if absolute else "linear", row=1, col=1)
    return figure


class JobLogPanel:
    """Upload a job's progress log; see it on a timeline, and, if the stream shown is the job's events export (a
    batch column holding Spark's batchId), the spark preset's replay micro-batch by micro-batch, with the delay
    that would have kept the target. Window and delay come from the controls, as for Compare."""

    INTRO = ("<i>Upload a Structured Streaming job's progress log (JSON lines of query.lastProgress, or Spark's event "
             "log) to draw its micro-batches on a timeline. "
             "With the job's events export as the stream (its batch column holding Spark's batchId), the spark "
             "preset replays it beside the log, with the window and delay of the controls.</i>")

    def __init__(self, stream: Callable[[], Stream], config: Callable[[], RunConfig], target: Callable[[], float],
                 figure_made: Callable[[LiveFigure], None] = lambda figure: None):
        self._stream, self._config, self._target = stream, config, target
        self.upload = W.FileUpload(accept="", multiple=False, description="progress log")
        self.message = W.HTML(self.INTRO)
        self.table = W.HTML()
        self.replay = W.Button(description="replay the stream shown beside it", icon="refresh", disabled=True,
                               layout=W.Layout(width="auto"))
        self.plot = FigureOnDemand(figure_made)  # made and shown when a log is read
        self.progress: list[BatchProgress] = []  # the log's records
        self.name = ""  # the log file's name
        self.explanation: JobExplanation | None = None
        self.upload.observe(self._on_file, names="value")
        self.replay.on_click(lambda _b: self.draw(replay=True))

    @property
    def figure(self) -> LiveFigure:
        """The log's figure (made on first use: ``live_figure.FigureOnDemand``)."""
        return self.plot.figure()

    def forget(self) -> None:
        """The stream changed: a replay beside the log was the old stream's; the log alone stays (replaying the
        new stream is a button away: on a big stream it takes a while, and loading a stream should not)."""
        if self.progress:
            self.draw(replay=False)

    def _on_file(self, change: dict[str, Any]) -> None:
        files = change["new"]
        if not files:
            return
        upload = files[0]
        from explorer.spark import read_progress_log

        with tempfile.TemporaryDirectory(prefix="wx-log-") as where:
            path = Path(where) / Path(upload["name"]).name
            path.write_bytes(bytes(upload["content"]))
            try:
                self.progress = read_progress_log(path)
            except InputError as error:
                self.progress = []
                self.message.value = (f"<span style='color:#a00'>"
                                      f"{html.escape(str(error).replace(str(path), upload['name']))}</span>")
                return
        self.name = upload["name"]
        self.replay.disabled = False
        self.draw(replay=True)

    def draw(self, replay: bool) -> None:
        """Draw the log; with ``replay``, read it against the stream shown (if it is the job's export) too."""
        from explorer.spark import explain_job, format_explanation, format_log

        stream, config = self._stream(), self._config()
        self.explanation = None
        said = f"{self.name}: {plural(len(self.progress), 'micro-batch', 'micro-batches')}"
        if not replay:
            said += "; the stream changed: replay it beside the log with the button"
        elif stream.has_batch or stream.has_offset:
            spark_config = replace(preset("spark", delay=delay_of(config)), window=config.window)
            try:
                self.explanation = explain_job(self.progress, stream, spark_config, self._target())
            except InputError as error:
                said += f"; the stream shown is not this job's export ({error})"
        else:
            said += ("; load the job's events export (with its batch column, or a Kafka export's partition and "
                     "offset) to see the events behind the counts")
        self.message.value = html.escape(said)
        text = format_explanation(self.explanation, stream.absolute) if self.explanation else format_log(self.progress)
        self.table.value = f"<pre style='font-size:11px;line-height:1.3'>{html.escape(text)}</pre>"
        drawn = job_timeline(self.progress, self.explanation, stream.absolute if self.explanation else True)
        with self.figure.batch_update():
            self.figure.data = ()
            self.figure.layout = drawn.layout
            self.figure.add_traces(list(drawn.data))

    def box(self) -> W.Widget:
        return W.VBox([W.HBox([self.upload, self.replay, self.message], layout=W.Layout(flex_flow="row wrap")),
                       self.plot.box, self.table])
