"""The explorer: controls on the left, the two clocks in the middle, the evidence around them.

Figures are FigureWidgets whose traces are created once; a control change takes the Result from the local
core (usually computed ahead, see ``prefetch.py``) and swaps the traces' arrays in one message per frame
(``figures.send``). The completeness–latency sweep runs on a background thread so a slider never waits for it.
"""

from __future__ import annotations

import html
import os
import threading
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from explorer.budget import available_bytes
from explorer.config import RunConfig, delay_of, preset
from explorer.core import Result, run
from explorer.errors import InputError
from explorer.streams import GENERATORS, Stream, generate, load_events
from explorer.timeutil import MICROS, human_duration
from explorer.ui.controls import Controls
from explorer.ui.job_log_panel import JobLogPanel
from explorer.ui.panels import ComparePanel, ExportPanel, SparkPanel
from explorer.ui.figures import (POINT_BUDGET, ALL_KEYS, plot_time, REASON_COLORS, REASON_LABELS, REASON_SYMBOLS, STATUS_COLORS,
                                 STATUS_LABELS, STATUSES, TwoClocks, compact, delay_histogram, follow_page_zoom, quantile_labels,
                                 send,
                                 scripted_marks, two_clocks, watermark_steps)
from explorer.ui.page_frames import ClocksUpdate, PageFrames, mirror
from explorer.ui.inspector import explain_event, explain_window
from explorer.ui.prefetch import Prefetcher
from explorer.ui.sweep import Sweep
from explorer.ui.upload_form import UploadForm

S = MICROS["s"]
# While a control moves, draw at most this many events (every late one first, and the figure says so); the
# full budget follows once the controls rest. In headless Chromium, without a GPU, redrawing 20k WebGL
# points takes most of a slider step.
INTERACTIVE_BUDGET = 5_000
SETTLE_SECONDS = 0.5
PREVIEW_LINE = "the preview's effective watermark"
# Frames kept when the explorer computes ahead: the one shown, two steps ahead and one back along the slider
# that moved, and the delay's two neighbours.
FRAMES_AHEAD = 6
# What one kept frame holds per event (a Result and its light two-clocks frame): 112 MB at 1M events, measured
# with tracemalloc; computing one peaks near 380 bytes per event.
FRAME_BYTES_PER_EVENT = 120
COMPUTE_BYTES_PER_EVENT = 400


def frames_to_keep(events: int) -> int:
    """FRAMES_AHEAD when they (and one being computed) fit in a quarter of the memory free now, else only the
    frame shown: a million events takes about 0.8 GB of 23 GB free on this project's machine."""
    needed = events * (FRAMES_AHEAD * FRAME_BYTES_PER_EVENT + COMPUTE_BYTES_PER_EVENT)
    free = available_bytes() or os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return FRAMES_AHEAD if needed <= free / 4 else 1


UPLOAD = "(uploaded file)"
INSPECTOR_HINT = "<i>Click an event or a window marker to see why.</i>"
# side by side where the page is wide, one under the other at 1280 px or beside JupyterLab's sidebar
SIDE_FIGURE_WIDTH = 440


@dataclass
class Frame:
    """A Result and its light two-clocks frame for one key filter: what a slider step draws."""

    result: Result
    light: TwoClocks
    key: str


