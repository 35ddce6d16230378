"""The JupyterLab explorer: ipywidgets controls and Plotly FigureWidgets over the core's Result."""

from explorer.ui.app import Explorer, explain_event, explain_window, explore

__all__ = ["Explorer", "explain_event", "explain_window", "explore"]
