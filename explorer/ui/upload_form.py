"""The upload form: a file in, its columns mapped and its time units stated, a Stream out.

Problems are shown in the form in the UI's words (the validation layer words its advice for the CLI: a flag
becomes the box that does the same), and a file that failed to parse leaves nothing to "use": the button is
disabled until a file reads.
"""

from __future__ import annotations

import html
import re
from typing import Callable

import ipywidgets as W

from explorer.errors import InputError
from explorer.streams import Stream, stream_from_frame
from explorer.streams.loading import TIME_COLUMNS
from explorer.streams.times import MICROS_PER
from explorer.streams.upload import COLUMN_NAMES, Upload, read_upload
from explorer.ui.words import plural

NONE = "(none)"
AUTO = "auto (detect)"
UPLOAD_LABEL = "upload a file"
# ipywidgets' FileUpload writes its own label as "description (number of files held)"; the form clears the files
# after reading them (so the same file can be sent again), which left "upload a file (0)" on the button. The
# page hides that text and shows the button's tooltip in its place: the label says what the form sets it to.
BUTTON_CSS = ("<style>.wx-upload{font-size:0 !important}"
              ".wx-upload::after{content:attr(title);font-size:var(--jp-widgets-font-size,13px)}"
              ".wx-upload i{font-size:var(--jp-widgets-font-size,13px);margin-right:4px}</style>")

# The CLI's advice, and what does the same in this form.
_CLI_ADVICE = [
    (re.compile(r"--time-unit (\w+)=(\w+)"), lambda m: f"set {m[1]} to {m[2]} in the box beside {m[1]} "
                                                         "(what its numeric times count)"),
    (re.compile(r"map yours with --event-time-col"), lambda m: "pick the column that holds it in the event_time box"),
    (re.compile(r"--([a-z]+)-time-col"), lambda m: f"pick it in the {m[1]}_time box"),
]


def in_ui_words(message: str) -> str:
    for pattern, advice in _CLI_ADVICE:
        message = pattern.sub(advice, message)
    return message


class UploadForm:
    """Upload → map → use. ``on_stream`` gets the Stream; ``say`` shows a message (error or not) to the user."""

    def __init__(self, on_stream: Callable[[Stream], None], say: Callable[[str, bool], None]):
        self._on_stream, self._say = on_stream, say
        self.upload = W.FileUpload(accept=".csv,.jsonl,.ndjson,.json,.parquet", multiple=False,
                                   description=UPLOAD_LABEL, tooltip=UPLOAD_LABEL,
                                   layout=W.Layout(width="auto"))  # as wide as the label it shows
        self.upload.add_class("wx-upload")
        self.mapping = {name: W.Dropdown(options=[NONE], description=name, style={"description_width": "7em"},
                                         layout=W.Layout(width="20em"))
                        for name in COLUMN_NAMES}
        # a time column's unit beside its box, unlabelled: the column's name is said once, by its box
        self.units = {name: W.Dropdown(options=[AUTO, *MICROS_PER], value=AUTO, layout=W.Layout(width="9em"),
                                       tooltip=f"what numbers in the {name} column count; auto reads epoch "
                                               "numbers by their size and ISO text by itself")
                      for name in TIME_COLUMNS}
        self.use = W.Button(description="use this file", icon="check", disabled=True)
        self.loaded: Upload | None = None
        rows = [W.HBox([box, self.units[name]]) if name in self.units else box for name, box in self.mapping.items()]
        self.box = W.VBox([W.HTML(BUTTON_CSS), self.upload,
                           W.HTML("map your columns (beside a time column: what its <i>numeric times count</i>):"),
                           *rows, self.use],
                          layout=W.Layout(display="none"))
        self.upload.observe(self._on_file, names="value")
        self.use.on_click(self.use_file)

    def show(self, visible: bool) -> None:
        self.box.layout.display = None if visible else "none"

    def _on_file(self, change: object = None) -> None:
        files = self.upload.value
        if not files:
            return
        item = files[0]
        try:
            self.take(item["name"], bytes(item["content"]))
        finally:
            # the browser sends nothing for a file equal to the last value: clear it, so the same file
            # (fixed, or re-exported under the same name) can be uploaded again
            self.upload.value = ()

    def take(self, name: str, content: bytes) -> None:
        """Read a file's bytes; on success fill the column boxes with the file's columns and our guesses."""
        self.loaded = None
        self.use.disabled = True
        try:
            upload = read_upload(name, content)
        except InputError as exc:
            self._fill([])
            self._say(in_ui_words(str(exc)), True)
            return
        self.loaded = upload
        self.upload.tooltip = "upload another file"
        self._fill(upload.columns, upload.guess_mapping())
        self.use.disabled = False
        self._say(f"{html.escape(name)}: {plural(len(upload.frame), 'row')}. Check the columns, then press "
                  "<i>use this file</i>.", False)

    def _fill(self, columns: list[str], guess: dict[str, str] | None = None) -> None:
        for ours, box in self.mapping.items():
            box.options = [NONE, *columns]
            box.value = (guess or {}).get(ours, NONE)
        for box in self.units.values():
            box.value = AUTO

    def columns(self) -> dict[str, str]:
        return {ours: box.value for ours, box in self.mapping.items() if box.value != NONE}

    def time_units(self) -> dict[str, str]:
        return {ours: box.value for ours, box in self.units.items() if box.value != AUTO}

    def use_file(self, _button: object = None) -> None:
        """Validate the mapped table into a Stream and hand it on, stating how each time column was read."""
        if self.loaded is None:
            return
        columns = self.columns()
        if "event_time" not in columns:
            self._say("choose the column that holds event time in the event_time box", True)
            return
        try:
            stream = stream_from_frame(self.loaded.frame, name=self.loaded.name, columns=columns,
                                       time_unit={columns[k]: v for k, v in self.time_units().items() if k in columns})
        except InputError as exc:
            self._say(in_ui_words(str(exc)), True)
            return
        self._on_stream(stream)
        read_as = "; ".join(f"{columns[c]} → {c}: {f.describe()}" for c, f in stream.time_formats.items())
        self._say(f"{html.escape(stream.name)}: {plural(len(stream), 'event')}. {html.escape(read_as)}", False)