class Explorer:
    """``Explorer(stream_or_path_or_generator_name, preset="voltsp")``; display it in a notebook cell."""

    def __init__(self, stream: Stream | str | Path = "textbook", preset_name: str = "voltsp",
                 config: RunConfig | None = None):
        self.stream = self._resolve(stream)
        self.result: Result | None = None
        self._beside: Result | None = None  # the preview, beside a Result computed elsewhere (show_result)
        self.last_update_ms = 0.0
        self._quiet = False
        self._rows: dict[str, np.ndarray] = {}  # per clickable trace: the Result row of each drawn point
        self._sent_title = ""  # as last sent: an unchanged title is not resent
        self._draw_lock = threading.RLock()  # the settle timer draws from its own thread
        self._settle_timer: threading.Timer | None = None
        self._frames: Prefetcher[Frame] | None = None
        self._frame: Frame | None = None  # the frame self.result came in, with its light two-clocks data
        self._moving: tuple[str, int] = ("delay", 1)  # the slider that moved last and its direction
        self._prefetch_wanted = False
        self.figure_note = ""
        self.controls = Controls()
        self.message = W.HTML()
        self._saying_error = False  # the message is an error the next good refresh clears (else a note that stays)
        self.cards = W.HTML()
        self.inspector = W.HTML(INSPECTOR_HINT,
                                layout=W.Layout(min_height="8em"))
        self.key = W.Dropdown(options=[ALL_KEYS], value=ALL_KEYS, description="key", layout=W.Layout(width="22em"))
        self.batch = W.IntSlider(value=1, min=1, max=1, description="up to batch", continuous_update=True,
                                 layout=W.Layout(width="36em"))
        self.play = W.Play(value=1, min=1, max=1, interval=400, description="replay")
        W.jslink((self.play, "value"), (self.batch, "value"))
        self.sweep = Sweep(self._settings, self._set_delay, SIDE_FIGURE_WIDTH)
        self.spark_panel = SparkPanel(lambda: self.stream, self.controls.config, lambda: self.result, self.show_result,
                                      self.sweep, lambda: self.controls.delay.max)
        self.compare_panel = ComparePanel(lambda: self.stream, self.controls.config)
        self.job_log_panel = JobLogPanel(lambda: self.stream, self.controls.config,
                                         lambda: self.sweep.target.value / 100)
        self.export_panel = ExportPanel(self.controls.config, lambda: self.stream)
        self._build_data_picker()
        self.clocks = self._clocks_figure()
        self._stream_generation = 0  # part of every frame request: frames of an earlier stream never match
        self._request: tuple[int, RunConfig, str] | None = None  # what the two clocks show (or are about to)
        self.page_frames = PageFrames([getattr(self.controls, name) for name in self.controls.SLIDERS],
                                      self.controls.all + [self.key, self.batch], self.clocks,
                                      on_drawn=self._on_page_drawn, on_missed=self._on_page_missed)
        self.clocks.observe(self._on_page_drew, names="_js2py_traceDeltas")  # plotly 7's page → kernel report
        follow_page_zoom(self.clocks)
        self.histogram = self._histogram_figure()
        self.controls.show(config or preset(preset_name))
        self._wire()
        if self.stream.name in GENERATORS:
            self.source.value = self.stream.name
        self._load_stream(self.stream, reset=True)

    # --- data -----------------------------------------------------------------------------------
    @staticmethod
    def _resolve(stream: Stream | str | Path) -> Stream:
        if isinstance(stream, Stream):
            return stream
        if isinstance(stream, str) and stream in GENERATORS:
            return generate(stream)
        return load_events(stream)

    def _build_data_picker(self) -> None:
        self.source = W.Dropdown(options=list(GENERATORS) + [UPLOAD], value=None, description="stream",
                                 layout=W.Layout(width="22em"))
        self.seed = W.IntText(value=7, description="seed", layout=W.Layout(width="12em"))
        self.size = W.IntText(value=20000, description="events", layout=W.Layout(width="14em"))
        self.load_button = W.Button(description="load", icon="refresh")
        self.upload_form = UploadForm(on_stream=lambda stream: self._load_stream(stream, reset=True), say=self._say)

    def _on_source(self, change=None) -> None:
        self.upload_form.show(self.source.value == UPLOAD)

    def _on_load(self, _button=None) -> None:
        name = self.source.value
        if name in (None, UPLOAD):
            return
        import inspect
        accepted = inspect.signature(GENERATORS[name].make).parameters
        options = {k: v for k, v in (("seed", self.seed.value), ("events", self.size.value)) if k in accepted}
        try:
            self._load_stream(generate(name, **options), reset=True)
        except InputError as exc:
            self._say(str(exc))

    def _load_stream(self, stream: Stream, reset: bool) -> None:
        self.stream = stream
        self._forget_stream()
        self.page_frames.clear()
        if self._frames is not None:
            self._frames.clear()
        # computing ahead keeps the frame shown, two ahead and one back, and the delay's two neighbours when
        # another slider moved last; otherwise only the frame shown
        self._frames = Prefetcher(partial(_make_frame, stream), size=frames_to_keep(len(stream.events)))
        keys = stream.keys
        self._quiet = True
        try:
            self.key.options = [ALL_KEYS] + (keys if len(keys) > 1 or keys != [""] else [])
            self.key.value = ALL_KEYS
            hist = delay_histogram(stream)
            self._delay_p99 = hist.quantiles["p99"]
            top = max(10.0, np.ceil(self._delay_p99 * 1.5))
            for slider in (self.controls.delay, self.controls.allowed):
                slider.max = float(top)
            with self.histogram.batch_update():
                bars = self.histogram.data[0]
                bars.x, bars.y, bars.width = hist.centers, hist.counts, hist.width
                self.histogram.layout.shapes = [self._vline(v, "#888", "dot") for v in hist.quantiles.values()] + [
                    self._vline(0.0, "#E45756", "solid")]
                self.histogram.layout.annotations = [
                    # each group a line higher than the last: labels as long as "p95 4 min 48 s" never touch
                    dict(x=label.x, y=1, yref="paper", yshift=12 * i, text=label.text, showarrow=False,
                         yanchor="bottom", xanchor=label.anchor, align=label.anchor, font=dict(size=10))
                    for i, label in enumerate(quantile_labels(hist))]
        finally:
            self._quiet = False
        self._time_axes(stream.absolute)
        self.refresh(reset_stepper=reset)

    def _forget_stream(self) -> None:
        """Everything derived from the stream shown until now goes, or says it is being computed anew: the
        inspector's event, Spark's badge, the comparison, the curve and the target's suggestion."""
        self.sweep.forget()
        self._stream_generation += 1
        self.inspector.value = INSPECTOR_HINT
        self.spark_panel.forget()
        self.compare_panel.forget()
        self.job_log_panel.forget()

    # --- figures --------------------------------------------------------------------------------
    def _time_axes(self, absolute: bool) -> None:
        """Wall-clock streams get date axes and date-time hover text (coordinates in ms since 1970, which is what
        Plotly's date axes read); relative ones, seconds."""
        at = "%{x|%Y-%m-%d %H:%M:%S.%L}" if absolute else "%{x:.2f} s"
        happened = "%{y|%Y-%m-%d %H:%M:%S.%L}" if absolute else "%{y:.2f} s"
        unit = " (UTC)" if absolute else ", s"
        with self.clocks.batch_update():  # (the axes' type goes with their range: _frame_view)
            self.clocks.layout.xaxis.title.text = f"arrival (processing) time{unit}"
            self.clocks.layout.yaxis.title.text = f"event time{unit}"
            for name in STATUSES:
                self.clocks.data[self._trace(name)].hovertemplate = (
                    f"arrival {at}<br>event {happened}<extra>event (click to inspect)</extra>")
            for name, what in (("watermark", "watermark"), ("effective", "effective watermark")):
                self.clocks.data[self._trace(name)].hovertemplate = f"%{{text}}: {happened} at arrival {at}<extra>{what}</extra>"
            self.clocks.data[self._trace("scripted")].hovertemplate = (
                f"{happened} at arrival {at}<extra>watermark row of the input</extra>")
            self.clocks.data[self._trace("preview")].hovertemplate = (
                f"{happened} at arrival {at}<extra>the preview's effective watermark</extra>")

    def _clocks_figure(self) -> go.FigureWidget:
        fig = go.FigureWidget()
        fig.add_scatter(name="ideal (event = arrival)", mode="lines", line=dict(color="#bbb", dash="dot"),
                        hoverinfo="skip")
        # outlines, not fills: filling 1,000 WebGL polygons made every redraw ~5× slower in the browser
        fig.add_scattergl(name="windows", mode="lines", line=dict(color="rgba(76,120,168,0.45)", width=1),
                          hoverinfo="skip")
        # one WebGL trace per status, each one colour: a per-point colour array costs Plotly a colour parse per
        # point on every redraw (about 300 ms for 20k events in the browser, far more than sending positions)
        for name in STATUSES:
            fig.add_scattergl(name=STATUS_LABELS[name], mode="markers",
                              marker=dict(color=STATUS_COLORS[name], size=6, opacity=0.8),
                              hovertemplate="arrival %{x:.2f}<br>event %{y:.2f}<extra>event (click to inspect)</extra>")
        # the watermark lines in SVG: two WebGL step lines of 1,500 steps kept Chromium's software GL busy for
        # 80–130 ms per frame (SVG: ~5 ms); SVG draws under the WebGL markers, which hide little of a step line
        whose = "%{text}: %{y:.2f} s at arrival %{x:.2f} s<extra>"  # with one line per key, the key
        fig.add_scatter(name="watermark", mode="lines", line=dict(color="#222", shape="hv", width=2),
                        hovertemplate=whose + "watermark</extra>")
        fig.add_scatter(name="effective watermark", mode="lines", line=dict(color="#E45756", shape="hv", dash="dash"),
                        hovertemplate=whose + "effective watermark</extra>")
        for reason, label in REASON_LABELS.items():
            fig.add_scattergl(name=label, mode="markers", hovertemplate="%{text}<extra>emitted</extra>",
                              marker=dict(color=REASON_COLORS[reason], symbol=REASON_SYMBOLS[reason], size=10,
                                          line=dict(width=1, color="#222")))
        # the input's own watermark rows (kind = watermark): what the scripted strategy follows, or a logged one
        fig.add_scattergl(name="watermark rows (input)", mode="markers",
                          marker=dict(color="#222", symbol="triangle-right", size=9),
                          hovertemplate="%{y:.2f} s at arrival %{x:.2f} s<extra>watermark row of the input</extra>")
        # beside a Result computed elsewhere (Spark's): the preview's effective watermark, where the two may part
        fig.add_scatter(name=PREVIEW_LINE, mode="lines", showlegend=False,
                        line=dict(color="#4C78A8", shape="hv", dash="dot", width=3),
                        hovertemplate="%{y:.2f} s at arrival %{x:.2f} s<extra>the preview's effective watermark</extra>")
        fig.update_layout(height=560, margin=dict(l=60, r=20, t=72, b=50), title="The two clocks",
                          xaxis_title="arrival (processing) time, s", yaxis_title="event time, s",
                          legend=dict(orientation="h", y=-0.15), hovermode="closest", uirevision="keep")
        fig.update_layout(legend_itemclick=False, legend_itemdoubleclick=False)
        for name in STATUSES:
            fig.data[self._trace(name)].on_click(partial(self._on_event_click, name))
        for reason in REASON_LABELS:
            fig.data[self._trace(reason)].on_click(partial(self._on_window_click, reason))
        return fig

    @staticmethod
    def _trace(name: str) -> int:
        order = ["diagonal", "bands", *STATUSES, "watermark", "effective", *REASON_LABELS, "scripted", "preview"]
        return order.index(name)

    def _histogram_figure(self) -> go.FigureWidget:
        fig = go.FigureWidget()
        fig.add_bar(name="events", marker_color="#4C78A8", hovertemplate="delay %{x:.2f} s: %{y}<extra></extra>")
        # a log count axis: the tail the delay must cover is a few events per bin beside thousands at the head
        fig.update_layout(height=280, width=SIDE_FIGURE_WIDTH, margin=dict(l=50, r=10, t=84, b=40),
                          title=dict(text="delay = arrival − event time", y=0.98, yanchor="top"),
                          xaxis_title="delay, s", yaxis=dict(type="log", title="events"), bargap=0, showlegend=False)
        return fig

    @staticmethod
    def _vline(x: float, color: str, dash: str) -> dict:
        return dict(type="line", x0=x, x1=x, y0=0, y1=1, yref="paper", line=dict(color=color, dash=dash, width=2))

    # --- wiring ---------------------------------------------------------------------------------
    def _wire(self) -> None:
        for widget in self.controls.all:
            if widget is not self.controls.preset:
                widget.observe(self._on_control, names="value")
        self.controls.preset.observe(self._on_preset, names="value")
        self.key.observe(lambda _: self._draw(), names="value")
        self.batch.observe(lambda _: self._draw(), names="value")
        self.source.observe(self._on_source, names="value")
        self.load_button.on_click(self._on_load)

    def _on_control(self, change=None) -> None:
        if self._quiet:
            return
        slider = self.controls.slider_name(change["owner"]) if change else None
        if slider is not None:
            self._moving = (slider, 1 if change["new"] >= change["old"] else -1)
        self.refresh()

    def _on_preset(self, change) -> None:
        if self._quiet:
            return
        current = self.controls.config()
        self._quiet = True
        try:
            self.controls.show(replace(preset(change["new"], delay=delay_of(current)), window=current.window))
        finally:
            self._quiet = False
        self.refresh()

    # --- computing and drawing ------------------------------------------------------------------
    def refresh(self, reset_stepper: bool = False) -> None:
        """Recompute the Result for the controls and redraw (the slider path)."""
        start = time.perf_counter()
        try:
            config = self.controls.config()
            self.sweep.settings_changed(self.stream, config)
            self._frame = self._frames.get((config, self.key.value))
            self.result = self._frame.result
            self._set_beside(None)
            request = (self._stream_generation, config, self.key.value)
        except InputError as exc:
            self._say(str(exc))
            return
        self._clear_error()  # the settings work now; a note (what a file was read as) stays
        last_batch = int(self.result.events["batch"].max())
        follow = reset_stepper or self.batch.value >= self.batch.max
        self._quiet = True
        try:
            self.batch.max = self.play.max = last_batch
            if follow:
                self.batch.value = last_batch
        finally:
            self._quiet = False
        page_drew = not reset_stepper and self._page_holds(request)
        self._request = request
        if reset_stepper:
            self._frame_view(config)
            self._draw()
            self._side_figures(config)
        else:  # a control moved: a light frame now; every point and the side figures once the controls rest
            if not page_drew:  # else the page drew it itself, and says so (_on_page_drawn)
                self._draw(budget=INTERACTIVE_BUDGET)
            self._settle(config)
        self._cards()
        self.export_panel.refresh()
        self.last_update_ms = (time.perf_counter() - start) * 1000
        if page_drew:
            self.prefetch_neighbours()
        else:
            self._prefetch_wanted = True  # once the page has drawn this frame: computing ahead now would slow it

    def _page_holds(self, request: tuple[int, RunConfig, str]) -> bool:
        """Whether the page held this step's frame when the slider moved, and so drew it (page_frames.py)."""
        return self.batch.value >= self.batch.max and self.page_frames.holds(request)

    def _on_page_drawn(self, request: tuple[int, RunConfig, str], update: ClocksUpdate) -> None:
        """The page drew a frame it held: the Python figure mirrors it (page_frames.mirror)."""
        with self._draw_lock:
            mirror(self.clocks, update)
            self._sent_title = update.title
            self._rows.update(update.rows)
            self.figure_note = update.note
            if request != self._request:  # a control changed in the kernel meanwhile (a preset)
                self._draw(budget=INTERACTIVE_BUDGET)

    def _on_page_missed(self, request: tuple[int, RunConfig, str]) -> None:
        """The page held the frame but could not draw it: send it after all."""
        if request == self._request:
            self._draw(budget=INTERACTIVE_BUDGET)

    def _push_page_frame(self, slider: str, value: float, request: tuple[int, RunConfig, str], frame: Frame) -> None:
        """Hand a frame computed ahead to the page if it is still one slider step from the controls (this runs
        on the prefetch thread, so they may have moved meanwhile)."""
        try:
            still_near = request == (self._stream_generation, self.controls.config(**{slider: value}), self.key.value)
        except InputError:
            return
        if still_near and self.batch.value >= self.batch.max and not self.page_frames.holds(request):
            self.page_frames.push(request, getattr(self.controls, slider), value,
                                  self._clocks_update(frame.result, frame.light, None))

    def wait_for_prefetch(self, timeout: float = 30.0) -> None:
        """Block until the frames computed ahead are ready (tests and benchmarks only)."""
        self._frames.wait(timeout)

    def _computes_ahead(self) -> bool:
        return self._frames.size > 1

    def _on_page_drew(self, change) -> None:
        """Plotly's widget reports its trace deltas once the page has drawn an update."""
        if change["new"] and self._prefetch_wanted:
            self.prefetch_neighbours()

    def prefetch_neighbours(self) -> None:
        """Start computing where the slider that moved last will go next (see ``prefetch.py``). The page's
        report that it drew the frame calls this; scripts and benchmarks without a page may call it."""
        self._prefetch_wanted = False
        if not self._computes_ahead():
            return
        slider, direction = self._moving
        steps = [(slider, value) for value in self.controls.neighbours(slider, direction)]
        if slider != "delay":  # and the delay's neighbours, the slider most moved
            steps += [("delay", value) for value in self.controls.neighbours("delay", steps=(1, -1))]
        key = self.key.value
        try:
            requests = [(name, value, self.controls.config(**{name: value})) for name, value in steps]
        except InputError:
            return
        self._frames.prefetch((config, key) for _, _, config in requests)
        for name, value, config in requests:  # each to the page once computed (page_frames.py)
            self._frames.when_ready((config, key), partial(self._push_page_frame, name, value,
                                                           (self._stream_generation, config, key)))

    def show_result(self, result: Result, beside: Result | None = None) -> None:
        """Draw a Result computed elsewhere (Spark's) in place of the preview, for the same stream and settings;
        ``beside`` (the preview's) keeps its effective watermark in the figure as a dotted line, so where the two
        watermarks part is seen, not only said. The next preview drawn clears it."""
        self.result = result
        self._set_beside(beside)
        self._draw()
        self._cards()

    def _set_beside(self, beside: Result | None) -> None:
        if beside is not self._beside:
            self._beside = beside
            self.clocks.data[self._trace("preview")].showlegend = beside is not None

    def _frame_view(self, config: RunConfig) -> None:
        """Open on a readable stretch (about 20 windows) of a long stream; zoom out to see it all."""
        ev = self.result.events
        at = self.stream.absolute
        arrival, event_time = plot_time(ev["arrival_time"].to_numpy(), at), plot_time(ev["event_time"].to_numpy(), at)
        window = float(plot_time(max(config.window.size, config.window.gap), at))
        lo = float(min(arrival.min(), event_time.min()))
        span = max(20 * window, 5 * float(plot_time(self._delay_p99 * S, at)))
        kind = "date" if at else "linear"
        # one message, the axes' type with their range: sent apart, the page kept a date axis linear when a
        # wall-clock file replaced a relative stream (its ticks read "1.7951652T")
        view = {"uirevision": f"stream-{self._stream_generation}",  # a new stream resets the user's zoom
                "xaxis.type": kind, "yaxis.type": kind}
        if float(max(arrival.max(), event_time.max())) - lo > 1.5 * span:
            view.update({"xaxis.range": [lo, lo + span], "yaxis.range": [lo - span * 0.1, lo + span]})
        else:
            view.update({"xaxis.autorange": True, "yaxis.autorange": True, "xaxis.range": None, "yaxis.range": None})
        self.clocks.plotly_relayout(view)

    def _settle(self, config: RunConfig) -> None:
        """Once no control has moved for SETTLE_SECONDS: redraw with the full point budget, and move the
        histogram's delay line and the curve's marker (or start a new sweep). Each of those is a full Plotly
        redraw of its figure in the page (~50 ms there); done on every step, they delayed the next frames of
        the two clocks, and a sweep started for every step of a slider only to be thrown away."""
        if self._settle_timer is not None:
            self._settle_timer.cancel()
        result = self.result

        def full() -> None:
            with self._draw_lock:
                if self.result is result:  # nothing newer was drawn meanwhile
                    self._draw()
                    self._side_figures(config)

        self._settle_timer = threading.Timer(SETTLE_SECONDS, full)
        self._settle_timer.daemon = True
        self._settle_timer.start()

    def wait_until_settled(self, timeout: float = 10.0) -> None:
        """Block until the full redraw after the last control change is done (tests and scripts only)."""
        timer = self._settle_timer
        if timer is not None:
            timer.join(timeout)

    def _draw(self, budget: int = POINT_BUDGET) -> None:
        if self.result is None or self._quiet:
            return
        with self._draw_lock:
            self._draw_now(budget)

    def _draw_now(self, budget: int) -> None:
        upto = self.batch.value if self.batch.value < self.batch.max else None
        frame = self._frame
        if (budget == INTERACTIVE_BUDGET and upto is None and frame is not None and frame.result is self.result
                and frame.key == self.key.value):
            data = frame.light  # computed with the Result, perhaps ahead of time
        else:
            data = two_clocks(self.result, key=self.key.value, upto_batch=upto, budget=budget,
                              hover=budget != INTERACTIVE_BUDGET)
        update = self._clocks_update(self.result, data, upto)
        self._rows.update(update.rows)
        self.figure_note = update.note
        # one redraw per frame; an unchanged title is not resent
        send(self.clocks, update.traces, {"title.text": update.title} if update.title != self._sent_title else None)
        self._sent_title = update.title

    def _clocks_update(self, result: Result, data: TwoClocks, upto: int | None) -> ClocksUpdate:
        """The arrays and title of one two-clocks frame, as the kernel sends them or the page keeps them."""
        t = self._trace
        scope = "per key" if result.config.time.scope.value == "key" else result.config.time.scope.value
        title = f"The two clocks — {self.stream.name}, {result.config.window}, watermark {scope}"
        if upto is not None:
            title += f", up to batch {upto}"
        # the second line, small: who computed it (a long first line ran past a 1280 px page) and what the
        # figure leaves out (in the title: a new annotation makes Plotly lay it all out again)
        below = [f"<span style='color:#444'>computed by {result.engine}</span>"] if result.engine != "local" else []
        if data.note:
            below.append(f"<span style='color:#a00'>{html.escape(data.note)}</span>")
        if below:
            title += f"<br><span style='font-size:11px'>{'; '.join(below)}</span>"
        # a frame drawn while a control moves is not read closely: no hover text, positions in float32 if exact enough
        light = not data.hover
        position = compact if light else np.asarray
        lines = {t("diagonal"): data.diagonal, t("bands"): data.bands, t("watermark"): data.watermark,
                 t("effective"): data.effective}
        traces = {i: {"x": position(x), "y": position(y), "text": None} for i, (x, y) in lines.items()}
        if not light:  # whose watermark each step is, for the hover
            for name in ("watermark", "effective"):
                traces[t(name)]["text"] = data.watermark_owners
        rows = {}
        for name, points in data.events.items():
            traces[t(name)] = {"x": position(points.x), "y": position(points.y), "text": None}
            rows[name] = points.rows
        for reason, markers in data.emissions.items():
            traces[t(reason)] = {"x": position(markers.x), "y": position(markers.y), "text": markers.text}
            rows[reason] = markers.rows
        x, y = scripted_marks(self.stream, result, upto)
        traces[t("scripted")] = {"x": position(x), "y": position(y), "text": None}
        x, y = np.array([]), np.array([])
        if result.engine != "local" and self._beside is not None:
            _, (x, y), _ = watermark_steps(self._beside, self.key.value, upto)
        traces[t("preview")] = {"x": position(x), "y": position(y), "text": None}
        return ClocksUpdate(traces, title, rows, data.note)

    def _cards(self) -> None:
        m = self.result.metrics
        lat = m.latency_event

        def card(label: str, value: str) -> str:
            return (f"<div style='border:1px solid #ddd;border-radius:6px;padding:4px 10px;margin:2px;min-width:7em'>"
                    f"<div style='font-size:11px;color:#666'>{label}</div><div style='font-size:18px'>{value}</div></div>")

        def fmt(seconds: float | None) -> str:
            return human_duration(None if seconds is None else seconds * S)

        self.cards.value = "<div style='display:flex;flex-wrap:wrap'>" + "".join([
            card("completeness", f"{m.completeness:.2%}"), card("dropped", f"{m.dropped:,}"),
            card("side output", f"{m.side_output:,}"), card("late, updated", f"{m.late_updated:,}"),
            card("updates", f"{m.updates:,}"), card("latency p50", fmt(lat.p50)), card("latency p95", fmt(lat.p95)),
            card("most windows open", f"{m.max_open_windows:,}"), card("still open at end", f"{m.end_of_stream:,}"),
        ] + ([card("partly dropped (no side output)", f"{m.partly_dropped:,}")] if m.partly_dropped else [])) + "</div>"

    def _side_figures(self, config: RunConfig) -> None:
        self._mark_delay(config)
        self.sweep.follow(self.stream, config, self.result, self.controls.delay.max)

    def _mark_delay(self, config: RunConfig) -> None:
        shapes = list(self.histogram.layout.shapes)
        if shapes:
            shapes[-1] = self._vline(delay_of(config) / S, "#E45756", "solid")
            self.histogram.layout.shapes = shapes

    # --- the completeness–latency curve (sweep.py) ----------------------------------------------
    def _settings(self) -> tuple[Stream, RunConfig] | None:
        try:
            return self.stream, self.controls.config()
        except InputError:
            return None

    def _set_delay(self, micros: int) -> None:
        """Move the delay slider to the first of its steps at or above ``micros``, widening its range if needed."""
        slider = self.controls.delay
        value = float(np.ceil(round(micros / S / slider.step, 9)) * slider.step)
        if value > slider.max:
            slider.max = float(np.ceil(value))
        slider.value = value

    def wait_for_suggestion(self, timeout: float = 60.0) -> None:
        """Block until the target's suggestion is computed (for tests and scripts)."""
        self.sweep.wait_for_suggestion(timeout)

    def wait_for_curve(self, timeout: float = 60.0) -> None:
        """Block until the background sweep is drawn (for tests and scripts, never for the UI)."""
        self.wait_until_settled(timeout)  # the sweep starts when the controls rest
        self.sweep.wait_for_curve(timeout)

    # --- the inspector --------------------------------------------------------------------------
    def _on_event_click(self, status: str, trace, points, selector) -> None:
        if points.point_inds:
            self.inspect_event(int(self._rows[status][points.point_inds[0]]))

    def _on_window_click(self, reason: str, trace, points, selector) -> None:
        if points.point_inds:
            self.inspect_window(int(self._rows[reason][points.point_inds[0]]))

    def inspect_event(self, row: int) -> str:
        self.inspector.value = explain_event(self.result, row)
        return self.inspector.value

    def inspect_window(self, row: int) -> str:
        self.inspector.value = explain_window(self.result, row)
        return self.inspector.value

    # --- layout ---------------------------------------------------------------------------------
    def _say(self, text: str, error: bool = True) -> None:
        color = "#a00" if error else "#333"
        self.message.value = f"<span style='color:{color}'>{html.escape(text) if error else text}</span>" if text else ""
        self._saying_error = error and bool(text)

    def _clear_error(self) -> None:
        if self._saying_error:
            self._say("")

    def widget(self) -> W.Widget:
        data = W.VBox([W.HTML("<b>Data</b>"), self.source, W.HBox([self.seed, self.size]), self.load_button,
                       self.upload_form.box])
        left = W.VBox([data, self.controls.box()], layout=W.Layout(flex="0 0 28em"))
        wrap = W.Layout(flex_flow="row wrap")  # rows that fold rather than run off a narrow page
        stepper = W.HBox([self.play, self.batch, self.key], layout=wrap)
        target = W.HBox([self.sweep.target, self.sweep.suggestion], layout=W.Layout(flex_flow="row wrap"))
        right = W.VBox([self.message, self.cards, self.clocks, stepper,
                        W.HBox([self.histogram, self.sweep.figure], layout=wrap), target,
                        W.HTML("<b>Inspector</b>"), self.inspector, self.panels(), self.page_frames],
                       layout=W.Layout(flex="1 1 0", min_width="0"))  # min_width 0: it may shrink below its content
        return W.HBox([left, right])

    def panels(self) -> W.Accordion:
        panels = W.Accordion(children=[self.spark_panel.box(), self.job_log_panel.box(), self.compare_panel.box(),
                                       self.export_panel.box()])
        for i, title in enumerate(("Run on Spark", "Explain a Spark job (its progress log)", "Compare engines",
                                   "Copy config as…")):
            panels.set_title(i, title)
        return panels

    def _repr_mimebundle_(self, **kwargs):
        return self.widget()._repr_mimebundle_(**kwargs)


def _make_frame(stream: Stream, request: tuple[RunConfig, str]) -> Frame:
    config, key = request
    result = run(stream, config)
    return Frame(result, two_clocks(result, key=key, budget=INTERACTIVE_BUDGET, hover=False), key)


def explore(source: Stream | str | Path = "textbook", preset_name: str = "voltsp") -> Explorer:
    """Open the explorer on a file, a built-in generator name or a Stream."""
    return Explorer(source, preset_name)
