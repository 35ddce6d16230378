"""The sliders' next frames, kept in the page, so a slider step there makes no round trip to the kernel.

A step drawn by the kernel waits for the kernel to hear of it, find the frame and send it, and for the page
to receive it: 30–50 ms before Plotly even starts (benchmarks/RESULTS.md). The kernel already computes the
frames of the next slider positions ahead of time (``prefetch.py``); this widget hands them to the page as
they are ready, and the page draws a step whose frame it holds as soon as the slider moves; while the last frame
it drew is not on screen yet, it only notes later moves and draws the last of them once it is.

The protocol, all in custom messages of this widget:
- kernel → page ``frame``: the light frame of one slider position (the arrays as binary buffers), a token,
  and the values of every other control it was computed for (``context``); ``clear``: forget every frame.
- page → kernel ``held``: after every change, the tokens of the frames it holds. Messages from one page
  arrive in order, so when the kernel handles a slider step it knows whether the page held that step's frame
  when the slider moved; if so it sends nothing.
- page → kernel, right after the step's value: ``drew`` (token), and the kernel mirrors that frame in the
  Python figure, so its next update is computed against what the page shows; or ``missed`` (token): the
  page held the frame but could not draw it (a control had changed in the page meanwhile, or the figure is
  not displayed), and the kernel sends the frame after all.
- page → kernel ``shown`` (edit id), two animation frames after a frame the kernel sent reached the page: the
  kernel sends the next light frame only then (``busy``), so frames never queue up in the page.
- ``seen`` (with ``drew`` and ``missed``): the highest trace edit id of the kernel's messages to the figure
  that had reached the page when it drew. A frame the kernel sent for an earlier position after that one was
  still on its way, and the page draws it over the step it drew itself; so when the figure's last edit id is
  higher, the kernel sends the step's frame again (``stale``) instead of mirroring it.

With the explorer shown in two pages at once, "held" reports the last page that spoke; the other page may
show the previous frame until the controls rest (the settled redraw goes to every page).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as W
import numpy as np
import traitlets as T


@dataclass
class ClocksUpdate:
    """One frame of the two clocks as sent to the page: per trace index its x, y and text, and the title;
    ``rows`` maps each clickable trace to the Result row of every point drawn (for the inspector)."""

    traces: dict[int, dict[str, Any]]
    title: str
    rows: dict[str, np.ndarray]
    note: str  # what the frame leaves out, in words (also in the title)


def mirror(figure: Any, update: ClocksUpdate) -> None:
    """Make the Python figure hold a frame the page drew by itself, sending nothing, so the kernel's next
    update is computed against what the page shows. Plotly's FigureWidget has no public way to take a change
    the page made; these are the steps its plotly_update takes before it sends."""
    indexes = sorted(update.traces)
    figure._perform_plotly_restyle({key: [update.traces[i][key] for i in indexes] for key in ("x", "y", "text")},
                                   indexes)
    figure._perform_plotly_relayout({"title.text": update.title})


def _synced_value_trait(widget: W.Widget) -> str:
    """Selection widgets (Dropdown, ToggleButtons) sync ``index``; every other control syncs ``value``."""
    return "index" if isinstance(widget, W.widgets.widget_selection._Selection) else "value"


class PageFrames(anywidget.AnyWidget):
    """``push`` frames of slider positions; ``holds`` says whether the page drew a step by itself."""

    _esm = Path(__file__).with_name("page_frames.js")
    sliders = T.List(T.Instance(W.Widget)).tag(sync=True, **W.widget_serialization)
    watched = T.List(T.Instance(W.Widget)).tag(sync=True, **W.widget_serialization)  # every control, sliders too
    figure = T.Instance(W.Widget).tag(sync=True, **W.widget_serialization)  # the FigureWidget to draw in
    capacity = T.Int(12).tag(sync=True)

    def __init__(self, sliders: list[W.Widget], watched: list[W.Widget], figure: W.Widget,
                 on_drawn: Callable[[Hashable, ClocksUpdate, bool], None], on_missed: Callable[[Hashable], None],
                 on_shown: Callable[[], None]):
        super().__init__(sliders=sliders, watched=watched, figure=figure, layout=W.Layout(display="none"))
        self._on_drawn, self._on_missed, self._on_shown = on_drawn, on_missed, on_shown
        self._shown = 0  # the last kernel edit of the figure the page has shown (0: no page has said)
        self._sent_at = 0.0  # when the kernel last sent the figure a trace edit (time.monotonic)
        figure.observe(self._sent, names=["_py2js_update", "_py2js_restyle"])
        self._token = 0
        self._pushed: dict[int, tuple[Hashable, ClocksUpdate]] = {}  # token → request and frame
        self._held: set[int] = set()  # as the page last reported
        self._lock = threading.Lock()  # frames are pushed from the prefetch thread
        self.drawn_in_page = 0  # steps the page drew by itself
        self.on_msg(self._on_page_message)

    def synced(self) -> tuple[tuple[str, str, Any], ...]:
        """Every watched control's synced value as the kernel has it now, by model id (read on the kernel's
        thread, and handed to the thread that pushes a frame)."""
        return tuple((w.model_id, trait, getattr(w, trait)) for w in self.watched for trait in [_synced_value_trait(w)])

    def context(self, slider: W.Widget, synced: tuple[tuple[str, str, Any], ...] | None = None) -> list[list[Any]]:
        """The synced values (``synced``, else as the kernel has them now) of every control but ``slider`` (the
        page compares its own values with these before drawing a frame of that slider)."""
        return [[model_id, trait, value] for model_id, trait, value in (self.synced() if synced is None else synced)
                if model_id != slider.model_id]

    def push(self, request: Hashable, slider: W.Widget, value: float, frame: ClocksUpdate,
             synced: tuple[tuple[str, str, Any], ...] | None = None) -> None:
        """Send the frame computed for ``request``: the other controls as ``synced`` says (from a thread other than
        the kernel's, always give it: the widgets are the kernel's), ``slider`` at ``value``."""
        with self._lock:
            self._token += 1
            token = self._token
            self._pushed[token] = (request, frame)
            for old in [t for t in self._pushed if t <= token - 4 * self.capacity]:
                del self._pushed[old]
        buffers: list[memoryview] = []

        def spec(values: Any) -> dict[str, Any]:
            array = np.ascontiguousarray(values)
            array = array if array.dtype == np.float32 else array.astype(np.float64)
            buffers.append(array.data.cast("B"))
            return {"buffer": len(buffers) - 1, "dtype": str(array.dtype)}

        traces = sorted(frame.traces)
        updates = [frame.traces[i] for i in traces]
        content = {"kind": "frame", "token": token, "slider": slider.model_id, "value": float(value),
                   "context": self.context(slider, synced), "traces": traces, "title": frame.title,
                   "x": [spec(u["x"]) for u in updates], "y": [spec(u["y"]) for u in updates],
                   "text": [None if u["text"] is None else list(u["text"]) for u in updates]}
        self.send(content, buffers)

    def holds(self, request: Hashable) -> bool:
        """Whether the page holds the frame of this request (when handling a slider step: it drew it)."""
        with self._lock:
            return any(self._pushed[t][0] == request for t in self._held if t in self._pushed)

    def _sent(self, _change: object) -> None:
        self._sent_at = time.monotonic()

    def busy(self) -> bool:
        """Whether the page is still drawing a frame the kernel sent: it has not shown the last edit sent, under a
        second ago (a page that stopped answering, or never did, is not waited for)."""
        return 0 < self._shown < self._last_edit() and time.monotonic() - self._sent_at < 1.0

    def stale(self, seen: object) -> bool:
        """Whether the kernel sent the figure a trace edit the page had not received when it drew (``seen``, the
        page's last; a page that does not say is taken as up to date)."""
        return isinstance(seen, int) and self._last_edit() > seen

    def _last_edit(self) -> int:
        """The id of the last trace edit the kernel sent the figure (plotly's FigureWidget counts them)."""
        return int(getattr(self.figure, "_last_trace_edit_id", 0))

    def clear(self) -> None:
        with self._lock:
            self._pushed.clear()
            self._held.clear()
        self.send({"kind": "clear"})

    def _on_page_message(self, _widget: object, content: dict[str, Any], _buffers: object) -> None:
        kind = content.get("kind")
        with self._lock:
            if kind == "held":
                self._held = {int(t) for t in content["tokens"]}
            elif kind == "shown":
                self._shown = max(self._shown, int(content["edit"]))
            pushed = self._pushed.get(int(content["token"])) if kind in ("drew", "missed") else None
        if kind == "shown":
            self._on_shown()
        if pushed is not None:
            request, frame = pushed
            if kind == "drew":
                self.drawn_in_page += 1
                self._on_drawn(request, frame, self.stale(content.get("seen")))
            else:
                self._on_missed(request)
