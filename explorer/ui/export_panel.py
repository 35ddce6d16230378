""""Copy config as…": the controls' settings as code for an engine, kept current as the controls move.

A panel of its own because it is the one that follows every control change (``refresh`` on each step) and
needs only the config and the stream's column names, through callables, like the other panels.
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as W

from explorer.config import RunConfig
from explorer.errors import InputError
from explorer.export import TARGETS, ExportSource, export
from explorer.streams import Stream
from explorer.ui.rule_controls import FILL


class ExportPanel:
    """"Copy config as…": the current settings in the chosen engine's API, with the stream's own column names,
    ready to paste; the copy button puts the text on the clipboard (in the page: the kernel has no clipboard)."""

    COPY = ("<button class='jupyter-button wx-copy' title='copy the snippet to the clipboard' onclick=\""
            "const box = this.closest('.wx-export').querySelector('textarea');"
            "navigator.clipboard.writeText(box.value).then(() => { this.textContent = 'copied'; "
            "setTimeout(() => { this.textContent = 'copy'; }, 1500); });\">copy</button>")

    def __init__(self, config: Callable[[], RunConfig], stream: Callable[[], Stream]):
        self._config, self._stream = config, stream
        self.target = W.Dropdown(options=list(TARGETS), value="voltsp-yaml", description="copy as")
        self.text = W.Textarea(layout=W.Layout(width=FILL, height="16em"))
        self.copy = W.HTML(self.COPY)
        self.target.observe(lambda _c: self.refresh(), names="value")

    def refresh(self) -> None:
        try:
            self.text.value = export(self._config(), self.target.value, ExportSource.of(self._stream()))
        except InputError as error:
            self.text.value = f"# {error}"

    def box(self) -> W.Widget:
        self.refresh()
        box = W.VBox([W.HBox([self.target, self.copy]), self.text])
        box.add_class("wx-export")
        return box
