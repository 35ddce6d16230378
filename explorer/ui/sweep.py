"""The completeness–latency curve and the target box: background work that follows the controls.

The curve is a 41-delay sweep of the current settings (``metrics.curve``); the target box names the smallest
delay reaching a completeness (``metrics.tune``, exact to the µs). Both run on threads so a slider never
waits, and both are generation-counted: work for settings or a stream that have since changed stops (the
sweep) or is dropped (the suggestion), never drawn over what is shown now.

Four threads touch a Sweep: the kernel's (a control moved, the target typed), the settle timer's (``follow``
once the controls rest), its own workers, and Spark's (``draw`` of Spark's curve). Each worker is handed the
stream and settings it works for; the generations, the rows and the figure change only under ``_lock``, and
``set_delay`` (the explorer's, which takes the explorer's lock) is never called holding it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import ipywidgets as W
import numpy as np

from explorer.config import PRESETS, RunConfig, apply_delay
from explorer.core import Metrics
from explorer.metrics import CurveRow, FrontierPoint, SweepStopped, Tuning, best_point, curve, frontier, tune
from explorer.streams import Stream
from explorer.timeutil import MICROS, exact_seconds
from explorer.ui.frames_ahead import background_workers
from explorer.ui.live_figure import LiveFigure
from explorer.ui.plotly_messages import send
from explorer.ui.words import duration, plural

S = MICROS["s"]
CURVE_TITLE = "completeness vs latency"
COMPUTING = "<i>computing…</i>"
SWEEP_POINTS = 41
FRONTIER_POINTS = 4  # values of allowed lateness tried beside the delay alone: 5 exact tunings in all
SweepKey = tuple[int, RunConfig]  # the stream's id and the settings but the delay: what one curve is for


class Sweep:
    """The curve figure, the target box and its suggestion. ``settings()`` gives the stream and settings the
    controls describe now (None when they describe none); ``set_delay(micros)`` moves the explorer's delay
    control when the user types a target."""

    def __init__(self, settings: Callable[[], tuple[Stream, RunConfig] | None], set_delay: Callable[[int], None]):
        self._settings, self._set_delay = settings, set_delay
        self._lock = threading.RLock()
        self.figure = LiveFigure()
        self.figure.add_scatter(name="sweep", mode="lines+markers", marker=dict(size=5), line=dict(color="#4C78A8"),
                                hovertemplate="delay %{text} s<br>latency %{x:.2f} s<br>completeness %{y:.2f}%"
                                              "<extra></extra>")
        self.figure.add_scatter(name="current", mode="markers", hoverinfo="skip",
                                marker=dict(size=14, color="#E45756", symbol="circle-open", line=dict(width=3)))
        self.figure.update_layout(height=260, margin=dict(l=50, r=10, t=40, b=40), title=CURVE_TITLE,
                                  xaxis_title="avg emit latency, s (event time)", yaxis_title="completeness %",
                                  showlegend=False)
        self.target = W.BoundedFloatText(value=99.0, min=1.0, max=100.0, step=0.5, description="target %",
                                         layout=W.Layout(width="14em"))
        # the box applies a target when its value changes; typed again unchanged, it sends nothing, so a target
        # is applied (the delay moved to it) by this button too: the cards then agree with the suggestion
        self.apply = W.Button(description="apply", icon="check", tooltip="move the delay to the smallest one "
                              "reaching the target %", layout=W.Layout(width="7em"))
        self.apply.on_click(lambda _button: self.suggest(apply=True))
        self.suggestion = W.HTML()
        self.rows: list[CurveRow] = []
        self._rows_key: SweepKey | None = None  # what ``rows`` were swept for (``key`` moves on when a sweep starts)
        self.key: SweepKey | None = None  # what the curve shown (or being computed) is for
        self.generation = 0  # bumped to stop the sweep under way
        self._tune_generation = 0  # bumped to drop the suggestion under way
        self._curve_thread: threading.Thread | None = None
        self._tune_thread: threading.Thread | None = None
        self._current: Metrics | None = None
        self.target.observe(lambda _change: self.suggest(apply=True), names="value")

    @staticmethod
    def key_of(stream: Stream, config: RunConfig) -> SweepKey:
        """What a sweep depends on: the stream and every setting but the delay it sweeps."""
        return id(stream), apply_delay(config, 0)

    def forget(self) -> None:
        """The stream changed: stop what runs, clear the curve, and say the suggestion is being computed."""
        with self._lock:
            self.key = None
            self.generation += 1
            self._tune_generation += 1
            self.rows, self._rows_key = [], None
            with self.figure.batch_update():
                for trace in self.figure.data:
                    trace.x, trace.y = [], []
            self.suggestion.value = COMPUTING

    def settings_changed(self, stream: Stream, config: RunConfig) -> None:
        """A control moved: a sweep under way for other settings stops now (a new one starts at rest)."""
        with self._lock:
            if self.key is not None and self.key_of(stream, config) != self.key:
                self.generation += 1
                self.key = None

    def follow(self, stream: Stream, config: RunConfig, metrics: Metrics, max_delay: float) -> None:
        """The controls rest on ``config``: mark its ``metrics`` on the curve, or sweep anew (0 to ``max_delay``
        seconds) if the settings other than the delay changed; the suggestion follows the new curve."""
        with self._lock:
            self._current = metrics
            key = self.key_of(stream, config)
            if key == self.key:
                self.mark(metrics)
                return
            self.key = key
            self.generation += 1
            generation = self.generation
            self.figure.layout.title.text = f"{CURVE_TITLE} (computing…)"

        def work() -> None:
            try:
                rows = curve(stream, config, self.delays(max_delay), background_workers(len(stream)),
                             stop=lambda: generation != self.generation)
            except SweepStopped:
                return
            with self._lock:
                if generation != self.generation:
                    return
                self.rows, self._rows_key = rows, key
                self.draw(rows)
            self._suggest(stream, config, apply=False)

        self._curve_thread = threading.Thread(target=work, daemon=True)
        self._curve_thread.start()

    @staticmethod
    def delays(max_delay: float) -> list[int]:
        """The delays a curve is swept at (µs): SWEEP_POINTS from 0 to ``max_delay`` seconds."""
        return [round(d * S) for d in np.linspace(0, max_delay, SWEEP_POINTS)]

    def rows_for(self, stream: Stream, config: RunConfig) -> list[CurveRow] | None:
        """The local curve's rows, if they were swept for these settings (not while a sweep for them runs)."""
        with self._lock:
            return self.rows if self.rows and self._rows_key == self.key_of(stream, config) else None

    def draw(self, rows: list[CurveRow], title: str = CURVE_TITLE) -> None:
        """Draw a curve's rows (the local sweep's, or Spark's) and ring the current setting on it."""
        with self._lock, self.figure.batch_update():
            self.figure.layout.title.text = title
            line = self.figure.data[0]
            # arrays, not lists: they travel as binary buffers, where a NaN (no window emitted at that
            # delay) is allowed; in a list it breaks the message's JSON and the page shows a warning
            line.x = np.array([np.nan if r.avg_emit_latency is None else r.avg_emit_latency for r in rows])
            line.y = np.array([r.completeness * 100 for r in rows])
            line.text = [f"{r.delay:g}" for r in rows]
        self.mark(self._current)

    def mark(self, m: Metrics | None) -> None:
        """Ring the current setting on the curve (its metrics: the frame shown may have no Result to hold)."""
        if m is None:
            return
        latency = m.latency_event.mean if m.latency_event.mean is not None else np.nan
        # one redraw, not one per axis; arrays, which may hold a NaN (see follow)
        with self._lock:
            send(self.figure, {1: {"x": np.array([latency]), "y": np.array([m.completeness * 100])}})

    def suggest(self, apply: bool = False) -> None:
        """Name the smallest delay that reaches the target % under the current settings (``tune``: exact, not on
        the sweep's grid; on a background thread). With ``apply`` (the user typed a target) the delay control
        moves to it: the cards then agree with the suggestion."""
        wanted = self._settings()
        if wanted is not None:
            self._suggest(*wanted, apply=apply)

    def _suggest(self, stream: Stream, config: RunConfig, apply: bool) -> None:
        """``suggest`` for the stream and settings given (the kernel's, or those a finished sweep was for)."""
        with self._lock:
            percent = self.target.value
            self._tune_generation += 1
            generation = self._tune_generation
            self.suggestion.value = f"<i>looking for the smallest delay reaching {percent:g}%…</i>"

        def work() -> None:
            found = tune(stream, config, percent / 100)
            with self._lock:
                if generation != self._tune_generation:
                    return
                if not found.reached:
                    self.suggestion.value = (f"no delay reaches {percent:g}%: at {duration(found.delay)} "
                                             f"completeness is {found.completeness:.2%} and more delay does not help")
                    return
                latency = found.metrics.latency_event.mean
                self.suggestion.value = (
                    f"smallest delay reaching {percent:g}%: <b>{exact_seconds(found.delay)} s</b> "
                    f"({duration(found.delay)}; completeness {found.completeness:.2%}, emit latency "
                    f"{duration(None if latency is None else latency * S, 'none: no window emitted')})"
                    + ("" if apply else " — <i>apply</i> moves the delay there; the cards show the delay set now"))
            if apply:  # outside the lock: the explorer's delay control takes the explorer's lock
                self._set_delay(found.delay)
            rules = PRESETS.get(config.preset)
            if found.delay and rules is not None and rules.allowed_lateness:
                self._offer_lateness(stream, config, percent, found, generation)

        self._tune_thread = threading.Thread(target=work, daemon=True)
        self._tune_thread.start()

    def _offer_lateness(self, stream: Stream, config: RunConfig, percent: float, alone: Tuning,
                        generation: int) -> None:
        """The second knob, where the engine has it: the point of the delay–allowed-lateness frontier that
        reaches the target with the earliest first results (``metrics.frontier``), said under the suggestion."""
        best = best_point(frontier(stream, config, percent / 100, "allowed-lateness", steps=FRONTIER_POINTS))
        with self._lock:
            if generation != self._tune_generation or best is None or best.second == 0:
                return
            self._say_lateness(best, alone)

    def _say_lateness(self, best: FrontierPoint, alone: Tuning) -> None:
        first, before = best.latency, alone.metrics.latency_event.mean
        self.suggestion.value += (
            f"<br>or delay {duration(best.tuning.delay)} with allowed lateness {duration(best.second)}: "
            f"first results after {duration(None if first is None else round(first * S), 'none emitted')} instead of "
            f"{duration(None if before is None else round(before * S), 'none emitted (the delay alone emits no window)')}"
            f", at the cost of {plural(best.tuning.metrics.updates, 'revision')} (tune --with allowed-lateness)")

    def wait_for_curve(self, timeout: float) -> None:
        if self._curve_thread is not None:
            self._curve_thread.join(timeout)

    def wait_for_suggestion(self, timeout: float) -> None:
        if self._tune_thread is not None:
            self._tune_thread.join(timeout)
