""""Run on <engine>": the job the controls describe, exported for a real engine (Flink, Beam, Bytewax, or Spark's
exported program), run by that engine on the stream's events in a process of its own, and held against the
preview, as ``python -m explorer verify`` does (``explorer.verify``).

A panel of its own beside the Spark panel: the Spark panel runs the preview's configuration inside Spark and
draws what Spark computed; this one runs the program a user deploys and says whether the engine did what the
explorer predicts, firing by firing. The engines other than Spark run from their venvs (``make engines``); a
missing venv, or settings the engine cannot run, is one line in the panel before anything starts.
"""

from __future__ import annotations

import html
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import ipywidgets as W

from explorer.config import RunConfig
from explorer.errors import ExplorerError
from explorer.streams import Stream
from explorer.verify import Verdict, report, verify
from explorer.verify.engines import ENGINE_JOBS


class EnginePanel:
    """The engine to run on, a run button named after it, a cancel button, the seconds the job has run, then a
    badge (identical or DIFFERENT) and the comparison in words."""

    INTRO = ("<i>Exports the job for the engine, runs it with the real engine on these events (Flink, Beam and "
             "Bytewax from the venvs `make engines` builds) and holds every firing against the preview. The preview "
             "must use the engine's preset.</i>")

    def __init__(self, stream: Callable[[], Stream], config: Callable[[], RunConfig], lock: threading.RLock):
        self._stream, self._config, self._lock = stream, config, lock
        self.engine = W.Dropdown(options=list(ENGINE_JOBS), value="flink", description="engine")
        self.run_button = W.Button(description="Run on flink", icon="play", button_style="primary",
                                   layout=W.Layout(width="auto"))
        self.cancel_button = W.Button(description="cancel", icon="stop", disabled=True)
        self.status = W.HTML(self.INTRO)
        self.badge = W.HTML()
        self.lines = W.HTML()
        self.verdict: Verdict | None = None
        self.thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._generation = 0  # a run finishing after the stream changed is not shown over the new one
        self.engine.observe(lambda change: setattr(self.run_button, "description", f"Run on {change['new']}"),
                            names="value")
        self.run_button.on_click(self.start)
        self.cancel_button.on_click(lambda _b: self._cancel.set())

    def forget(self) -> None:
        """The stream changed: the verdict shown belongs to the old one."""
        with self._lock:
            self._generation += 1
            self.verdict = None
            self.badge.value = self.lines.value = ""
            self.status.value = self.INTRO

    def start(self, _button: object = None) -> None:
        engine, config, stream = self.engine.value, self._config(), self._stream()
        try:
            ENGINE_JOBS[engine].check(config)
            ENGINE_JOBS[engine].command()  # the engine is installed
        except ExplorerError as error:
            self.status.value = f"<span style='color:#b00'>{html.escape(str(error))}</span>"
            return
        self._cancel.clear()
        self.run_button.disabled, self.cancel_button.disabled = True, False
        self.badge.value = self.lines.value = ""
        self.status.value = f"running the exported job on {engine}…"
        generation = self._generation
        self.thread = threading.Thread(target=self._work, args=(stream, config, engine, generation), daemon=True)
        self.thread.start()

    def _work(self, stream: Stream, config: RunConfig, engine: str, generation: int) -> None:
        shown = [-1]

        def waiting(seconds: float) -> None:
            if int(seconds) != shown[0]:
                shown[0] = int(seconds)
                self.status.value = f"running the exported job on {engine}… {shown[0]} s"

        try:
            with tempfile.TemporaryDirectory(prefix="wx-run-on-") as work:
                verdict = verify(stream, config, engine, Path(work), self._cancel, waiting)
        except ExplorerError as error:
            with self._lock:
                if generation == self._generation:
                    self.status.value = f"<span style='color:#b00'>{html.escape(str(error))}</span>"
            return
        finally:
            self.run_button.disabled, self.cancel_button.disabled = False, True
        with self._lock:
            if generation != self._generation:
                return
            self.verdict = verdict
            words = report(verdict)
            same = verdict.identical
            self.badge.value = (f"<b style='color:{'#070' if same else '#b00'}'>{engine}: "
                                f"{'identical to the preview' if same else 'DIFFERENT from the preview'}</b>")
            self.lines.value = "<pre style='white-space:pre-wrap'>" + html.escape("\n".join(words[1:])) + "</pre>"
            self.status.value = html.escape(words[0])

    def box(self) -> W.Widget:
        return W.VBox([W.HBox([self.engine, self.run_button, self.cancel_button]), self.status, self.badge,
                       self.lines])
