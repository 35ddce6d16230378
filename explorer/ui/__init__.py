"""The JupyterLab explorer: ipywidgets controls and Plotly FigureWidgets over the core's Result."""

from explorer.ui.app import Explorer, explore
from explorer.ui.inspector import explain_event, explain_window

__all__ = ["Explorer", "explain_event", "explain_window", "explore"]
