"""The explorer's page laid out for the width it gets: a laptop's 1280 px with JupyterLab's file browser open
as well as a wide screen.

Where the notebook is wide, the data and the settings are a column beside the figures; where it is not, they
sit above them (data beside settings) and the figures take the whole width. At 1280 px with the file browser
open the side column had left the two clocks a 484 px column for a 700 px figure, and the sliders' tracks
60 px. The sliders sit right above the two clocks, as wide as them. Every figure takes the width of its box
(``fit_width.py``); the histogram and the curve side by side, or one under the other.
``tests/test_browser_page.py`` measures the result in Chromium at 1280×800 and 1920×1080.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as W

if TYPE_CHECKING:
    from explorer.ui.app import Explorer


def page(explorer: Explorer) -> W.Widget:
    """The whole explorer as one widget."""
    x = explorer
    # the settings' flex basis (31em, the controls' 30em and a margin) beside the figures' (48em) decides where
    # they fold: both fit on a row of 79em (about 1,030 px), else the settings go above
    settings = W.Box([x.data.box(), x.controls.box()],
                     layout=W.Layout(flex="1 1 31em", flex_flow="row wrap", align_items="flex-start",
                                     align_content="flex-start", column_gap="2em"))
    target = W.HBox([x.sweep.target, x.sweep.apply, x.sweep.suggestion], layout=W.Layout(flex_flow="row wrap"))
    side = W.Box([figure_box(x.histogram, "1 1 26em"), figure_box(x.sweep.figure, "1 1 26em")],
                 layout=W.Layout(flex_flow="row wrap", width="100%"))
    # min_width 0 lets the column shrink below its content; its flex grow, far above the settings', gives it the
    # width the settings do not need when both share a row
    figures = W.VBox([x.message, x.cards, x.controls.sliders_box(), figure_box(x.clocks), x.stepper.box(), side,
                      target, W.HTML("<b>Inspector</b>"), x.inspector, panels(x), x.page_frames, x.fit_width],
                     layout=W.Layout(flex="1000 1 48em", min_width="0"))
    return W.Box([settings, figures], layout=W.Layout(flex_flow="row wrap", align_items="flex-start", width="100%"))


def panels(explorer: Explorer) -> W.Accordion:
    """The panels used now and then, collapsed: Spark, the exported job on an engine, a job's log, compare, copy
    config."""
    x = explorer
    accordion = W.Accordion(children=[x.spark_panel.box(), x.engine_panel.box(), x.job_log_panel.box(),
                                      x.compare_panel.box(), x.export_panel.box()])
    for i, title in enumerate(("Run on Spark", "Run the exported job on Flink, Beam, Bytewax or Spark",
                               "Explain a Spark job (its progress log)", "Compare engines", "Copy config as…")):
        accordion.set_title(i, title)
    return accordion


def figure_box(figure: W.Widget, flex: str | None = None) -> W.VBox:
    """A box for a figure to fill (the FigureWidget's own ``layout`` is Plotly's, so the box holds the page
    layout; ``flex`` for a box in a row): a column box stretches its child to its width, which ``fit_width``
    then gives the figure. Its ``min_width`` 0 keeps the figure's drawn width from holding the box open."""
    return W.VBox([figure], layout=W.Layout(flex=flex, min_width="0"))
