"""A plotly FigureWidget whose state, when a page asks for it, is the figure as it is now.

plotly's FigureWidget syncs its traces and layout (``_widget_data``, ``_widget_layout``) only when it is created
and when it is displayed; every later change travels as a one-off restyle or relayout message to the pages
connected at that moment. A page that connects later reads the synced state and draws the figure as it was
first shown: empty, for a figure the explorer fills once its first result is ready. That is every figure of the
explorer served by Voilà (`make app`: the page connects after the notebook has run) and of a JupyterLab page
reloaded while the kernel runs.

A page asks ipywidgets for the whole state of every widget when it connects (``get_state()`` with no key; a
single trait's change asks with its key). Only then is the figure's current data copied into the synced traits,
without a message to the pages already connected (they have it): nothing more is sent on a slider step.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go


class LiveFigure(go.FigureWidget):  # type: ignore[misc]
    def get_state(self, key: Any = None, drop_defaults: bool = False) -> dict[str, Any]:
        built = "_layout_obj" in self.__dict__  # (ipywidgets asks once before plotly has built the figure)
        if key is None and built:  # a page connecting: give it the figure as it is now, not as first shown
            self._trait_values["_widget_data"] = deepcopy(self._data)
            self._trait_values["_widget_layout"] = deepcopy(self._layout_obj._props)
        state: dict[str, Any] = super().get_state(key=key, drop_defaults=drop_defaults)
        return state


class FigureOnDemand:
    """A figure made the first time something is drawn in it, in a box hidden until then (``box``).

    Each FigureWidget brings plotly.js's widget bundle (~5 MB, its ``_esm``) to the page in its state, and the page
    loads that module once per figure. The compare and job-log panels' figures, hidden until used, cost every Run
    All two of those loads (benchmarks/RESULTS.md). ``made`` hears of each figure made (the page fits its width).
    """

    def __init__(self, made: Callable[[LiveFigure], None]):
        self._made = made
        self.made: LiveFigure | None = None
        self.box = W.VBox([], layout=W.Layout(min_width="0", display="none"))

    def figure(self) -> LiveFigure:
        """The figure, made now if it was not yet, and its box shown."""
        if self.made is None:
            self.made = LiveFigure()
            self.box.children = (self.made,)
            self._made(self.made)
        self.box.layout.display = None
        return self.made

    def hide(self) -> None:
        """Hidden and emptied (an empty figure showed bare axes, with no word of what fills them)."""
        self.box.layout.display = "none"
        if self.made is not None:
            self.made.data = ()
