"""The explorer: the controls, the two clocks under the sliders, the evidence around them (``page_layout``).

This module is the wiring: each part owns one job and its widgets (``data_picker`` the stream, ``controls``
the settings, ``clocks`` the two-clocks figure, ``frames_ahead`` the frames computed ahead, ``stepper`` the key
and the batch replayed, ``histogram``, ``sweep`` the curve and the target, ``inspector``, ``cards``,
``status_line``, ``panels`` Spark, ``engine_panel`` the exported job on an engine, ``compare_panel``,
``export_panel``, ``job_log_panel``, ``fit_width`` the figures' widths in the page), and ``Explorer`` connects
them: a control change takes the Result from the local core (usually computed ahead) and hands the parts what
they draw.

Threads: the kernel's runs the handlers; the settle timer, the prefetch worker, the sweep's and Spark's threads
are handed snapshots (``clocks.View``, ``frames_ahead.Position``, the settings a sweep is for). The two that
change the explorer itself (the target's suggestion moves the delay slider; Spark's Result is shown in place of
the preview) do it holding ``_lock``, which every handler here holds too, so they never interleave.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import ipywidgets as W
import numpy as np

from explorer.config import RunConfig, delay_of, preset
from explorer.core import Metrics, Result
from explorer.errors import InputError
from explorer.streams import Stream
from explorer.timeutil import MICROS
from explorer.ui.cards import cards_html
from explorer.ui.clocks import PREVIEW_LINE, SETTLE_SECONDS, ClocksView, View
from explorer.ui.compare_panel import ComparePanel
from explorer.ui.controls import Controls
from explorer.ui.data_picker import UPLOAD, DataPicker, resolve_stream
from explorer.ui.engine_panel import EnginePanel
from explorer.ui.export_panel import ExportPanel
from explorer.ui.figures import INTERACTIVE_BUDGET
from explorer.ui.fit_width import FitWidth
from explorer.ui.frame import Shown
from explorer.ui.frames_ahead import FramesAhead, Position, Request, frames_to_keep
from explorer.ui.histogram import DelayHistogram
from explorer.ui.inspector import Inspector
from explorer.ui.job_log_panel import JobLogPanel
from explorer.ui.latest_only import from_page
from explorer.ui.page_frames import ClocksUpdate, PageFrames
from explorer.ui.page_steps import PageSteps
from explorer.ui.page_layout import page
from explorer.ui.panels import SparkPanel
from explorer.ui.status_line import StatusLine
from explorer.ui.stepper import Stepper
from explorer.ui.sweep import Sweep

# the names other modules, benchmarks and tests import from here
__all__ = ["INTERACTIVE_BUDGET", "PREVIEW_LINE", "SETTLE_SECONDS", "UPLOAD", "Explorer", "explore", "frames_to_keep"]

S = MICROS["s"]


@dataclass(frozen=True)
class Settled:
    """What the side figures follow once the controls rest (on the settle timer's thread)."""

    stream: Stream
    config: RunConfig
    metrics: Metrics
    max_delay: float


class Explorer:
    """``Explorer(stream_or_path_or_generator_name, preset="voltsp")``; display it in a notebook cell."""

    def __init__(self, stream: Stream | str | Path = "textbook", preset_name: str = "voltsp",
                 config: RunConfig | None = None):
        self._lock = threading.RLock()  # held by every handler, and by the threads that change the explorer
        self.stream = resolve_stream(stream)
        self._foreign: Result | None = None  # a Result computed elsewhere (Spark's), shown in place of the preview
        self._beside: Result | None = None  # the preview, beside a Result computed elsewhere (show_result)
        self._shown = Shown()  # the preview's frame shown: what the two clocks and the cards draw
        self.last_update_ms = 0.0
        self._quiet = False  # the explorer is setting controls itself: their handlers do nothing
        self._moving: tuple[str, int] = ("delay", 1)  # the slider that moved last and its direction
        self._prefetch_wanted = False
        self._stream_generation = 0  # part of every frame request: frames of an earlier stream never match
        self._request: Request | None = None  # what the two clocks show (or are about to)
        self._delay_p99 = 0.0
        self.controls = Controls()
        self.status_line = StatusLine()
        self.message = self.status_line.html
        self.cards = W.HTML()
        self.stepper = Stepper(self._on_stepper, self._lock)
        self.key, self.batch, self.play = self.stepper.key, self.stepper.batch, self.stepper.play
        self.sweep = Sweep(self._settings, self._set_delay)
        self.spark_panel = SparkPanel(lambda: self.stream, self.controls.config, lambda: self.result, self.show_result,
                                      self.sweep, lambda: self.controls.delay.max, lock=self._lock)
        self.engine_panel = EnginePanel(lambda: self.stream, self.controls.config, self._lock)
        self.compare_panel = ComparePanel(lambda: self.stream, self.controls.config, lambda f: self.fit_width.add(f))
        self.job_log_panel = JobLogPanel(lambda: self.stream, self.controls.config,
                                         lambda: self.sweep.target.value / 100, lambda f: self.fit_width.add(f))
        self.export_panel = ExportPanel(self.controls.config, lambda: self.stream)
        self.data = DataPicker(on_stream=lambda stream: self._load_stream(stream, reset=True), say=self._say)
        self.source, self.seed, self.size = self.data.source, self.data.seed, self.data.size
        self.load_button, self.upload_form = self.data.load_button, self.data.upload_form
        self.inspection = Inspector(lambda: self.result, clicked=self._clicked)
        self.inspector = self.inspection.html
        self.clocks_view = ClocksView(on_event=self.inspect_event, on_window=self.inspect_window)
        self.clocks = self.clocks_view.figure
        self.page_frames = PageFrames([getattr(self.controls, name) for name in self.controls.SLIDERS],
                                      self.controls.all + [self.key, self.batch], self.clocks,
                                      on_drawn=self._on_page_drawn, on_missed=self._on_page_missed,
                                      on_shown=self.clocks_view.page_showed)
        self.ahead = FramesAhead(self.controls, self.page_frames, self.clocks_view.update)
        self.clocks.observe(self._on_page_drew, names="_js2py_traceDeltas")  # plotly 7's page → kernel report
        self.delay_histogram = DelayHistogram()
        self.histogram = self.delay_histogram.figure
        self.fit_width = FitWidth([self.clocks, self.histogram, self.sweep.figure])  # and the panels' once made
        self.page_steps = PageSteps(self._refresh_for_page, lambda exc: self._say(f"could not redraw: {exc!r}"))
        self.controls.show(config or preset(preset_name))
        self._wire()
        self.data.name(self.stream)
        self._load_stream(self.stream, reset=True)

    # --- wiring ---------------------------------------------------------------------------------
    def _wire(self) -> None:
        for widget in self.controls.all:
            if widget is not self.controls.preset:
                widget.observe(self._on_control, names="value")
        self.controls.preset.observe(self._on_preset, names="value")

    def _on_control(self, change: dict[str, Any]) -> None:
        """A setting changed. From the page, ``page_steps`` redraws (a burst of moves: its last position only);
        from Python, it is done here, before the setter returns. The frames computed ahead follow ``_moving``."""
        slider = self.controls.slider_name(change["owner"])
        moving = None if slider is None else (slider, 1 if change["new"] >= change["old"] else -1)
        if from_page(change):
            self._moving = moving or self._moving
            try:  # the position moved to, and whether the page held its frame as it moved (so drew it)
                request = (self._stream_generation, self.controls.config(), self.key.value)
                self.page_steps.moved((request, self._page_holds(request)))
            except InputError:
                self.page_steps.moved(None)
            return
        with self._lock:
            if not self._quiet:
                self._moving = moving or self._moving
                self.refresh()

    def _on_preset(self, change: dict[str, Any]) -> None:
        with self._lock:
            if self._quiet:
                return
            current = self.controls.config()
            self._quiet = True
            try:
                self.controls.show(replace(preset(change["new"], delay=delay_of(current)), window=current.window))
            finally:
                self._quiet = False
            self.refresh()

    def _on_stepper(self) -> None:
        """The key or the stepper's batch moved: draw the Result shown for them (every point)."""
        with self._lock:
            self._post_position()
            view = self._view()
            if view is not None:
                self.clocks_view.draw(view)

    # --- the stream -----------------------------------------------------------------------------
    def _load_stream(self, stream: Stream, reset: bool) -> None:
        with self._lock:
            self.stream = stream
            self._forget_stream()
            self.page_frames.clear()
            self.ahead.start(stream)
            self.stepper.show_keys(stream.keys)
            self._quiet = True
            try:
                self._delay_p99 = self.delay_histogram.show(stream)
                top = max(10.0, np.ceil(self._delay_p99 * 1.5))
                for slider in (self.controls.delay, self.controls.allowed):
                    slider.max = float(top)
            finally:
                self._quiet = False
            self.clocks_view.time_axes(stream.absolute)
            self.refresh(reset_stepper=reset)

    def _forget_stream(self) -> None:
        """Everything derived from the stream shown until now goes, or says it is being computed anew: the
        redraw due, the inspector's event, Spark's badge, the comparison, the curve and the target's suggestion."""
        self.clocks_view.forget()
        self.sweep.forget()
        self._stream_generation += 1
        self._post_position()
        self.inspection.forget()
        self.spark_panel.forget()
        self.engine_panel.forget()
        self.compare_panel.forget()
        self.job_log_panel.forget()

    # --- computing and drawing ------------------------------------------------------------------
    def refresh(self, reset_stepper: bool = False) -> None:
        """Recompute the Result for the controls and redraw (the slider path)."""
        with self._lock:
            self._refresh(reset_stepper)

    def _refresh_for_page(self) -> None:
        """The redraw ``latest_only`` runs after moves in the page: for the controls as they are now."""
        with self._lock:
            self._refresh(False, from_page=True)

    def _refresh(self, reset_stepper: bool, from_page: bool = False) -> None:
        start = time.perf_counter()
        try:
            config = self.controls.config()
            self.sweep.settings_changed(self.stream, config)
            frame = self.ahead.get(config, self.key.value)
            self._shown.show(frame)
            self._foreign = self._beside = None
            request = (self._stream_generation, config, self.key.value)
        except InputError as exc:
            self._post_position()  # a frame computed ahead is near no position now
            self._say(str(exc))
            return
        self.status_line.clear_error()  # the settings work now; a note (what a file was read as) stays
        self.stepper.follow(frame.last_batch, reset_stepper)
        self.inspection.follow(frame.followed)  # before the position is posted: the subject it explains now
        self._post_position()
        page_drew = not reset_stepper and (self.page_steps.page_drew(request) if from_page else self._page_holds(request))
        self._request = request
        view = self._view()
        assert view is not None  # a frame was just set
        settled = Settled(self.stream, config, frame.metrics, self.controls.delay.max)
        if reset_stepper:
            self.clocks_view.frame_view(self.stream, config, self._delay_p99, self._stream_generation)
            self.clocks_view.draw(view)
            self._side_figures(settled)
        else:  # a control moved: a light frame now; every point and the side figures once the controls rest
            if page_drew:  # the page drew it itself, and says so (_on_page_drawn)
                self.clocks_view.post(view)
            else:  # moves in the page: not while the page is still drawing the kernel's previous frame
                self.clocks_view.draw_light(view, from_page and self.page_frames.busy())
            self.clocks_view.settle(view, lambda: self._side_figures(settled))
        self.cards.value = frame.cards
        self.export_panel.refresh()
        self.last_update_ms = (time.perf_counter() - start) * 1000
        if page_drew:
            self.prefetch_neighbours()
        else:
            self._prefetch_wanted = True  # once the page has drawn this frame: computing ahead now would slow it

    @property
    def result(self) -> Result | None:
        """The Result shown: one computed elsewhere (Spark's), else the preview frame's, run again here once when
        the frame was computed ahead without it (frame.py): what asks (a click, another key or batch) waits."""
        with self._lock:
            return self._foreign if self._foreign is not None else self._shown.result()

    def _view(self) -> View | None:
        """What the two clocks draw now, read from the explorer (under ``_lock``); None before any frame."""
        frame = self._shown.frame
        if frame is None:
            return None
        upto, key = self.stepper.upto, self.key.value
        if self._foreign is not None:
            return View(self.stream, self._foreign, key, upto, self._beside)
        return View(self.stream, self._shown.result(upto is not None or key != frame.key), key, upto, frame=frame)

    def _post_position(self) -> None:
        """Hand the controls' position to the prefetch thread (frames_ahead.Position)."""
        self.ahead.post(Position(self._stream_generation, self.stream, self.controls.values(), self.key.value,
                                 self.stepper.at_last_batch, self.page_frames.synced(), self.inspection.subject))

    def _side_figures(self, settled: Settled) -> None:
        """The histogram's delay line and the curve's marker (or a new sweep) follow the settings at rest."""
        self.delay_histogram.mark_delay(settled.config)
        self.sweep.follow(settled.stream, settled.config, settled.metrics, settled.max_delay)

    def show_result(self, result: Result, beside: Result | None = None) -> None:
        """Draw a Result computed elsewhere (Spark's) in place of the preview, for the same stream and settings;
        ``beside`` (the preview's) keeps its effective watermark in the figure as a dotted line, so where the two
        watermarks part is seen, not only said. The next preview drawn clears it."""
        with self._lock:
            self._foreign, self._beside = result, beside
            view = self._view()
            assert view is not None
            self.clocks_view.draw(view)
            self.cards.value = cards_html(result.metrics, result.config, result.windows)
            self.inspection.follow()

    def wait_until_settled(self, timeout: float = 10.0) -> None:
        """Block until the full redraw after the last control change is done (tests and scripts only)."""
        self.page_steps.wait(timeout)
        self.clocks_view.wait_until_settled(timeout)

    @property
    def figure_note(self) -> str:
        """What the two clocks leave out now, in words ("showing 5,000 of 20,000 events…")."""
        return self.clocks_view.note

    # --- the page's frames (page_frames.py) and those computed ahead (frames_ahead.py) ------------
    def _page_holds(self, request: Request) -> bool:
        """Whether the page holds this step's frame, and so draws it when the slider moves (page_frames.py)."""
        return self.stepper.at_last_batch and self.page_frames.holds(request)

    def _on_page_drawn(self, request: Hashable, update: ClocksUpdate, stale: bool) -> None:
        """The page drew a frame it held: the Python figure mirrors it (page_frames.mirror); or, when a frame the
        kernel sent earlier lands on top of it (``stale``), the kernel sends it (``page_steps``)."""
        with self._lock:
            if not stale:
                self.clocks_view.mirror(update)
            self._page_showed(request, stale)

    def _on_page_missed(self, request: Hashable) -> None:
        """The page held the frame but could not draw it: send it after all."""
        with self._lock:
            self._page_showed(request, stale=True)

    def _page_showed(self, request: Hashable, stale: bool) -> None:
        view = self._view()
        if self.page_steps.shown_by_page(request, self._request, stale) and view is not None:
            self.clocks_view.draw(view, INTERACTIVE_BUDGET)

    def _on_page_drew(self, change: dict[str, Any]) -> None:
        """Plotly's widget reports its trace deltas once the page has drawn an update."""
        if change["new"] and self._prefetch_wanted:
            self.prefetch_neighbours()

    def prefetch_neighbours(self) -> None:
        """Start computing where the slider that moved last will go next (see ``prefetch.py``). The page's
        report that it drew the frame calls this; scripts and benchmarks without a page may call it."""
        with self._lock:
            self._prefetch_wanted = False
            self.ahead.prefetch_neighbours(self._moving, self._stream_generation, self.key.value)

    def wait_for_prefetch(self, timeout: float = 30.0) -> None:
        """Block until the frames computed ahead are ready (tests and benchmarks only)."""
        self.ahead.wait(timeout)

    # --- the completeness–latency curve (sweep.py) ----------------------------------------------
    def _settings(self) -> tuple[Stream, RunConfig] | None:
        with self._lock:
            try:
                return self.stream, self.controls.config()
            except InputError:
                return None

    def _set_delay(self, micros: int) -> None:
        """Move the delay slider to the first of its steps at or above ``micros``, widening its range if needed
        (from the target's thread: under the lock, so its refresh never interleaves with the kernel's)."""
        with self._lock:
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
    def inspect_event(self, row: int) -> str:
        with self._lock:
            return self.inspection.event(row)

    def inspect_window(self, row: int) -> str:
        with self._lock:
            return self.inspection.window(row)

    def _clicked(self) -> None:
        """The inspector explains another row (under ``_lock``): the frames computed ahead follow it."""
        self._post_position()
        self.ahead.follow_subject(self._moving, self._stream_generation, self.key.value)

    # --- layout ---------------------------------------------------------------------------------
    def _on_load(self, _button: object = None) -> None:
        self.data.load()

    def _say(self, text: str, error: bool = True) -> None:
        self.status_line.say(text, error)

    def widget(self) -> W.Widget:
        """The page (``page_layout.py`` lays it out)."""
        return page(self)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget()._repr_mimebundle_(**kwargs)


def explore(source: Stream | str | Path = "textbook", preset_name: str = "voltsp") -> Explorer:
    """Open the explorer on a file, a built-in generator name or a Stream."""
    return Explorer(source, preset_name)
