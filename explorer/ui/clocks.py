"""The two-clocks figure and all that draws it: its traces (made once, found by name), the frame sent for a
View, and the full redraw once the controls rest.

A module of its own because the figure is drawn from four threads: the kernel's (a control moved from Python,
or the stepper), ``latest_only``'s (a control moved in the page), the settle timer's (every point, once the
controls rest) and Spark's (its Result in place of the preview). What a draw reads comes in a ``View``, an
immutable snapshot taken by whoever asks for the draw; the timer is handed the View it draws through ``latest``
(the View posted last), which, like the rows behind the points drawn and the title sent, is read and written
only under ``_lock``. No draw reads a widget or the explorer's attributes.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explorer.config import RunConfig
from explorer.core import Result
from explorer.streams import Stream
from explorer.timeutil import MICROS
from explorer.ui.live_figure import LiveFigure
from explorer.ui.figures import (INTERACTIVE_BUDGET, INTERACTIVE_WINDOWS, NOTE_SEP, POINT_BUDGET, REASON_COLORS,
                                 REASON_LABELS, REASON_SYMBOLS, STATUS_COLORS, STATUS_LABELS, STATUSES, TwoClocks,
                                 compact, plot_time, scripted_marks, two_clocks, watermark_steps)
from explorer.ui.frame import Frame
from explorer.ui.page_frames import ClocksUpdate, mirror
from explorer.ui.plotly_messages import follow_page_zoom, send

S = MICROS["s"]
SETTLE_SECONDS = 0.5
# characters of the title's small lines (11 px, ~4.6 px a character): what fits the figure in a 1280 px page with
# JupyterLab's file browser open. On one line, the notes of a 50k-event stream with early panes ran to 300 and
# the emissions' note was cut off at the figure's edge.
TITLE_LINE_CHARS = 150
PREVIEW_LINE = "the preview's effective watermark"


@dataclass(frozen=True)
class View:
    """What one two-clocks frame is drawn from, all of it: taken at once by the thread that asks for the draw."""

    stream: Stream
    result: Result | None  # None: the preview's frame drawn from what it keeps (a frame computed ahead, 10M events)
    key: str
    upto: int | None = None  # the stepper's batch, None at the last one
    beside: Result | None = None  # the preview, dotted beside a Result computed elsewhere
    frame: Frame | None = None  # the preview's frame shown (maybe computed ahead); None for a Result from elsewhere

    @property
    def drawn(self) -> Frame | None:
        """The frame whose two-clocks data this view draws as it is: for its key, every batch."""
        frame = self.frame
        return frame if frame is not None and frame.key == self.key and self.upto is None else None

    @property
    def config(self) -> RunConfig:
        return self.frame.config if self.result is None and self.frame is not None else self._result().config

    @property
    def engine(self) -> str:
        return self.frame.engine if self.result is None and self.frame is not None else self._result().engine

    @property
    def absolute(self) -> bool:
        return self.frame.light.absolute if self.result is None and self.frame is not None else self._result().absolute

    @property
    def source(self) -> object:
        """What the view shows, as a settled redraw tells a newer one: the preview's frame, or a Result from
        elsewhere."""
        return self.frame if self.frame is not None else self.result

    def _result(self) -> Result:
        if self.result is None:
            raise ValueError("a View without a Result draws only its frame, for the frame's key and every batch")
        return self.result


class ClocksView:
    """The two clocks as a FigureWidget (``figure``). ``draw(view)`` sends a frame; ``settle(view, then)`` sends
    every point once no draw came for SETTLE_SECONDS; a click on a point calls ``on_event(row)`` or
    ``on_window(row)`` with its row of the Result drawn."""

    def __init__(self, on_event: Callable[[int], object], on_window: Callable[[int], object]) -> None:
        self._index: dict[str, int] = {}  # trace name → its position, recorded as each trace is made
        self.figure = self._build()
        self._lock = threading.RLock()
        self._latest: View | None = None  # the View drawn (or, when the page drew it, posted) last
        self._due: View | None = None  # a light frame held back while the page draws the previous one
        self._timer: threading.Timer | None = None
        self._rows: dict[str, np.ndarray] = {}  # per clickable trace: the Result row of each drawn point
        self._sent_title = ""  # as last sent: an unchanged title is not resent
        self._preview_legend = False
        self.note = ""  # what the frame drawn leaves out, in words
        for name in STATUSES:
            self.trace(name).on_click(partial(self._on_click, name, on_event))
        for reason in REASON_LABELS:
            self.trace(reason).on_click(partial(self._on_click, reason, on_window))
        follow_page_zoom(self.figure)

    # --- the traces ------------------------------------------------------------------------------
    def _build(self) -> go.FigureWidget:
        fig = LiveFigure()

        def add(key: str, kind: str, **props: Any) -> None:
            getattr(fig, f"add_{kind}")(**props)
            self._index[key] = len(fig.data) - 1

        add("diagonal", "scatter", name="ideal (event = arrival)", mode="lines", line=dict(color="#bbb", dash="dot"),
            hoverinfo="skip")
        # outlines, not fills: filling 1,000 WebGL polygons made every redraw ~5× slower in the browser; and in SVG:
        # as WebGL lines, 1,000 outlines kept software GL busy ~120 ms a frame, in SVG they cost ~40 ms (RESULTS.md)
        add("bands", "scatter", name="windows", mode="lines", line=dict(color="rgba(76,120,168,0.45)", width=1),
            hoverinfo="skip")
        # one WebGL trace per status, each one colour: a per-point colour array costs Plotly a colour parse per
        # point on every redraw (about 300 ms for 20k events in the browser, far more than sending positions)
        for name in STATUSES:
            add(name, "scattergl", name=STATUS_LABELS[name], mode="markers",
                marker=dict(color=STATUS_COLORS[name], size=6, opacity=0.8),
                hovertemplate="arrival %{x:.2f}<br>event %{y:.2f}<extra>event (click to inspect)</extra>")
        # the watermark lines in SVG: two WebGL step lines of 1,500 steps kept Chromium's software GL busy for
        # 80–130 ms per frame (SVG: ~5 ms); SVG draws under the WebGL markers, which hide little of a step line.
        # They take no hover and no click: an emission sits on the effective watermark's step,
        # and Plotly ranks an SVG line's vertex within 3 px nearer than a WebGL marker's centre, so the line took
        # the hover and the click meant for the emission's diamond (or an event's dot)
        add("watermark", "scatter", name="watermark", mode="lines", line=dict(color="#222", shape="hv", width=2),
            hoverinfo="skip")
        add("effective", "scatter", name="effective watermark", mode="lines",
            line=dict(color="#E45756", shape="hv", dash="dash"), hoverinfo="skip")
        for reason, label in REASON_LABELS.items():
            add(reason, "scattergl", name=label, mode="markers", hovertemplate="%{text}<extra>emitted</extra>",
                marker=dict(color=REASON_COLORS[reason], symbol=REASON_SYMBOLS[reason], size=10,
                            line=dict(width=1, color="#222")))
        # the input's own watermark rows (kind = watermark): what the scripted strategy follows, or a logged one
        add("scripted", "scattergl", name="watermark rows (input)", mode="markers",
            marker=dict(color="#222", symbol="triangle-right", size=9),
            hovertemplate="%{y:.2f} s at arrival %{x:.2f} s<extra>watermark row of the input</extra>")
        # beside a Result computed elsewhere (Spark's): the preview's effective watermark, where the two may part
        add("preview", "scatter", name=PREVIEW_LINE, mode="lines", showlegend=False,
            line=dict(color="#4C78A8", shape="hv", dash="dot", width=3), hoverinfo="skip")
        fig.update_layout(height=560, margin=dict(l=60, r=20, t=72, b=50), title="The two clocks",
                          xaxis_title="arrival (processing) time, s", yaxis_title="event time, s",
                          legend=dict(orientation="h", y=-0.15), hovermode="closest", uirevision="keep")
        fig.update_layout(legend_itemclick=False, legend_itemdoubleclick=False)
        # seconds past 10,000 as "10,030", not Plotly's SI "10.03k" (a kilo-second reads as no duration at all)
        fig.update_xaxes(exponentformat="none", separatethousands=True)
        fig.update_yaxes(exponentformat="none", separatethousands=True)
        return fig

    def index(self, name: str) -> int:
        """The position of the trace made as ``name`` ("on_time", "watermark", "WATERMARK", "preview"…); a name
        no trace was made as is an error, never another trace."""
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"the two clocks have no trace {name!r}; they have {', '.join(self._index)}") from None

    def trace(self, name: str) -> Any:
        """The trace made as ``name`` (see ``index``)."""
        return self.figure.data[self.index(name)]

    @property
    def rows(self) -> dict[str, np.ndarray]:
        """Per clickable trace, the Result row of each point drawn now."""
        with self._lock:
            return dict(self._rows)

    def _on_click(self, name: str, then: Callable[[int], object], _trace: object, points: Any, _selector: object) -> None:
        if points.point_inds:
            with self._lock:
                row = int(self._rows[name][points.point_inds[0]])
            then(row)

    # --- the axes --------------------------------------------------------------------------------
    def time_axes(self, absolute: bool) -> None:
        """Wall-clock streams get date axes and date-time hover text (coordinates in ms since 1970, which is what
        Plotly's date axes read); relative ones, seconds."""
        at = "%{x|%Y-%m-%d %H:%M:%S.%L}" if absolute else "%{x:.2f} s"
        happened = "%{y|%Y-%m-%d %H:%M:%S.%L}" if absolute else "%{y:.2f} s"
        unit = " (UTC)" if absolute else ", s"
        with self._lock, self.figure.batch_update():  # (the axes' type goes with their range: frame_view)
            self.figure.layout.xaxis.title.text = f"arrival (processing) time{unit}"
            self.figure.layout.yaxis.title.text = f"event time{unit}"
            for name in STATUSES:
                self.trace(name).hovertemplate = f"arrival {at}<br>event {happened}<extra>event (click to inspect)</extra>"
            self.trace("scripted").hovertemplate = f"{happened} at arrival {at}<extra>watermark row of the input</extra>"

    def frame_view(self, stream: Stream, config: RunConfig, delay_p99: float, generation: int) -> None:
        """Open on a readable stretch (about 20 windows) of a long stream; zoom out to see it all."""
        ev = stream.events
        at = stream.absolute
        arrival, event_time = plot_time(ev["arrival_time"].to_numpy(), at), plot_time(ev["event_time"].to_numpy(), at)
        window = float(plot_time(max(config.window.size, config.window.gap), at))
        lo = float(min(arrival.min(), event_time.min()))
        span = max(20 * window, 5 * float(plot_time(delay_p99 * S, at)))
        kind = "date" if at else "linear"
        # one message, the axes' type with their range: sent apart, the page kept a date axis linear when a
        # wall-clock file replaced a relative stream (its ticks read "1.7951652T")
        view: dict[str, Any] = {"uirevision": f"stream-{generation}",  # a new stream resets the user's zoom
                                "xaxis.type": kind, "yaxis.type": kind}
        if float(max(arrival.max(), event_time.max())) - lo > 1.5 * span:
            view.update({"xaxis.range": [lo, lo + span], "yaxis.range": [lo - span * 0.1, lo + span]})
        else:
            view.update({"xaxis.autorange": True, "yaxis.autorange": True, "xaxis.range": None, "yaxis.range": None})
        with self._lock:
            self.figure.plotly_relayout(view)

    # --- drawing ---------------------------------------------------------------------------------
    def update(self, view: View, data: TwoClocks) -> ClocksUpdate:
        """The arrays and title of one two-clocks frame, as the kernel sends them or the page keeps them. Reads
        only ``view``, ``data`` and the trace positions (fixed once made): any thread may call it."""
        t = self.index
        config = view.config
        scope = "per key" if config.time.scope.value == "key" else config.time.scope.value
        title = f"The two clocks — {view.stream.name}, {config.window}, watermark {scope}"
        if view.upto is not None:
            title += f", up to batch {view.upto}"
        # the second line, small: who computed it (a long first line ran past a 1280 px page) and what the
        # figure leaves out (in the title: a new annotation makes Plotly lay it all out again)
        below = [("#444", f"computed by {view.engine}")] if view.engine != "local" else []
        below += [("#a00", part) for part in data.note.split(NOTE_SEP) if part]
        for line in title_lines([text for _, text in below]):
            parts = [f"<span style='color:{color}'>{html.escape(text)}</span>" for color, text in below[:len(line)]]
            below = below[len(line):]
            title += f"<br><span style='font-size:11px'>{'; '.join(parts)}</span>"
        # a frame drawn while a control moves is not read closely: no hover text, positions in float32 if exact enough
        light = not data.hover
        position: Callable[[Any], np.ndarray] = compact if light else np.asarray
        lines = {t("diagonal"): data.diagonal, t("bands"): data.bands, t("watermark"): data.watermark,
                 t("effective"): data.effective}
        traces: dict[int, dict[str, Any]] = {i: {"x": position(x), "y": position(y), "text": None}
                                             for i, (x, y) in lines.items()}
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
        x, y = scripted_marks(view.stream, config, view.absolute, view.upto)
        traces[t("scripted")] = {"x": position(x), "y": position(y), "text": None}
        x, y = np.array([]), np.array([])
        if view.engine != "local" and view.beside is not None:
            _, (x, y), _ = watermark_steps(view.beside, view.key, view.upto)
        traces[t("preview")] = {"x": position(x), "y": position(y), "text": None}
        return ClocksUpdate(traces, title, rows, data.note)

    def post(self, view: View) -> None:
        """``view`` is what the figure shows now (drawn here, or by the page itself): the settled redraw draws it."""
        with self._lock:
            self._latest = view
            legend = view.beside is not None
            if legend != self._preview_legend:
                self._preview_legend = legend
                self.trace("preview").showlegend = legend

    def draw(self, view: View, budget: int = POINT_BUDGET) -> None:
        """Post ``view`` and send its frame: the light one computed with it while a control moves
        (``INTERACTIVE_BUDGET``), else up to ``budget`` points."""
        with self._lock:
            self.post(view)
            self._render(view, budget)

    def draw_light(self, view: View, page_busy: bool) -> None:
        """``view``'s light frame now, or, while the page is still drawing a frame sent before (``page_busy``),
        once it has shown it (``page_showed``). Sent faster than the page draws them (~100 ms each with
        software WebGL), frames queued up there, each keeping the page busy, and the keys waited behind them."""
        with self._lock:
            self.post(view)
            if page_busy:
                self._due = view
            else:
                self._render(view, INTERACTIVE_BUDGET)  # (and drops a frame held back: this one is newer)

    def page_showed(self) -> None:
        """The page has shown the frames sent so far: the light frame held back, if it is still the latest."""
        with self._lock:
            due, self._due = self._due, None
            if due is not None and due is self._latest:
                self._render(due, INTERACTIVE_BUDGET)

    def _render(self, view: View, budget: int) -> None:
        self._due = None  # whatever was held back, this frame is newer
        drawn = view.drawn  # its frame's data, computed with the Result, perhaps ahead of time
        if budget == INTERACTIVE_BUDGET and drawn is not None:
            data = drawn.light
        elif budget == POINT_BUDGET and drawn is not None and drawn.full is not None:
            data = drawn.full
        else:
            light = budget == INTERACTIVE_BUDGET
            data = two_clocks(view._result(), key=view.key, upto_batch=view.upto, budget=budget, hover=not light,
                              windows=INTERACTIVE_WINDOWS if light else None)
        update = self.update(view, data)
        self._rows.update(update.rows)
        self.note = update.note
        # one redraw per frame; an unchanged title is not resent
        send(self.figure, update.traces, {"title.text": update.title} if update.title != self._sent_title else None)
        self._sent_title = update.title

    def mirror(self, update: ClocksUpdate) -> None:
        """The page drew a frame it held: the Python figure takes it as it is (page_frames.mirror)."""
        with self._lock:
            mirror(self.figure, update)
            self._sent_title = update.title
            self._rows.update(update.rows)
            self.note = update.note

    def settle(self, view: View, then: Callable[[], None]) -> None:
        """Once no draw came for SETTLE_SECONDS: redraw what was posted last with every point, and call ``then``
        (the side figures), unless a newer Result was posted meanwhile. Each of those is a full Plotly redraw of
        its figure in the page (~50 ms there); done on every step, they delayed the next frames of the two
        clocks. The timer thread reads nothing but ``view``, ``then`` and what was posted, under the lock."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()

            def full() -> None:
                with self._lock:
                    latest = self._latest
                    if latest is None or latest.source is not view.source:  # a newer Result, or a new stream
                        return
                    self._render(latest, POINT_BUDGET)
                    then()

            self._timer = threading.Timer(SETTLE_SECONDS, full)
            self._timer.daemon = True
            self._timer.start()

    def forget(self) -> None:
        """The stream changed: nothing posted stands, and a redraw due for it is not made."""
        with self._lock:
            self._latest = None
            if self._timer is not None:
                self._timer.cancel()

    def wait_until_settled(self, timeout: float = 10.0) -> None:
        """Block until the settled redraw due is done (tests and scripts only)."""
        with self._lock:
            timer = self._timer
        if timer is not None:
            timer.join(timeout)


def title_lines(parts: list[str], width: int = TITLE_LINE_CHARS) -> list[list[str]]:
    """``parts`` in order, as few to a line as keep each line (joined by "; ") within ``width`` characters; a
    part longer than that gets a line of its own."""
    lines: list[list[str]] = []
    for part in parts:
        if lines and len(NOTE_SEP.join([*lines[-1], part])) <= width:
            lines[-1].append(part)
        else:
            lines.append([part])
    return lines
