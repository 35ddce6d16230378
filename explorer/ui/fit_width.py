"""Every figure as wide as the box it is shown in, following that box: the page's width, JupyterLab's sidebar
opening, a row of figures folding under another on a narrow page.

Plotly's FigureWidget draws its first frame before the page has laid the widget out, so plotly.js finds no
width and takes its default, 700 px; and plotly's ``responsive`` follows the browser window only, not the
notebook's column (opening the file browser narrows the column, not the window). At 1280 × 800 with the file
browser open the two clocks then got a 484 px column for a 700 px figure: its title, legend, right third and
zoom bar were cut off. This hidden widget watches each figure's box in the page (a ResizeObserver) and sets
the figure's width to it through the figure's own widget model, the way a relayout from the kernel arrives.
The kernel never hears of the widths: they are the page's business, and two pages may differ.
"""

from __future__ import annotations

import anywidget
import ipywidgets as W
import traitlets as T


# the page's part, here rather than in a .js file beside it so the package data need not list it
_ESM = """// Each figure drawn at the width of the box it is shown in, and again whenever that box changes width (the
// page resized, JupyterLab's sidebar opened or closed, a row of figures folded under another). See
// fit_width.py for why plotly's own autosize and `responsive` are not enough inside a widget.

const widgetId = (ref) => String(ref).replace(/^IPY_MODEL_/, "");

export default {
  render({ model }) {
    const watched = new WeakSet(); // plot elements already observed
    const figures = [];
    let stopped = false;

    // The width goes through the figure's own widget model, as the kernel's relayouts do: every view of the
    // figure redraws with its own plotly.js, and the model keeps the width for a view drawn later. Marked as
    // coming from elsewhere (as ipywidgets marks the kernel's changes), it is not echoed to the kernel.
    function fit(figure, el) {
      const full = el._fullLayout;
      const width = Math.floor(el.getBoundingClientRect().width);
      if (!full || width < 100 || Math.abs(full.width - width) < 2) return;
      const relayout = { relayout_data: { width }, layout_edit_id: -1, source_view_id: null };
      figure._state_lock = { _py2js_relayout: relayout };
      try {
        figure.set("_py2js_relayout", relayout);
      } finally {
        figure._state_lock = null;
      }
    }

    const observer = new ResizeObserver((entries) => {
      for (const entry of entries) {
        const found = figures.find(([, el]) => el === entry.target);
        if (found) requestAnimationFrame(() => fit(...found));
      }
    });

    // views appear when a figure is displayed (and again in every output that displays it): look for new ones
    async function attach() {
      const models = await Promise.all(model.get("figures").map((ref) => model.widget_manager.get_model(widgetId(ref))));
      for (const figure of models) {
        for (const view of await Promise.all(Object.values(figure.views || {}))) {
          const el = view && view.el;
          if (!el || watched.has(el)) continue;
          watched.add(el);
          figures.push([figure, el]);
          observer.observe(el);
          // a redraw from the kernel may bring a width of its own (a figure's layout set anew): fit it again
          if (el.on) el.on("plotly_afterplot", () => requestAnimationFrame(() => fit(figure, el)));
          else setTimeout(() => el.on && el.on("plotly_afterplot", () => requestAnimationFrame(() => fit(figure, el))), 2000);
          fit(figure, el);
        }
      }
    }
    const poll = () => { if (!stopped) attach().finally(() => setTimeout(poll, 1000)); };
    poll();
    // a figure made later (a panel's, on first use) is fitted as it arrives, not at the next look: its view is
    // made after the model, when the panel displays it, so look every 100 ms for 3 s (the next once-a-second look
    // left a compare figure at plotly's 700 px in a 812 px panel, seen by the 1280 px page test)
    const added = () => {
      for (let wait = 0; wait <= 3000; wait += 100) setTimeout(() => { if (!stopped) attach(); }, wait);
    };
    model.on("change:figures", added);
    return () => { stopped = true; observer.disconnect(); model.off("change:figures", added); };
  },
};
"""


class FitWidth(anywidget.AnyWidget):
    """Display it once, anywhere near the figures (it takes no room); ``figures`` are FigureWidgets."""

    _esm = _ESM
    figures = T.List(T.Instance(W.Widget)).tag(sync=True, **W.widget_serialization)

    def __init__(self, figures: list[W.Widget]):
        super().__init__(figures=figures, layout=W.Layout(display="none"))

    def add(self, figure: W.Widget) -> None:
        """A figure made later (the page looks for new figures every second)."""
        self.figures = [*self.figures, figure]
