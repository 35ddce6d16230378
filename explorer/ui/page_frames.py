"""The delay slider's next frames, kept in the page, so a step there makes no round trip to the kernel.

A slider step drawn by the kernel waits for the kernel to hear of it, find the frame and send it, and for the
page to receive it: 35–70 ms before Plotly even starts (see benchmarks/RESULTS.md). The kernel already
computes the frames of the next positions ahead of time (``prefetch.py``); this widget hands them to the page
as they are ready. The page draws a step whose frame it holds as soon as the slider moves.

The protocol, all in custom messages of this widget:
- kernel → page ``frame``: one delay's light frame (the arrays as binary buffers), a token, and the values
  of the watched controls it was computed for (``context``); ``clear``: forget every frame.
- page → kernel ``held``: after every change, the delays it holds with their tokens. Messages from one page
  arrive in order, so when the kernel handles a slider step it knows whether the page held that frame when
  the key was pressed; if so it sends nothing.
- page → kernel, right after the step's value: ``drew`` (token), and the kernel mirrors that frame in the
  Python figure, so its next update is computed against what the page shows; or ``missed`` (token): the
  page held the frame but could not draw it (a watched control had changed in the page meanwhile, or the
  figure is not displayed), and the kernel sends the frame after all.

With the explorer shown in two pages at once, "held" reports the last page that spoke; the other page may
show the previous frame until the controls rest (the settled redraw goes to every page).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path

import threading

import anywidget
import ipywidgets as W
import numpy as np
import traitlets as T


@dataclass
class ClocksUpdate:
    """One frame of the two clocks as sent to the page: per trace index its x, y and text, and the title;
    ``rows`` maps each clickable trace to the Result row of every point drawn (for the inspector)."""

    traces: dict[int, dict]
    title: str
    rows: dict[str, np.ndarray]
    note: str  # what the frame leaves out, in words (also in the title)


def _synced_value_trait(widget: W.Widget) -> str:
    """Selection widgets (Dropdown, ToggleButtons) sync ``index``; every other control syncs ``value``."""
    return "index" if isinstance(widget, W.widgets.widget_selection._Selection) else "value"


class PageFrames(anywidget.AnyWidget):
    """``push`` frames for the slider's positions; ``holds`` says whether the page drew a step by itself."""

    _esm = Path(__file__).with_name("page_frames.js")
    slider = T.Instance(W.Widget).tag(sync=True, **W.widget_serialization)
    watched = T.List(T.Instance(W.Widget)).tag(sync=True, **W.widget_serialization)
    figure = T.Instance(W.Widget).tag(sync=True, **W.widget_serialization)  # the FigureWidget to draw in
    capacity = T.Int(8).tag(sync=True)

    def __init__(self, slider: W.Widget, watched: list[W.Widget], figure: W.Widget,
                 on_drawn: Callable[[Hashable, ClocksUpdate], None], on_missed: Callable[[Hashable], None]):
        super().__init__(slider=slider, watched=watched, figure=figure, layout=W.Layout(display="none"))
        self._on_drawn, self._on_missed = on_drawn, on_missed
        self._token = 0
        self._pushed: dict[int, tuple[Hashable, ClocksUpdate]] = {}  # token → request and frame
        self._held: dict[float, int] = {}  # as the page last reported: delay → token
        self._lock = threading.Lock()  # frames are pushed from the prefetch thread
        self.drawn_in_page = 0  # steps the page drew by itself
        self.on_msg(self._on_page_message)

    def context(self) -> list[list]:
        """The watched controls' synced values as the kernel has them (the page checks its own against it)."""
        return [[w.model_id, trait, getattr(w, trait)] for w in self.watched for trait in [_synced_value_trait(w)]]

    def push(self, request: Hashable, delay: float, frame: ClocksUpdate) -> None:
        """Send the frame computed for ``request``, whose delay slider value is ``delay``."""
        with self._lock:
            self._token += 1
            token = self._token
            self._pushed[token] = (request, frame)
            for old in [t for t in self._pushed if t <= token - 4 * self.capacity]:
                del self._pushed[old]
        buffers: list[memoryview] = []

        def spec(values) -> dict:
            array = np.ascontiguousarray(values)
            array = array if array.dtype == np.float32 else array.astype(np.float64)
            buffers.append(memoryview(array).cast("B"))
            return {"buffer": len(buffers) - 1, "dtype": str(array.dtype)}

        traces = sorted(frame.traces)
        updates = [frame.traces[i] for i in traces]
        content = {"kind": "frame", "delay": float(delay), "token": token, "context": self.context(),
                   "traces": traces, "title": frame.title, "x": [spec(u["x"]) for u in updates],
                   "y": [spec(u["y"]) for u in updates],
                   "text": [None if u["text"] is None else list(u["text"]) for u in updates]}
        self.send(content, buffers)

    def holds(self, request: Hashable, delay: float) -> bool:
        """Whether the page held this request's frame when the step reached the kernel (and so drew it)."""
        with self._lock:
            token = next((t for d, t in self._held.items() if abs(d - delay) <= 1e-9 * max(1.0, abs(delay))), None)
            return token in self._pushed and self._pushed[token][0] == request

    def clear(self) -> None:
        with self._lock:
            self._pushed.clear()
            self._held.clear()
        self.send({"kind": "clear"})

    def _on_page_message(self, _widget, content: dict, _buffers) -> None:
        kind = content.get("kind")
        with self._lock:
            if kind == "held":
                self._held = {float(d): int(t) for d, t in content["frames"]}
            pushed = self._pushed.get(int(content["token"])) if kind in ("drew", "missed") else None
        if pushed is not None:
            request, frame = pushed
            if kind == "drew":
                self.drawn_in_page += 1
                self._on_drawn(request, frame)
            else:
                self._on_missed(request)
