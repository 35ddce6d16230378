"""Messages to the page's Plotly figures: one uniform update per frame, and the axes kept as the page has them.

Apart from ``figures.py`` (plot-ready arrays, no widgets) because these work on a live FigureWidget and the
messages plotly.js receives: what is sent, what is left out because the page holds it already, and which
layout keys must travel with an update so that a date axis stays one.
"""

from __future__ import annotations

from typing import Any


import numpy as np
import plotly.graph_objects as go


def send(fig: go.FigureWidget, updates: dict[int, dict[str, Any]], layout: dict[str, Any] | None = None) -> None:
    """One message updating several traces that all set the same properties, leaving out traces whose
    values are already those (the page then decodes, and the kernel copies, less).

    Plotly's batch_update fills the properties a trace leaves alone with "undefined"; in the page such
    mixed messages lost whole arrays (the events' x/y and the emissions' y never arrived with plotly 7.1),
    so every message here is uniform. The browser test checks the arrays arrive.
    """
    keys = sorted({key for update in updates.values() for key in update})
    if any(set(update) != set(keys) for update in updates.values()):
        raise ValueError("every trace in one message must set the same properties")
    indexes = [i for i in sorted(updates) if not all(_same(fig.data[i][k], v) for k, v in updates[i].items())]
    if not indexes:
        if layout:
            fig.plotly_relayout(layout)
        return
    restyle, relayout, indexes = fig._perform_plotly_update(
        restyle_data={key: [updates[i][key] for i in indexes] for key in keys}, relayout_data=layout or {},
        trace_indexes=indexes)
    if "x" in keys or "y" in keys:
        relayout = {**date_axes(fig.layout._props), **relayout}
    if restyle or relayout:
        fig._send_update_msg(restyle, relayout, indexes)


def date_axes(layout: dict[str, Any]) -> dict[str, Any]:
    """Relayout keys that keep every date axis a date axis through an update that moves x or y.

    plotly.js re-guesses an axis' type when its traces' x or y change (numbers: linear), unless the same
    update names the type; and naming the type turns autorange on and drops the range unless the update
    names those too. So each date axis goes with its type, range and autorange as the layout holds them (the
    user's zoom comes back into the layout from the page: ``follow_page_zoom``). Linear axes need nothing:
    the guess is right. ``page_frames.js`` does the same for the frames the page draws itself. ``layout`` is
    the figure's own layout properties."""
    keys: dict[str, Any] = {}
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict) and axis.get("type") == "date":
            keys[f"{name}.type"] = "date"
            if axis.get("range") is not None and axis.get("autorange") is not True:
                keys[f"{name}.range"] = list(axis["range"])
                keys[f"{name}.autorange"] = False  # else naming the type turns it on
            else:
                keys[f"{name}.autorange"] = True
    return keys


def follow_page_zoom(fig: go.FigureWidget) -> None:
    """Keep the kernel's copy of the axes' zoom as the page has it, for ``date_axes``. A zoom in the page
    reaches the kernel as a new range but leaves its ``autorange: true`` standing (the page has dropped it),
    and an autoscale leaves the old range; either would send the page back to the other on the next frame."""

    def on_relayout(change: dict[str, Any]) -> None:
        data = (change["new"] or {}).get("relayout_data") or {}
        settle: dict[str, Any] = {}
        for axis in ("xaxis", "yaxis"):
            if any(key.startswith(f"{axis}.range") for key in data):
                settle[f"{axis}.autorange"] = False
            elif data.get(f"{axis}.autorange") is True:
                settle[f"{axis}.range"] = None
        if settle:
            fig._perform_plotly_relayout(settle)  # the page shows this already: nothing is sent

    fig.observe(on_relayout, names="_js2py_relayout")


def _same(current: Any, new: Any) -> bool:
    """Whether a trace property already holds ``new`` (arrays compared by value, NaN equal to NaN)."""
    if current is None or new is None:
        return current is None and new is None
    if isinstance(new, np.ndarray) and new.dtype.kind in "fiu":
        current = np.asarray(current)
        return current.dtype.kind in "fiu" and np.array_equal(current, new, equal_nan=new.dtype.kind == "f")
    return list(current) == list(new)
