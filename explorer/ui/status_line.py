"""The one line above the figures where the explorer speaks: an error in the controls or a file, or a note
(what an uploaded file was read as).

A part of its own because the two kinds behave differently: the next good refresh clears an error (the
settings work again) but leaves a note standing, so the line remembers which it shows.
"""

from __future__ import annotations

import html

import ipywidgets as W


class StatusLine:
    """``say(text)`` shows an error (escaped, red); ``say(text, error=False)`` a note (HTML as given)."""

    def __init__(self) -> None:
        self.html = W.HTML()
        self._saying_error = False

    def say(self, text: str, error: bool = True) -> None:
        color = "#a00" if error else "#333"
        self.html.value = f"<span style='color:{color}'>{html.escape(text) if error else text}</span>" if text else ""
        self._saying_error = error and bool(text)

    def clear_error(self) -> None:
        """The settings work now: an error shown goes; a note stays."""
        if self._saying_error:
            self.say("")
