"""The data box: a built-in generator (its name, seed and size) or an uploaded file; either way, a Stream.

A part of its own because where the stream comes from is one job (these widgets, each generator's options,
the upload form) and the explorer needs only the Stream that comes out, handed to ``on_stream``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import ipywidgets as W

from explorer.errors import InputError
from explorer.streams import GENERATORS, Stream, generate, load_events
from explorer.ui.upload_form import UploadForm

UPLOAD = "(uploaded file)"


def resolve_stream(stream: Stream | str | Path) -> Stream:
    """A Stream as given, a built-in generator's by name, or a file's by its path."""
    if isinstance(stream, Stream):
        return stream
    if isinstance(stream, str) and stream in GENERATORS:
        return generate(stream)
    return load_events(stream)


class DataPicker:
    """The stream picker, ``seed`` and ``size`` boxes, the load button and the upload form. ``on_stream`` gets
    each Stream picked; ``say`` shows a message (error or not)."""

    def __init__(self, on_stream: Callable[[Stream], None], say: Callable[[str, bool], None]):
        self._on_stream, self._say = on_stream, say
        self.source = W.Dropdown(options=list(GENERATORS) + [UPLOAD], value=None, description="stream",
                                 layout=W.Layout(width="22em"))
        self.seed = W.IntText(value=7, description="seed", layout=W.Layout(width="12em"))
        self.size = W.IntText(value=20000, description="events", layout=W.Layout(width="14em"))
        self.load_button = W.Button(description="load", icon="refresh")
        self.upload_form = UploadForm(on_stream=on_stream, say=say)
        self.options = W.HBox([self.seed, self.size])
        self.source.observe(self._on_source, names="value")
        self.load_button.on_click(self.load)
        self._on_source()

    def name(self, stream: Stream) -> None:
        """Show a built-in generator's stream under its name in the picker."""
        if stream.name in GENERATORS:
            self.source.value = stream.name

    def _on_source(self, _change: object = None) -> None:
        """An upload shows the upload form and hides the generators' options (seed, events) and the load button;
        a generator shows the options it takes."""
        name = self.source.value
        uploading = name == UPLOAD
        self.upload_form.show(uploading)
        accepted = inspect.signature(GENERATORS[name].make).parameters if name in GENERATORS else {}
        self.seed.layout.display = None if "seed" in accepted else "none"
        self.size.layout.display = None if "events" in accepted else "none"
        self.options.layout.display = None if {"seed", "events"} & set(accepted) else "none"
        self.load_button.layout.display = "none" if uploading else None

    def load(self, _button: object = None) -> None:
        """Generate the picked stream with the options its generator takes."""
        name = self.source.value
        if name in (None, UPLOAD):
            return
        accepted = inspect.signature(GENERATORS[name].make).parameters
        options = {k: v for k, v in (("seed", self.seed.value), ("events", self.size.value)) if k in accepted}
        try:
            self._on_stream(generate(name, **options))
        except InputError as exc:
            self._say(str(exc), True)

    def box(self) -> W.VBox:
        return W.VBox([W.HTML("<b>Data</b>"), self.source, self.options, self.load_button,
                       self.upload_form.box])
