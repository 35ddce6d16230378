"""The explorer's Spark panel: run the configuration on Spark, or sweep its curve there, and hold what Spark
computes against the preview (the other panels: ``compare_panel.py``, ``export_panel.py``, ``job_log_panel.py``).

Each panel gets what it needs as callables (the current stream, config and Result) so it knows nothing of
the explorer's widgets, and the explorer knows nothing of Spark: the Spark runner is imported only when
the button is pressed.
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import ipywidgets as W

from explorer.config import RunConfig
from explorer.core import Result, run
from explorer.core.result import differences
from explorer.errors import ExplorerError, InputError
from explorer.metrics import CurveRow
from explorer.streams import Stream, batches_for
from explorer.timeutil import MICROS, format_instant, human_duration
from explorer.ui.sweep import Sweep
from explorer.ui.words import plural

S = MICROS["s"]
T = TypeVar("T")
MAX_SPARK_SECONDS = 600  # a run expected to take longer is started only on "run anyway"


class SparkPanel:
    """"Run on Spark", in the background with a progress bar and a cancel button, then a badge saying whether
    Spark agrees with the preview. When Spark's own query can express the settings (the ``spark`` preset's rules)
    it runs that query, withWatermark + window, one micro-batch per arrival batch: what Spark itself does, held
    against the preset's prediction. Otherwise, or when asked, it runs the preview's rules as a Spark query.
    "Sweep the curve on Spark" evaluates the curve's delays as Spark tasks, with the same progress bar and cancel,
    and draws Spark's curve, held against the preview's.

    The run's thread gets what it reads at the start (stream, config, the preview then shown); what it writes
    back (the badge, the explorer's figure through ``show``) it writes holding ``lock``, the explorer's, after
    checking the stream is still the one it ran on: ``forget`` is called under the same lock."""

    INTRO = ("<i>With the spark preset's rules this runs Spark's own withWatermark + window query; with any other "
             "rules, those rules as a Spark Structured Streaming query (local[2]). The sweep evaluates the curve's "
             "delays as Spark tasks. The first run starts Spark (about 10 s).</i>")

    def __init__(self, stream: Callable[[], Stream], config: Callable[[], RunConfig],
                 preview: Callable[[], Result | None], show: Callable[[Result, Result], None],
                 sweep: Sweep, max_delay: Callable[[], float], lock: threading.RLock | None = None):
        self._stream, self._config, self._preview, self._show = stream, config, preview, show
        self._lock = lock if lock is not None else threading.RLock()
        self._sweep, self._max_delay = sweep, max_delay
        self.run_button = W.Button(description="Run on Spark", icon="play", button_style="primary",
                                   layout=W.Layout(width="auto"))
        self.sweep_button = W.Button(description="Sweep the curve on Spark", icon="line-chart",
                                     layout=W.Layout(width="auto"))
        self.cancel_button = W.Button(description="cancel", icon="stop", disabled=True)
        self.progress = W.IntProgress(value=0, min=0, max=1, description="micro-batches",
                                      style={"description_width": "initial"}, layout=W.Layout(width="26em"))
        self.status = W.HTML(self.INTRO)
        self.badge = W.HTML()
        self._stream_generation = 0  # a run finishing after the stream changed is not shown over the new one
        self.anyway = W.Checkbox(value=False, description="run anyway", indent=False)
        self.rules = W.Checkbox(value=False, description="the preview's rules, not Spark's own query", indent=False)
        self.result: Result | None = None
        self.curve: list[CurveRow] = []  # Spark's last sweep, as drawn
        self.thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self.run_button.on_click(self.start)
        self.sweep_button.on_click(self.start_sweep)
        self.cancel_button.on_click(lambda _b: self._cancel.set())

    def forget(self) -> None:
        """The stream changed: a badge, a status or a run under way belong to the old one."""
        with self._lock:
            self._stream_generation += 1
            self._cancel.set()
            self.result = None
            self.badge.value, self.status.value, self.progress.value = "", self.INTRO, 0

    def _native(self, config: RunConfig) -> bool:
        """Whether this run is Spark's own query: its settings say so, and the user did not ask otherwise."""
        from explorer.spark import native_query

        if self.rules.value:
            return False
        try:
            native_query(config)
        except InputError:
            return False
        return True

    def start(self, _button: object = None) -> None:
        if self.thread is not None and self.thread.is_alive():
            return
        stream, config, preview = self._stream(), self._config(), self._preview()
        from explorer.spark import expected_seconds, native_seconds, plan_micro_batches

        native = self._native(config)
        batches = batches_for(stream, config)
        if native:
            seconds = native_seconds(len(batches.commit_time))
            what = f"{plural(len(batches.commit_time), 'arrival batch', 'arrival batches')}, one Spark micro-batch each"
        else:
            plan = plan_micro_batches(batches)
            seconds, what = expected_seconds(plan, len(stream)), plan.describe()
        if seconds > MAX_SPARK_SECONDS and not self.anyway.value:
            self.status.value = (f"<span style='color:#a00'>{plural(len(stream), 'event')} in {what}: about "
                                 f"{human_duration(seconds * S)} on Spark (local[2]). Tick 'run anyway' to start it"
                                 f"{'' if not native else ', or fewer arrival batches (batches control)'}.</span>")
            return
        self._begin("micro-batches", self._work, stream, config, native, preview)

    def _begin(self, counting: str, work: Callable[..., None], *args: Any) -> None:
        """Start ``work(*args, generation)`` in the background, the buttons and the progress bar set for it."""
        self._cancel.clear()
        self.run_button.disabled = self.sweep_button.disabled = True
        self.cancel_button.disabled = False
        self.progress.value, self.progress.description, self.badge.value = 0, counting, ""
        self.status.value = "starting Spark…"
        self.thread = threading.Thread(target=work, args=(*args, self._stream_generation), daemon=True)
        self.thread.start()

    def _finish(self, generation: int, work: Callable[[], T]) -> T | None:
        """``work()``'s value, or None when it failed (cancelled, too big, Spark failed: said in one line, with the
        checkpoint for the rules) or the stream changed meanwhile; the buttons are free again either way."""
        try:
            value = work()
        except ExplorerError as error:
            if generation == self._stream_generation:
                self.status.value = f"<span style='color:#a00'>{html.escape(str(error))}</span>"
            return None
        finally:
            self.run_button.disabled = self.sweep_button.disabled = False
            self.cancel_button.disabled = True
        return value if generation == self._stream_generation else None

    def _work(self, stream: Stream, config: RunConfig, native: bool, preview: Result | None, generation: int) -> None:
        from explorer.spark import as_spark_reports, run_spark, run_spark_native, spark_session

        started = time.perf_counter()
        absolute = stream.absolute
        if native:
            result = self._finish(generation, lambda: run_spark_native(
                stream, config, spark_session, progress=partial(self._on_native_progress, absolute),
                cancel=self._cancel))
        else:
            result = self._finish(generation, lambda: run_spark(stream, config, spark_session,
                                                                progress=partial(self._on_progress, absolute),
                                                                cancel=self._cancel))
        if result is None:
            return
        seconds = time.perf_counter() - started
        local = preview if preview is not None and preview.engine == "local" and preview.config == config \
            else run(stream, config)
        expected = as_spark_reports(local) if native else local
        found = differences(expected, result)
        with self._lock:  # the explorer's: the stream cannot change while the Result is shown
            if generation == self._stream_generation:
                self._report(result, expected, found, native, seconds)

    def _report(self, result: Result, expected: Result, found: list[str], native: bool, seconds: float) -> None:
        self.result = result
        who = "Spark's own query" if native else "Spark"  # Spark, running the preview's rules
        self.status.value = (f"{who} finished {plural(self.progress.value, 'micro-batch', 'micro-batches')} in {seconds:.1f} s; "
                             "showing its "
                             "Result" + (" (its watermark is the one Spark reported)" if native else "")
                             + ", with the preview's effective watermark dotted beside it.")
        if found:
            items = "".join(f"<li>{html.escape(f)}</li>" for f in found[:8])
            self.badge.value = (f"<div style='background:#fde;padding:4px'><b>{who} and the preview differ</b>"
                                f"<ul>{items}</ul></div>")
        else:
            self.badge.value = (f"<div style='background:#dfd;padding:4px'><b>{who} agrees with the preview</b>: "
                                f"{plural(len(result.windows), 'emission')}, "
                                f"{plural(len(result.events), 'event status', 'event statuses')} and the "
                                "watermark per micro-batch are identical.</div>")
        self._show(result, expected)

    def start_sweep(self, _button: object = None) -> None:
        """The completeness–latency curve of the current settings, evaluated by Spark (one task per delay, spread
        over its executors: for streams too big for the kernel, with a cluster behind the session), drawn in
        the curve figure and held against the preview's curve when that one is complete."""
        if self.thread is not None and self.thread.is_alive():
            return
        delays = self._sweep.delays(self._max_delay())
        self.progress.max = len(delays)
        self._begin("delays", self._sweep_work, self._stream(), self._config(), delays)

    def _sweep_work(self, stream: Stream, config: RunConfig, delays: list[int], generation: int) -> None:
        from explorer.spark import curve_on_spark, spark_session

        started = time.perf_counter()
        rows = self._finish(generation, lambda: curve_on_spark(spark_session, stream, [config], delays,
                                                               progress=self._on_sweep_progress, cancel=self._cancel))
        if rows is None:
            return
        with self._lock:
            if generation == self._stream_generation:
                self._report_curve(stream, config, delays, rows, time.perf_counter() - started)

    def _report_curve(self, stream: Stream, config: RunConfig, delays: list[int], rows: list[CurveRow],
                      seconds: float) -> None:
        self.curve = rows
        self._sweep.draw(rows, title="completeness vs latency (Spark's sweep)")
        self.status.value = (f"Spark evaluated {plural(len(rows), 'delay')} (0 to {human_duration(delays[-1])}) in "
                             f"{seconds:.1f} s; the curve shows its points.")
        local = self._sweep.rows_for(stream, config)
        if local is None:
            self.badge.value = "<i>the preview's curve is not complete yet: nothing to hold Spark's against</i>"
        elif local == rows:
            self.badge.value = (f"<div style='background:#dfd;padding:4px'><b>Spark's curve equals the preview's</b>: "
                                f"completeness, drops and latencies identical at all {plural(len(rows), 'delay')}.</div>")
        else:
            first = next(a for a, b in zip(local, rows) if a != b)
            self.badge.value = (f"<div style='background:#fde;padding:4px'><b>Spark's curve and the preview's differ"
                                f"</b>, first at delay {first.delay:g} s.</div>")

    def _on_sweep_progress(self, p: Any) -> None:
        self.progress.max, self.progress.value = p.total, p.done
        self.status.value = f"Spark has evaluated {p.done:,} of {plural(p.total, 'delay')}"

    def _on_progress(self, absolute: bool, p: Any) -> None:
        self.progress.max = p.batches
        self.progress.value = p.batch
        wm = format_instant(p.watermark, absolute)
        self.status.value = f"micro-batch {p.batch}/{p.batches}: {plural(p.rows, 'row')}, watermark {wm}, {p.duration_ms} ms"

    def _on_native_progress(self, absolute: bool, p: Any, batches: int) -> None:
        """Spark's own progress report: its watermark, and the rows it dropped (counted after aggregation)."""
        self.progress.max = max(batches, p.batch_id + 1)
        self.progress.value = p.batch_id + 1
        wm = format_instant(p.watermark, absolute)
        self.status.value = (f"micro-batch {p.batch_id + 1}/{batches}: {plural(p.input_rows, 'row')}, Spark's watermark {wm}, "
                             f"{p.dropped} dropped by it, {p.duration_ms} ms")

    def box(self) -> W.Widget:
        row = W.HBox([self.run_button, self.sweep_button, self.cancel_button, self.progress, self.anyway, self.rules],
                     layout=W.Layout(flex_flow="row wrap"))  # folds on a narrow page rather than cutting labels
        return W.VBox([row, self.status,
                       self.badge])
